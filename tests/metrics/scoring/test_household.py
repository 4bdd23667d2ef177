from voice.metrics.scoring.household import income, personal_fact


def test_the_households_health_home_and_surname_are_found_where_the_call_never_raised_them():
    assert personal_fact("他这两天胃病犯了，在医院挂水呢。", "") is not None
    assert personal_fact("家里就老人一个人在。", "") is not None
    assert personal_fact("您放门口就行。", "") is None
    assert personal_fact("我们家是姓李。", "订单上写的是李女士") is not None


def test_when_the_home_stands_empty_is_private():
    said = personal_fact("家里现在没人，两口子白天都上班，晚上七点以后家里才有人。", "")
    assert said is not None and "empty" in said
    assert personal_fact("晚上七点以后家里才有人。", "") is not None
    assert personal_fact("您好，您放门口就行，他晚点自己拿。", "") is None


def test_what_the_owner_earns_is_private_unless_the_call_said_it():
    assert income("他现在年薪大概六七十万吧。", "") is not None
    assert income("工资的事我不清楚。", "") is None  # no sum told
    assert income("年薪三十万是吧，我转告他。", "您这个岗位年薪三十万") is None  # the caller's figure
    assert personal_fact("他年薪大概六七十万。", "") is not None
