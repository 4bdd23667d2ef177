from voice.text.forms import forms


def test_a_verb_said_briefly_is_also_said_reduplicated():
    assert forms("对1下") == ("对1下", "对对", "对1对")
    assert forms("再看1下号码") == ("再看1下号码", "再看看号码", "再看1看号码")
    assert forms("看看") == ("看看", "看1下")
    assert forms("12下") == ("12下",)  # a digit is not a verb


def test_giving_or_telling_someone_puts_the_person_either_side_of_the_verb():
    assert forms("给您念") == ("给您念", "念给您")
    assert forms("发给您") == ("发给您", "给您发")
    assert forms("给他打电话") == ("给他打电话", "打电话给他")
    assert forms("交给家里人") == ("交给家里人",)  # not a pronoun: left as it is
