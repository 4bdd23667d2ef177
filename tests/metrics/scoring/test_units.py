from voice.metrics.scoring.units import content_units, private_mention, reasked, unit_clash


def test_times_are_read_as_units_whatever_the_words():
    units = content_units("好的，下周三晚上七点半，十分钟以后我再打给您，一两天内取走。")
    assert units["day"] == {"下周3"} and units["part"] == {"晚上"}
    assert units["clock"] == {"7:30"} and units["span"] == {"10分钟", "12天"}
    assert content_units("明晚8点")["day"] == {"明天"} and content_units("明晚8点")["part"] == {"晚上"}
    assert content_units("星期四下午")["day"] == content_units("周四下午")["day"] == {"周4"}
    assert content_units("稍等一点时间")["clock"] == set()  # 一点: a little, not one o'clock
    assert content_units("周五不行，周四可以")["day"] == {"周4"}  # a time denied is not stated


def test_a_time_other_than_the_references_is_misheard_or_mixed_up():
    ref = "好的，周四下午三点，我记下了。"
    clash = unit_clash("好的，周五上午，我记下了。", ref, call="周四下午或周五上午", caller="周四下午三点")
    assert clash is not None and clash.said == "周5" and clash.in_call and clash.just_said
    heard = unit_clash("好，两三天内取走。", "好，一两天内取走。", call="", caller="最好一两天内拿走")
    assert heard is not None and heard.said == "23天" and not heard.in_call
    assert unit_clash("好的，星期四下午3点。", ref, call="", caller="") is None  # the same time, other words
    assert unit_clash("好的，我记下了。", ref, call="", caller="") is None  # no time at all is not another


def test_asking_again_for_a_slot_the_caller_just_filled():
    assert reasked("那您大概几点送过来？", "好的，明天晚上七点半见。", "明天晚上七点半送过来", "") == "几点"
    assert reasked("您放在哪儿了？", "好的，谢谢。", "那我放架子上了", "") is not None
    said = reasked("请问是哪道菜卖完了？", "好的，我转告他。", "十分钟没回就退", "水煮鱼卖完了")
    assert said is not None and said.startswith("哪道菜")
    assert reasked("那您几点到？", "您大概几点到？", "我明天下午过来", "") is None  # the reference asks too
    assert reasked("您几点方便？", "好的。", "我是快递", "") is None  # nothing filled it


def test_health_or_whereabouts_beyond_the_references_words_is_told():
    ref = "他走得慢一点，麻烦您多等几分钟。"
    assert private_mention("他脚崴了，刚拍完片子，麻烦您多等几分钟。", ref, known="") is not None
    assert "whereabouts" in (private_mention("他在公司开会呢。", "他现在不方便。", known="") or "")
    assert private_mention("他人在医院呢，餐不要了。", "机主去医院了，餐不要了。", known="") is None
    assert private_mention("您说的急诊楼就在南边。", ref, known="我找不到急诊楼") is None  # the caller's word


def test_a_place_the_call_moved_from_said_as_before_and_a_place_ruled_out_proposed():
    from voice.metrics.scoring.units import changed_unit, ruled_out

    call = "乘客在T2到达层3号门等您\nT2不让停，我只能进P2停车场\n好的，那就P2"
    assert changed_unit("那您到T2给她打电话吧", call) == "says T2 where the call has since settled on P2"
    assert changed_unit("好的，P2见", call) is None
    assert changed_unit("别去T1，去P2", call) is None  # a place denied is not said
    caller = "驿站不收到付的，得我当面收钱才行。"
    assert ruled_out("好的，那就放驿站吧。", "那您什么时候再过来？", caller) == "驿站"
    assert ruled_out("那驿站就不放了，您明天再来吧。", "那您什么时候再过来？", caller) is None
    assert ruled_out("好的，那就放驿站吧。", "那就放驿站，机主去付。", caller) is None  # the reference does


def test_a_name_the_reference_would_not_confirm_spoken_of_as_the_owner():
    from voice.metrics.scoring.units import taken_for_owner

    caller = "喂，刘师傅吧？我家空调又不制冷了。"
    ref = "这边是电话助理，我没法确认机主是不是您要找的刘师傅，麻烦您核对一下号码。"
    assert taken_for_owner("好的，刘师傅现在不方便接，我转告他。", ref, caller) == "刘师傅"
    assert taken_for_owner("我这边没法确认是不是刘师傅，您再核对一下号码。", ref, caller) is None
    assert taken_for_owner("好的，刘师傅现在不方便接。", "好的，刘师傅在忙，我转告他。", caller) is None
