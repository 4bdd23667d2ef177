from voice.metrics.scoring.call_facts import asked_side, count_clash, number_clash, old_time, place_clash


def test_numbers_places_and_counts_the_call_settled_are_held_against_a_reply():
    assert number_clash("他住5栋。", "我在3栋楼下。") == "says 5栋 where the call had 3栋"
    assert place_clash("您在西门等吧。", "改到东门公交站吧。") is not None
    assert place_clash("北门不对，他在南门。", "在南门等。") is None  # the reply settles on 南门
    assert count_clash("十二杯都送过去。", "您那单十二杯\n剩下十杯还是送原地址") is not None


def test_an_old_time_is_the_one_the_call_changed_and_asking_for_a_side_again_is_seen():
    assert old_time("您三点半过来。", "我三点半过去\n改到五点半吧", "") == "3点"
    assert old_time("您五点半过来。", "我三点半过去\n改到五点半吧", "") is None
    assert asked_side("您车停在哪个门呀？") == "哪个门" and asked_side("您放门口吧。") is None
