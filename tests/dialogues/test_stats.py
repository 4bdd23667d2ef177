import re

from tests.records import good
from voice.dialogues import parse_dialogue
from voice.dialogues.stats import dialogue_stats, format_stats


def test_stats_count_everything_and_keep_zero_cells():
    a = parse_dialogue(good("a"))
    b_obj = good("b")
    b_obj.update(scenario="work", relation="conflict", preset={"type": "none", "text": None})
    b = parse_dialogue(b_obj)
    stats = dialogue_stats([a, a, b])
    assert stats.dialogues == 3
    assert (
        stats.by_scenario["takeout"] == 2
        and stats.by_scenario["work"] == 1
        and stats.by_scenario["taxi"] == 0
    )
    assert stats.by_preset == {"regular": 2, "emergent": 0, "none": 1}
    assert stats.by_relation == {"alignment": 2, "complementarity": 0, "irrelevance": 0, "conflict": 1}
    assert stats.scenario_preset[("takeout", "regular")] == 2 and stats.scenario_preset[("work", "none")] == 1
    assert (stats.caller_turns, stats.assistant_turns) == (12, 15)
    assert (stats.barge_ins, stats.backchannels, stats.pauses_inside, stats.pauses_before) == (3, 3, 3, 3)
    text = format_stats(stats)
    assert re.search(r"^takeout\s+2\s+0\s+0\s+2$", text, re.M)
    assert re.search(r"^taxi\s+0\s+0\s+0\s+0$", text, re.M)
    assert re.search(r"^total\s+2\s+0\s+1\s+3$", text, re.M)
    assert re.search(r"^\s+conflict\s+1$", text, re.M)
    assert re.search(r"^\s+barge-ins\s+3$", text, re.M)


def test_stats_of_nothing_is_all_zero():
    stats = dialogue_stats([])
    assert stats.dialogues == 0 and set(stats.by_scenario.values()) == {0}
    assert "dialogues: 0" in format_stats(stats)
