import pytest

from server.policy import keywords as kw


def test_normalise_folds_traditional_script_and_full_width():
    assert kw.normalise("外賣到了，ＯＫ 嗎？") == "外卖到了,ok吗?"
    assert kw.plain(" 喂，你好！美團外賣。") == "喂你好美团外卖"


@pytest.mark.parametrize(
    ("text", "scenario"),
    [
        ("喂，美团外卖，你的餐到了", "takeout"),
        ("你好，我是骑手", "takeout"),
        ("中通快递，有个包裹", "delivery"),
        ("放丰巢了，取件码发你了", "delivery"),
        ("我是滴滴司机，到上车点了", "taxi"),
        ("下午的方案评审改时间了", "work"),
        ("你好，我们这边做低息贷款的", "harassment"),
        ("您好我是京东客服，快递丢了给您理赔", "harassment"),
        ("麻烦报一下验证码", "harassment"),
        ("我是派出所的", "harassment"),
        ("妈问你今晚回不回来吃饭", None),
    ],
)
def test_scenario_is_inferred_from_the_callers_words(text, scenario):
    assert kw.infer_scenario(text) == scenario


def test_scenarios_in_names_every_scenario_a_clause_mentions():
    assert kw.scenarios_in("外卖放门口快递放驿站") == {"takeout", "delivery"}
    assert kw.scenarios_in("我在医院陪护") == frozenset()


def test_the_first_matching_harassment_entry_gives_the_decline():
    police, secrets = kw.HARASSMENT[0][1], kw.HARASSMENT[1][1]
    assert kw.harassment_reply(kw.plain("我是公安局的，请提供银行卡号")) == police
    assert kw.harassment_reply(kw.plain("麻烦报一下验证码")) == secrets
    assert kw.harassment_reply(kw.plain("外卖到了")) is None
