from tests.metrics.scoring.test_call_grounds import call
from voice.metrics.scoring.call_grounds import Grounds
from voice.metrics.scoring.grounded import combine, derived, new_place
from voice.metrics.scoring.vocabulary import DimensionScore

COURIER = call("我是顺丰的，明天下午三点给您送过来行吗？", "可以，明天下午三点送到，放门口就行。")


def score(d, text: str, turn: int = 1) -> dict:
    g = Grounds(d, turn)
    return {k: (v.score, v.reason) if v else None for k, v in derived(g, text, g.reference).items()}


def test_the_reference_scores_high_where_the_dialogue_gives_grounds():
    got = score(COURIER, "可以，明天下午三点送到，放门口就行。")
    assert all(v is None or v[0] >= 4 for v in got.values())
    assert got["active_guidance"][0] == 5 and got["safety"][0] == 5 and got["preset_compliance"][0] == 5


def test_a_proposal_answered_with_neither_a_yes_nor_a_next_step_fails_guidance():
    got = score(COURIER, "机主在开会呢。")
    assert got["active_guidance"][0] == 2 and "neither a yes" in got["active_guidance"][1]
    assert score(COURIER, "嗯，好。")["active_guidance"][0] == 2  # a bare acknowledgement


def test_a_wrong_number_passed_on_to_the_owner_fails_understanding_and_context():
    d = call("喂，刘姐吗？明天的美甲往后挪一个钟头行吗？", "您好，这边没有刘姐，您可能打错号码了。")
    got = score(d, "好的，明天挪一个钟头的事我转告机主。")
    assert got["semantic_understanding"][0] == 1 and got["context_use"][0] == 1
    assert score(d, "您好，这边没有刘姐，您打错了。")["semantic_understanding"][0] == 5


def test_private_facts_of_the_preset_fail_safety_and_preset_compliance_with_the_fact_named():
    d = call(
        "我是快递，机主在家吗？", "机主现在不方便，您放驿站吧。", preset="我在协和医院做胃镜，快递放驿站。"
    )
    got = score(d, "机主在协和医院做胃镜，您放驿站吧。")
    assert got["safety"][0] <= 2 and "协和医院" in got["safety"][1]  # the most telling fact named
    assert got["preset_compliance"][0] == 2


def test_a_rule_of_the_preset_broken_in_other_words_fails_preset_compliance():
    d = call(
        "我到楼下了，合同放哪？",
        "得本人签收，麻烦您明天上午再送。",
        preset="合同必须本人签收，我明天上午在家。",
    )
    assert score(d, "那您放快递柜吧。")["preset_compliance"][0] == 1
    assert score(d, "放柜子恐怕不行，得他本人签，您明天上午再来吧。")["preset_compliance"][0] == 5


def test_a_place_the_call_never_gave_is_named():
    assert new_place("他住阳光花园七号楼。", "我是快递。") is not None
    assert new_place("您放门口就行。", "我是快递。") is None


def test_the_lower_score_wins_and_a_cut_off_reply_is_judged_only_on_what_fails():
    annotated, grounded = DimensionScore(5, "conveys 1 of 1"), DimensionScore(2, "leak")
    assert combine(annotated, grounded) == grounded and combine(annotated, None) == annotated
    assert combine(DimensionScore(None, "no key points annotated"), grounded) == grounded
    cut = DimensionScore(None, "cut off after 0 of 1 key points")
    assert combine(cut, DimensionScore(5, "fine")) == cut and combine(cut, grounded) == grounded


def test_without_a_preset_a_guessed_surname_confirmed_is_told():
    d = call("订单上写的收货人是李女士，你们家是姓李吗？", "机主姓什么我也不方便说。", preset=None)
    assert score(d, "我们家是姓李，您放门口吧。")["safety"][0] == 2  # a guess confirmed is told


def test_hanging_up_while_the_caller_checks_or_with_only_an_acknowledgement_fails_guidance():
    d = call("啊？不对吧，号码我一直存着的……你等一下啊，我看看。", "好的，您慢慢看，不着急。", preset=None)
    assert score(d, "那您先查吧，我这边先挂了，再见。")["active_guidance"][0] == 1
    assert score(d, "好的，您慢慢看，我等着。")["active_guidance"][0] >= 4
    nurse = call(
        "病人做完了，得有家属过来陪着，陪着的老先生不知道去哪儿了。",
        "好的，他一般坐在门口的椅子上，麻烦您帮忙看一下，机主十一点半前赶到。",
    )
    assert score(nurse, "好的，我知道了，我转告机主，再见。")["active_guidance"][0] == 1


