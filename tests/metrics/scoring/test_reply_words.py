from voice.metrics.scoring import reply_words
from voice.metrics.scoring.grounded import addressed, hands_off, to_owner


def test_every_table_is_a_tuple_of_distinct_phrases():
    tables = {k: v for k, v in vars(reply_words).items() if k.isupper() and isinstance(v, tuple)}
    assert {
        "ANSWER",
        "ROUTE",
        "GOING_ALONG",
        "TO_OWNER",
        "HANDS_OFF",
        "TURN_DOWN",
        "REASK",
        "WITHHOLD",
    } <= set(tables)
    for name, phrases in tables.items():
        assert phrases and all(p.strip() == p and p for p in phrases), name
        assert len(set(phrases)) == len(phrases), name


def test_the_tables_say_what_a_reply_does():
    assert addressed("可以，您放门口吧。") and not addressed("机主在开会呢。")
    assert (
        to_owner("好的，我转告机主。")
        and to_owner("您稍等，我让机主马上出来。")
        and not to_owner("您打错了。")
    )
    assert hands_off("那我这边也没办法，再见。") and not hands_off("密码没办法告诉您。")
