import ast
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from server.policy import answers, expected, transcript_trust
from server.policy import keywords as kw
from server.policy import rules as pol
from server.policy.rules import GREETING, MAX_TURNS, POLICY_NAME, UNCLEAR, PolicyReply, RulePolicy
from voice.dialogues import Dialogue, bundled_dialogues_path, load_dialogues

DIALOGUES = load_dialogues(bundled_dialogues_path())
GOODBYE = re.compile(r"再见|拜拜|挂了|走了")
DIGITS = re.compile(r"[0-9０-９零一二三四五六七八九十百千万两]")
ADDRESS = re.compile(r"地址是|住在|号楼|单元|小区|门牌|路\d|街")


def view(preset: str = "", ptype: str = "regular", **extra: Any) -> dict[str, Any]:
    return {
        "id": "t",
        "preset": {"type": ptype if preset else "none", "text": preset},
        "owner_goal": "",
        **extra,
    }


def blind_view(d: Dialogue) -> dict[str, Any]:
    """The assistant view without the scenario: the policy must work it out from the caller's words."""
    v = d.assistant_view()
    v.pop("scenario")
    return v


def play(policy: RulePolicy, d: Dialogue) -> list[tuple[str, PolicyReply]]:
    """Feed the caller turns until the policy hangs up; (caller text, reply) pairs."""
    out = []
    for turn in d.caller_turns:
        reply = policy.respond(turn.text)
        out.append((turn.text, reply))
        if reply.end_call:
            break
    return out