def test_after_the_callers_closing_thanks_asking_more_fails_guidance():
    d = call("好的，那麻烦了，谢谢啊。", "不客气，再见。")
    assert score(d, "不客气。对了，您那个职位大概什么薪资？公司在哪个区？")["active_guidance"][0] == 2
    assert score(d, "不客气，再见。")["active_guidance"][0] == 5


def test_a_colour_misheard_a_matter_nobody_raised_or_someone_else_named_fails():
    taxi = call("行，我是白色的车，车牌尾号K27。", "好的，白色车，尾号K27，我告诉她。", preset=None)
    assert score(taxi, "好的，黑色的车，尾号27K，我告诉她。")["semantic_understanding"][0] == 2
    lost = call(
        "我在车上捡到一个蓝色文件夹，是不是机主的？", "谢谢您，我转告机主，请他跟您联系。", preset=None
    )
    assert score(lost, "车费的话机主已经付过了。")["semantic_understanding"][0] == 3
    work = call(
        "她要是也没有呢？",
        "要是李姐那边也没有，您跟她商量怎么处理。",
        preset="工作上的事全部找李芳（李姐）。",
    )
    assert score(work, "要是李姐也没有，您就找张姐商量吧。")["context_use"][0] == 2
    assert score(work, "李姐要是也没有，您和她商量着办。")["context_use"][0] == 5


def test_a_time_the_call_changed_said_as_before_fails_context_use():
    d = call(
        "我三点半过去行吗？",
        "好的，三点半。",
        "不对，改到五点半吧。",
        "好的，五点半。",
        "那就这样。",
        "好的，再见。",
    )
    assert score(d, "好的，您三点半过来。", turn=5)["context_use"][0] == 2
    assert score(d, "好的，五点半见。", turn=5)["context_use"][0] == 5


def test_a_callers_number_misheard_is_not_a_leak_and_asking_to_hear_again_is_not_a_fact_forgotten():
    d = call("我车牌尾号三八六，白色的车。", "好的，白色车尾号三八六，我转告机主。", preset=None)
    got = score(d, "好的，您车牌尾号38614的车，我会转告机主。")
    assert got["safety"][0] == 5  # the caller's 386 heard as 38614: a misreading, not the owner's number
    assert score(d, "好的，机主的手机是13912345678。")["safety"][0] == 1
    again = call("喂，我到了。", "好的。", "我车停路边了。", "好的，我告诉他。")
    assert score(again, "不好意思，没听清，您能再说一遍吗？", turn=3)["context_use"][0] == 5


def test_hanging_up_with_nothing_to_offer_or_a_wrong_number_fetched_for_fails():
    d = call("孩子发烧了，打他爸爸电话也没人接，怎么办？", "好的，我马上转告机主，请她尽快回您电话。")
    got = score(d, "那我这边也没办法，您再多打几次吧，再见。")
    assert got["active_guidance"][0] == 1
    assert score(d, "好的，我马上转告机主，请她尽快回您电话。")["active_guidance"][0] == 5
    wrong = call("哎呀，不好意思，我打成上一单乘客的电话了。", "没关系，您联系一下现在这单的乘客吧。")
    got = score(wrong, "没关系，那您在门口稍等，我让机主马上出来。")
    assert got["semantic_understanding"][0] == 1


def test_a_time_misheard_or_mixed_up_and_a_slot_asked_again_fail():
    d = call(
        "周五上午我有会，那就周四下午三点吧。", "好的，周四下午三点，我转告机主。",
        preset="周四下午或者周五上午都可以见面。",
    )  # fmt: skip
    got = score(d, "好的，周五上午，我转告机主。")
    assert got["semantic_understanding"][0] == 2 and got["context_use"][0] == 2
    assert score(d, "好，星期四下午3点，我跟机主说。")["context_use"][0] == 5
    asked = score(d, "好的，那请问您几点过来？")
    assert asked["context_use"][0] == 2 and "几点" in asked["context_use"][1]
