"""Plain-text tables: columns aligned by display width, CJK characters two columns wide."""

from voice.text.table import display_width, text_table


def test_cjk_takes_two_columns():
    assert display_width("ab") == 2 and display_width("快递") == 4 and display_width("快a") == 3


def test_columns_line_up_with_chinese_cells_and_a_footer():
    table = text_table(["场景", "n"], [["外卖", "3"], ["taxi", "12"]], footer=["all", "15"])
    lines = table.splitlines()
    assert lines[0] == "场景  n" and lines[1] == "----  --"
    assert lines[2] == "外卖  3" and lines[3] == "taxi  12"
    assert lines[4] == lines[1] and lines[5] == "all   15"