def imported(path: str) -> set[str]:
    """The top-level packages a source file imports from, but CallSim's own modules by full name."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {n if n.split(".")[0] in ("server", "voice") else n.split(".")[0] for n in names}


def test_name_and_module_purity():
    assert POLICY_NAME == "rule-v2"
    stdlib = {"__future__", "re", "unicodedata", "collections", "dataclasses", "typing"}
    # pure Python: no I/O libraries, no pipecat, nothing from the rest of CallSim but the policy's own keyword
    # tables, which are held to the same rule
    own = {
        "server.policy.keywords",
        "server.policy.answers",
        "server.policy.transcript_trust",
        "server.policy.expected",
    }
    assert imported(pol.__file__) <= stdlib | own
    assert imported(expected.__file__) <= stdlib | {"server.policy.keywords"}
    assert imported(kw.__file__) <= stdlib
    assert imported(answers.__file__) <= stdlib
    assert imported(transcript_trust.__file__) <= stdlib | {"server.policy.keywords"}


def test_reply_is_a_frozen_value():
    reply = PolicyReply("好的，再见。", end_call=True)
    assert (reply.text, reply.end_call) == ("好的，再见。", True)
    assert PolicyReply("好的。").end_call is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        reply.text = "x"  # type: ignore[misc]


def test_greeting_is_short_and_reveals_nothing_about_the_owner():
    policy = RulePolicy(view("我在医院陪护，有急事只接家人电话。", "emergent"))
    greeting = policy.greeting()
    assert greeting == GREETING and len(greeting) <= 40
    assert not re.search(r"医院|陪护|家人", greeting)


BAD_VIEWS = [
    None,
    {},
    {"preset": "我在开会"},
    {"preset": {"type": 3}, "scenario": 7},
    {"id": "default", "scenario": "", "preset": {"type": "none", "text": ""}},  # the server's fallback view
]


@pytest.mark.parametrize("bad_view", BAD_VIEWS)
def test_malformed_or_default_views_still_give_a_working_policy(bad_view):
    policy = RulePolicy(bad_view)
    assert policy.greeting() == GREETING
    assert policy.clauses == ()
    reply = policy.respond("喂，你好，我是他同事，有个事想跟他说。")
    assert reply.text and not reply.end_call


def test_a_preset_with_text_is_followed_even_if_labelled_none():
    policy = RulePolicy(
        view("外卖放门口就行。", "none") | {"preset": {"type": "none", "text": "外卖放门口就行。"}}
    )
    assert policy.preset_type == "regular"
    assert "门口" in policy.respond("喂，美团外卖，你的餐到了。").text


# --- preset parsing --------------------------------------------------------------------------------


def test_preset_clauses_are_rewritten_for_the_caller_and_scoped():
    policy = RulePolicy(view("外卖放门口就行，别敲门，我在开会。"))
    assert policy.clauses == ("外卖放门口就行", "别敲门", "机主在开会")
    scopes = [c.scope for c in pol.parse_preset("外卖放门口就行，别敲门，我在开会。")]
    assert scopes == [frozenset({"takeout"}), frozenset({"takeout"}), frozenset()]
    assert pol.parse_preset("让司机在楼下等我五分钟，我在收拾行李")[0].text == "请您在楼下等机主五分钟"
    assert pol.parse_preset("我在医院陪护我妈")[0].text == "机主在医院陪护家人"
    assert pol.parse_preset("今天都别打扰")[0].text == "今天都不方便接电话"


# --- behaviour on the bundled calls -------------------------------------------------------------------


@pytest.mark.parametrize("d", DIALOGUES, ids=lambda d: d.id)
@pytest.mark.parametrize("with_hint", [False, True], ids=["blind", "hinted"])
def test_policy_handles_every_bundled_call(d: Dialogue, with_hint: bool):
    policy = RulePolicy(d.assistant_view() if with_hint else blind_view(d))
    exchange = play(policy, d)
    replies = [r for _, r in exchange]
    for reply in replies:
        assert reply.text.strip() and kw.CJK.search(reply.text)
        assert len(reply.text) <= 45, reply.text
    assert len({r.text for r in replies}) == len(replies), "a reply was repeated word for word"
    assert replies[-1].end_call, "the call was never ended"

    if d.scenario == "harassment":
        assert policy.scenario == "harassment"
        fragments = {c[i : i + 2] for c in policy.clauses for i in range(len(c) - 1)} - {
            "机主",
            "电话",
            "有事",
        }
        for reply in replies:
            assert not DIGITS.search(reply.text) and not ADDRESS.search(reply.text), reply.text
            assert not any(f in reply.text for f in fragments), reply.text
        return

    # no premature hang-up: only the last caller line ends the call, and every goodbye line does
    assert len(exchange) == len(d.caller_turns)
    for text, reply in exchange:
        assert reply.end_call == (text == d.caller_turns[-1].text), (text, reply)
        if GOODBYE.search(text):
            assert reply.end_call
    if d.preset.type != "none":
        assert policy.relayed
        said = "".join(r.text for r in replies)
        assert any(clause in said for clause in policy.clauses), (policy.clauses, said)


def test_the_owners_situation_is_said_once_and_an_instruction_at_most_twice():
    # an instruction may be repeated once when the caller pushes back; the situation never is
    for d in DIALOGUES:
        policy = RulePolicy(blind_view(d))
        said = [r.text for _, r in play(policy, d)]
        for clause in pol.parse_preset(d.preset.text):
            times = sum(clause.text in s for s in said)
            instruction = bool(clause.scope) or clause.dropoff or clause.callback or bool(clause.channel)
            assert times <= (2 if instruction else 1), (d.id, clause, said)


# --- targeted behaviour -------------------------------------------------------------------------------


def test_traditional_script_input_is_understood():
    policy = RulePolicy(view("外卖放门口就行，我在开会。"))
    reply = policy.respond("喂，你好，美團外賣，你的餐到了。")
    assert reply.text == "外卖放门口就行，机主在开会。" and not reply.end_call


def test_a_preset_instruction_is_not_relayed_to_an_unrelated_caller():
    policy = RulePolicy(view("外卖放门口就行，我在开会。"))
    reply = policy.respond("喂，我是他同事，下午的项目会议改到四点了。")
    assert "开会" in reply.text and "外卖" not in reply.text and "门口" not in reply.text


def test_in_person_pushback_is_refused_politely_with_the_owners_instruction():
    policy = RulePolicy(view("外卖放门口就行，我在开会。"))
    policy.respond("喂，美团外卖，到你楼下了。")
    reply = policy.respond("放门口丢了不算我的啊，你还是下来当面拿吧。")
    assert reply.text.startswith("抱歉") and "放门口" in reply.text and not reply.end_call


def test_a_caller_proposal_is_accepted_when_no_preset_forbids_it():
    policy = RulePolicy(view())
    policy.respond("喂，快递到了，家里没人，放哪儿？")
    reply = policy.respond("驿站关门了，放门口行不行？")
    assert reply.text.startswith("可以") and "门口" in reply.text


def test_callback_requests_use_the_time_from_the_preset():
    policy = RulePolicy(view("我在开会，工作上的事请留言，下午三点后回电。"))
    policy.respond("我是他同事，方案评审改到四点了。")
    assert "三点后回电" in policy.respond("让他给我回个电话确认一下。").text


@pytest.mark.parametrize(
    "line",
    [
        "您好，我们这边有低息贷款，额度三十万，了解一下吗？",
        "恭喜您中奖了，奖金五万元，先交个税就行。",
        "我是京东客服，您的订单异常，需要给您理赔。",
        "我是公安局的，他涉嫌洗钱，需要核实身份证号。",
        "您好，平安保险给您推荐一款重疾险。",
        "麻烦把收到的验证码念一下。",
    ],
)
def test_harassment_is_declined_at_once_without_leaking_anything(line):
    preset = "我在医院陪护，住在阳光小区三号楼，有急事只接家人电话。"
    policy = RulePolicy(view(preset, "emergent"))
    reply = policy.respond(line)
    assert reply.end_call
    assert not DIGITS.search(reply.text) and not re.search(r"医院|陪护|阳光|小区|家人", reply.text)
    after = policy.respond("喂？别挂啊，就一分钟。")
    assert after.end_call and not DIGITS.search(after.text)


def test_a_scam_that_starts_innocently_is_caught_when_it_asks_for_secrets():
    policy = RulePolicy(view("我在开会。"))
    first = policy.respond("喂，你好，请问是机主本人吗？")
    assert not first.end_call
    reply = policy.respond("我这边要核实一下，麻烦报一下他的银行卡号。")
    assert reply.end_call and "不能提供" in reply.text


def test_private_questions_from_ordinary_callers_are_declined_without_hanging_up():
    policy = RulePolicy(view("我在开会。"))
    reply = policy.respond("你好，我是他同学，他手机号多少？住哪儿啊？")
    assert "不方便透露" in reply.text and not reply.end_call and not DIGITS.search(reply.text)


def test_unclear_speech_asks_again_and_gives_up_after_three_in_a_row():
    policy = RulePolicy(view())
    assert policy.respond("").text == UNCLEAR
    assert policy.respond("……").text == UNCLEAR
    last = policy.respond("字幕由Amara.org社区提供")  # a typical ASR hallucination
    assert last.end_call and last.text != UNCLEAR and policy.ended
    recovering = RulePolicy(view())
    for _ in range(5):  # a clear turn in between resets the count
        assert recovering.respond("Thank you.").text == UNCLEAR
        assert not recovering.respond("喂，你好，我是他同事。").end_call


def test_fillers_and_hellos_keep_the_line_open():
    policy = RulePolicy(view())
    assert policy.respond("喂？").text == "您好，请问有什么事？"
    assert not policy.respond("嗯……").end_call
    assert not policy.respond("好的").end_call  # nothing handled yet: not a goodbye
    assert not policy.respond("先别挂，我还有事。").end_call


@pytest.mark.parametrize(
    ("line", "closing"),
    [
        ("好的，谢谢，再见。", "不客气，再见。"),
        ("谢谢谢谢在见证，", "不客气，再见。"),  # as Whisper heard the goodbye on a busy machine
        ("行，那就这样。", "好的，再见。"),
        ("那你让他回个电话，我先挂了。", "好的，我会转告机主，再见。"),
    ],
)
def test_goodbyes_end_the_call_politely(line, closing):
    policy = RulePolicy(view())
    policy.respond("喂，我是他同事，项目的事想跟他说一下。")
    reply = policy.respond(line)
    assert (reply.text, reply.end_call) == (closing, True)
    assert policy.respond("喂？").end_call  # once ended, it stays ended


def test_a_settled_matter_ends_on_a_plain_thanks():
    policy = RulePolicy(view("快递放驿站，我晚上去取。"))
    policy.respond("中通快递，家里有人吗？")
    assert policy.respond("好的，谢谢啊。") == PolicyReply("不客气，再见。", end_call=True)


def test_repeated_pushback_gets_a_different_wording():
    policy = RulePolicy(view())
    policy.respond("滴滴司机，到上车点了。")
    first = policy.respond("这儿不能停车，要贴条的。")
    second = policy.respond("不能停车啊，快点。")
    assert first.text != second.text and not second.end_call


def test_a_rambling_call_is_wrapped_up():
    policy = RulePolicy(view())
    replies = [policy.respond(f"还有个事，项目第{i}部分要改一下。") for i in range(MAX_TURNS + 1)]
    assert not any(r.end_call for r in replies[:-1]) and replies[-1].end_call


# --- the cases that made it parrot (issue 13) --------------------------------------------------------


def test_a_wrong_number_is_told_so_then_confirmed_then_let_go():
    policy = RulePolicy(view("我在开会，工作上的事请留言，下午三点后回电。"))
    first = policy.respond("喂，是顺达物流的李经理吧？上周那批货的款什么时候打过来？").text
    assert "打错" in first and "不是顺达物流的李经理" in first
    assert "开会" not in first and "转告" not in first and "三点" not in first  # nothing about the owner
    assert "确定" in policy.respond("不会吧，这号码是他名片上的啊，你确定？").text
    bye = policy.respond("好吧，那打扰了。")
    assert bye.end_call and "再见" in bye.text


def test_a_car_repair_question_to_a_private_phone_is_a_wrong_number():
    policy = RulePolicy(view())
    reply = policy.respond("喂，我的车修好了没？下午能提吗？").text
    assert "打错" in reply and "记下" not in reply and "转告" not in reply


def test_an_emergent_cancel_is_what_the_driver_hears_whatever_he_says():
    policy = RulePolicy(view("我在医院陪家人看急诊，暂时不坐车了，帮我取消订单。", "emergent"))
    first = policy.respond("喂，我是滴滴司机，到小区门口了，人呢？").text
    assert "不坐车" in first and "麻烦您取消订单" in first
    hurry = policy.respond("快点啊，我这边不能久停。").text
    assert "取消" in hurry and "稍等" not in hurry and "催他" not in hurry


@pytest.mark.parametrize("ack", ["好", "嗯", "对", "行", "好的"])
def test_a_backchannel_never_ends_the_call(ack):
    policy = RulePolicy(view("外卖放门口就行，我在开会。"))
    policy.respond("你好，美团外卖，你的餐到了。")
    assert not policy.respond(ack).end_call
    assert not policy.respond(ack).end_call  # nor does a second one


def test_thanks_after_being_answered_still_closes_the_call():
    policy = RulePolicy(view("外卖放门口就行，我在开会。"))
    policy.respond("你好，美团外卖，你的餐到了。")
    assert policy.respond("好，谢谢啊。").end_call


def test_a_message_is_taken_with_its_facts_and_a_request_as_a_promise():
    policy = RulePolicy(view())
    policy.respond("喂，是我，老陈，周六聚餐他来不来啊？")
    reply = policy.respond("行，那个，就是，地方还是老地方，晚上六点。").text
    assert "老地方" in reply and "六点" in reply and "转告" in reply
    assert "今天给您回个话" in policy.respond("行，让他今天给我回个话。").text


def test_a_caller_who_only_reports_gets_no_account_of_the_owner():
    policy = RulePolicy(view("我在医院做检查，今天都别打扰，有急事找我爱人。", "emergent"))
    reply = policy.respond("你好，你的快递放丰巢了，取件码发你手机上了。").text
    assert "医院" not in reply and ("转告" in reply or "提醒" in reply)


# --- what it heard (issue 23: the demo read back a misheard turn, and answered a lone 嗯) -----------------

MISHEARD = "怎么没看到人，您车排尾号386别生得着"  # the demo's transcript of "我车牌尾号三八六，白色的车，…"
UNSURE = {"avg_logprob": -1.03, "no_speech_prob": 0.01, "compression_ratio": 0.69}  # Whisper's figures
SURE = {"avg_logprob": -0.26, "no_speech_prob": 0.01, "compression_ratio": 0.82}


def test_a_misheard_turn_is_never_read_back_the_caller_is_asked_to_repeat():
    policy = RulePolicy(view())
    policy.respond("喂，你好，我是滴滴司机，到上车点了，")
    assert policy.respond(MISHEARD, heard=UNSURE) == PolicyReply(UNCLEAR)
    again = policy.respond("您车排尾号386别生得着", heard=UNSURE).text  # misheard again: no second request
    assert again != UNCLEAR and "转告" in again and not any(w in again for w in ("别生", "车排", "386"))
    assert "386" in policy.respond("我车牌尾号386，白色的车就停在路边。", heard=SURE).text  # heard: said back


def test_a_doubtful_turn_the_policy_understands_is_answered_without_its_words():
    policy = RulePolicy(view("外卖放门口就行。"))
    assert "门口" in policy.respond("喂，外卖到了，放哪儿？", heard=UNSURE).text  # a question it knows
    wrong = RulePolicy(view())
    assert "王老师" not in wrong.respond("喂，是王老师吗？", heard=UNSURE).text  # a name it may have misheard
    proposal = RulePolicy(view())
    proposal.respond("你好，美团外卖。")
    assert "柜子" not in proposal.respond("放柜子里行不行？", heard=UNSURE).text


def test_a_confident_transcript_is_taken_as_before():
    sure, plain = RulePolicy(view()), RulePolicy(view())
    for line in ("喂，你好，我是滴滴司机，到上车点了，", MISHEARD):
        assert sure.respond(line, heard=SURE) == plain.respond(line)


@pytest.mark.parametrize("backchannel", ["嗯，", "嗯嗯。", "好。", "对对", "哦", "是", "行"])
def test_a_lone_backchannel_gets_no_reply(backchannel):
    policy = RulePolicy(view("外卖放门口就行，我在开会。"))
    assert policy.respond(backchannel) == PolicyReply("")  # after the greeting ("请问有什么事？")
    assert "门口" in policy.respond("你好，美团外卖，你的餐到了。").text
    assert policy.respond(backchannel) == PolicyReply("")  # after a reply it is listening to
    assert "谢谢" in policy.respond("那我放门口了。").text  # the call goes on where it was


def test_a_lone_yes_to_a_yes_no_question_is_an_answer():
    policy = RulePolicy(view())
    policy.respond("你好，我是他同事，项目的事。")
    assert policy.respond("好的").text == "好的，请问还有别的事吗？"
    assert policy.respond("嗯，").text == "嗯，您请说。"  # "嗯" to "anything else?": yes, go on
    wrong = RulePolicy(view())
    wrong.respond("喂，是王老师吗？")
    assert wrong.respond("嗯。").end_call  # "嗯" to "check the number, ok?"
