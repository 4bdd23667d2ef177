from voice.metrics.scoring import matching as m
from voice.metrics.scoring.synonyms import ACTIONS, expand


def test_a_phrase_naming_an_action_also_matches_the_action_said_another_way():
    said = expand(["帮您取消"])
    assert said[0] == "帮您取消" and "帮您撤单" in said and "帮您退单" in said
    assert m.first_said("这趟车不要了，您那边撤单就行", expand(["取消"])) == "撤单"


def test_the_longest_word_of_a_group_is_the_one_replaced_and_nothing_else_is_invented():
    assert "回拨" in expand(["回电话"]) and "回拨话" not in expand(["回电话"])
    assert expand(["门卫室"]) == ("门卫室",)  # not an action of the table
    assert expand(["取消", "撤单"]).count("撤单") == 1  # duplicates dropped


def test_every_group_is_words_no_other_group_holds():
    words = [w for group in ACTIONS.values() for w in group]
    assert len(words) == len(set(words)) and all(len(group) >= 2 for group in ACTIONS.values())
