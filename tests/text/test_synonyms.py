from voice.text import matching as m
from voice.text.synonyms import ACTIONS, expand


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


def test_declining_in_any_modal_is_the_same_refusal():
    assert "不好说" in expand(["不方便说"]) and "没法替他" in expand(["不好替他"])
    assert m.first_said("家里的情况都不好说", expand(["不能说"])) is not None
    assert expand(["不好"]) == ("不好",)  # the modal alone is not replaced (不好 is also "not good")


def test_not_needing_hurrying_being_unsure_and_saying_are_each_one_act():
    assert m.first_said("保险也用不上", expand(["不需要"])) == "用不上"
    assert m.first_said("您抓紧过来", expand(["尽快过来"])) == "抓紧过来"
    assert m.first_said("这个我说不准", expand(["不确定"])) == "说不准"
    assert m.first_said("明天他会跟您讲", expand(["跟您说"])) == "跟您讲"
    assert m.first_said("退款我不管", expand(["不需要"])) is None  # nothing looser
