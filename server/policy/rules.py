"""The built-in assistant's dialogue policy: rule-based, preset-aware, pure Python (no I/O, no pipecat).

It answers a call on behalf of the device owner.  The owner's preset (e.g. "外卖放门口就行，我在开会。") is
split into clauses, each rewritten for the caller's ears (我 → 机主) and tagged with the scenarios it applies
to, so a takeout instruction is relayed to a rider but not to a colleague.  The scenario is inferred from
what the caller says (the view's scenario is only a fallback when the words say nothing): a benchmark
assistant must work it out, and a scam often starts by pretending to be something else.  Harassment
(sales, scams, fake police or customer service) is declined at once and the call is ended, without
revealing anything about the owner.

Replies stay short (phone-style, mostly ≤ 40 characters: the TTS speaks ~4.5 characters a second), and the
policy keeps per-call state (scenario, which preset clauses were relayed, repeated replies) so it neither
repeats itself nor forgets what it already said.  The words it listens for (scenario and harassment
keywords, what a caller's turn asks, what a preset clause is about) are in ``server.policy.keywords``.

It answers only what it heard (``server.policy.transcript_trust``): a turn that is only a backchannel ("嗯，")
gets no
reply (an empty ``text``) unless it answers a yes/no question, and a turn Whisper was unsure of is never read
back: if its words match nothing the policy listens for, the caller is asked to say it again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from server.policy import answers, expected, transcript_trust
from server.policy import keywords as kw

POLICY_NAME: Final = "rule-v2"
GREETING: Final = "您好，我是机主的电话助理，机主现在不方便接听，请问有什么事？"
UNCLEAR: Final = "不好意思，没听清，您能再说一遍吗？"
MAX_TURNS: Final = 10  # a scripted call has 2-5 caller turns; past this, wrap up rather than loop
MAX_UNCLEAR: Final = 3  # consecutive unintelligible turns before giving up on the line

_CLAUSE_SPLIT = re.compile(r"[，,。.；;！!？?、\n]+")
_DROP_SCENARIOS: Final = frozenset({"takeout", "delivery"})  # the caller leaves something for the owner
_ORDER_SCENARIOS: Final = _DROP_SCENARIOS | {"taxi"}  # the caller comes to the address of an order

_PERSON_REWRITES: Final[tuple[tuple[str, str], ...]] = (
    (r"^(?:你就|你|就)?(?:帮我)?(?:跟|和|告诉|对)(?:他|她|对方|他们)(?:说)?", ""),
    (r"^(?:你就|就)说", ""),
    (r"让(?:司机|骑手|快递员|快递小哥|外卖员|师傅|对方|他|她)", "请您"),
    (r"我(?:妈妈|爸爸|妈|爸|父母|家人)", "家人"),
    (r"我(?:爱人|老婆|老公|媳妇)", "我爱人"),
    (r"我(?:孩子|儿子|女儿)", "孩子"),
    (r"别打扰|不要打扰|勿扰", "不方便接电话"),
    (r"(?:帮我|替我)?取消", "麻烦您取消"),
    (r"帮我|替我", ""),
    (r"我们|我的|我", "机主"),
)
_ANYTHING_ELSE: Final = "好的，请问还有别的事吗？"
_ACKS: Final = ("好的，我记下了，会转告机主。", "明白，我都记下了，会转告他。", "好的，我一定转告机主。")
_SPEAK_LATER: Final = "抱歉，机主现在确实接不了，我马上转告他。"
_HURRY_REPLY: Final = "理解，麻烦您在附近能停的地方稍等，我催他尽快过去。"
_ALTERNATES: Final[Mapping[str, str]] = {
    _HURRY_REPLY: "好的，我马上催他，谢谢您耐心等。",
    _SPEAK_LATER: "我理解，但他现在确实接不了，我会第一时间转告。",
}
_WHERE_DEFAULTS: Final[Mapping[str, str]] = {
    "takeout": "麻烦您先放门口，我提醒机主来拿。",
    "delivery": "麻烦您先放驿站或快递柜，我转告机主去取。",
    "taxi": "好的，我马上通知机主，麻烦您稍等一下。",
}


@dataclass(frozen=True)
class PolicyReply:
    """One reply; ``end_call`` asks the line to hang up once ``text`` has been spoken.  An empty ``text``
    is no reply: the assistant says nothing and keeps listening."""

    text: str
    end_call: bool = False


@dataclass(frozen=True)
class _Clause:
    """One preset clause, rewritten for the caller; ``scope`` empty means it applies to any caller."""

    text: str
    scope: frozenset[str]
    dropoff: bool
    channel: str
    callback: bool
    cancel: bool = False  # the owner calls an order off ("帮我取消订单"): every answer to its sender says so


def _clause_scope(text: str) -> frozenset[str]:
    scenarios = kw.scenarios_in(text)
    if not scenarios and kw.DROPOFF.search(text):
        return _DROP_SCENARIOS
    return scenarios


def _third_person(clause: str) -> str:
    for pattern, repl in _PERSON_REWRITES:
        clause = re.sub(pattern, repl, clause)
    return clause


def parse_preset(text: str) -> tuple[_Clause, ...]:
    """Split a preset into caller-facing clauses; a clause with no scenario word inherits the previous one's
    scope ("外卖放门口，别敲门"), except situations ("我在开会"), which concern every caller."""
    clauses: list[_Clause] = []
    prev: frozenset[str] = frozenset()
    for raw in (c for c in _CLAUSE_SPLIT.split(kw.normalise(text)) if c):
        situation = bool(kw.SITUATION.search(raw))  # "我在开会" concerns every caller, whatever its words
        scope = frozenset() if situation else (_clause_scope(raw) or prev)
        channel = m.group(0) if (m := kw.CHANNEL.search(raw)) else ""
        rewritten = _third_person(raw)
        if rewritten:
            dropoff, callback = bool(kw.DROPOFF.search(raw)), bool(kw.CALLBACK_CLAUSE.search(raw))
            cancel = bool(answers.CANCEL.search(raw))
            clauses.append(_Clause(rewritten, scope, dropoff, channel, callback, cancel))
        prev = scope
    return tuple(clauses)


def _sentence(parts: list[str]) -> str:
    """Join clauses into one sentence, saying 机主 once and 他 after that."""
    text = "，".join(p for p in parts if p)
    first = text.find("机主")
    if first >= 0:
        text = text[: first + 2] + text[first + 2 :].replace("机主", "他")
    return text


class RulePolicy:
    """A per-call, rule-based assistant; build one per call from the dialogue's assistant view."""

    def __init__(self, view: Mapping[str, Any] | None = None) -> None:
        """``view`` is {"preset": {"type", "text"}, "owner_goal", "scenario"?}; malformed parts are tolerated
        (the server must still answer the call), and the scenario is only a fallback hint."""
        view = view or {}
        preset = view.get("preset")
        preset = preset if isinstance(preset, Mapping) else {}
        text = preset.get("text")
        text = text.strip() if isinstance(text, str) else ""
        ptype = str(preset.get("type") or "")
        # a preset with text is followed even if mislabelled "none"; one without text is "none"
        self.preset_type: str = (
            "none" if not text else (ptype if ptype in ("regular", "emergent") else "regular")
        )
        self.preset_text: str = text
        self.owner_goal: str = str(view.get("owner_goal") or "")
        hint = view.get("scenario")
        self._hint: str | None = hint if hint in kw.SCENARIO_WORDS or hint == "life" else None
        self._clauses = parse_preset(self.preset_text) if self.preset_type != "none" else ()
        self._relayed: set[int] = set()
        self._scenario: str | None = None
        self._turns = 0
        self._unclear = 0
        self._handled = False
        self._ended = False
        self._last = ""
        self._wrong: str | None = None  # whom the caller asked for, when it is not the owner
        self._said = ""  # the caller's last turn, normalised but with its punctuation
        self._doubt: str | None = None  # why the ASR may have misheard this turn (transcript_trust.doubt)

    # --- state, for the server log and tests ---------------------------------------------------------
    @property
    def scenario(self) -> str:
        """The scenario inferred so far ("life" until the caller's words say otherwise)."""
        return self._scenario or self._hint or "life"

    @property
    def relayed(self) -> bool:
        """Whether any part of the owner's preset has been passed on to the caller."""
        return bool(self._relayed)

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def clauses(self) -> tuple[str, ...]:
        """The preset as the policy would relay it, clause by clause."""
        return tuple(c.text for c in self._clauses)

    def expected_replies(self) -> tuple[str, ...]:
        """Texts this call's replies are likely to open with, known before the caller says anything: the
        fixed replies and openings, and the preset's clauses as the policy relays them (warmed in the
        TTS cache at the call's start: ``server/processors.py`` ``WarmRepliesFrame``)."""
        fixed = (GREETING, UNCLEAR, _ANYTHING_ELSE, *_ACKS, _SPEAK_LATER, _HURRY_REPLY, *_ALTERNATES.values())
        relayed = tuple(f"{c.text}，" for c in self._clauses)
        return (*expected.any_call(), *fixed, *_WHERE_DEFAULTS.values(), *relayed)

    # --- the call ------------------------------------------------------------------------------------
    def greeting(self) -> str:
        """The opening line; it says nothing about the owner because the caller is still unknown."""
        return GREETING

    def respond(self, caller_text: str, heard: transcript_trust.Heard | None = None) -> PolicyReply:
        """The reply to one finished caller turn; ``heard`` is the ASR's confidence in it, the worst of its
        segments' figures (``transcript_trust.worst``), when the transcriber gives one."""
        if self._ended:
            return PolicyReply("好的，再见。", end_call=True)
        p = kw.plain(caller_text)
        self._said = kw.normalise(caller_text)  # with its punctuation: clauses for answers.facts
        p = "好的" if p in ("ok", "okay") else p
        if not kw.CJK.search(p) or kw.HALLUCINATION.search(p):
            self._unclear += 1
            if self._unclear >= MAX_UNCLEAR:
                return self._end("信号不太好，我会转告机主您来过电话，再见。")
            return self._say(UNCLEAR)
        if transcript_trust.is_backchannel(p) and not transcript_trust.awaits_answer(self._last):
            return PolicyReply("")  # "嗯，": the caller is listening, not asking; let them go on
        self._unclear = 0
        self._turns += 1
        self._doubt = transcript_trust.doubt(heard)
        if decline := kw.harassment_reply(p):
            self._scenario = "harassment"
            return self._end(decline)
        if self._scenario is None:
            self._scenario = kw.infer_scenario(p)
        if self._wrong is not None:
            return self._wrong_number_again(p)
        known = self.preset_text + self.owner_goal
        if not self._handled and not self._doubt and (who := answers.wrong_number(self._said, known)):
            self._wrong, self._handled = who, True
            return self._say(f"您好，您可能打错了，这里不是{who}的电话，您核对一下号码好吗？")
        if kw.FILLER.fullmatch(p):
            return self._say("嗯，您请说。")
        if kw.HELLO.fullmatch(p):
            return self._say("我在听，您请讲。" if self._handled else "您好，请问有什么事？")
        ack_only = not kw.ACK_TOKENS.sub("", p)
        bye = bool(kw.GOODBYE.search(p)) and not kw.NO_HANGUP.search(p)
        thanked = ack_only and self._handled and kw.THANKS.search(p) is not None  # "好，谢谢啊": a closing
        if bye or thanked or (self._turns > 1 and len(p) <= 8 and "打扰了" in p):
            if kw.MESSAGE.search(p):
                return self._end("好的，我会转告机主，再见。")
            return self._end("不客气，再见。" if kw.THANKS.search(p) else "好的，再见。")
        if ack_only:  # a backchannel or an "ok" never ends the call: the caller may have more to say
            return self._say(_ANYTHING_ELSE if self._last != _ANYTHING_ELSE else "嗯，我在听，您请说。")
        if self._turns > MAX_TURNS:
            return self._end("我都记下了，会转告机主，先这样，再见。")
        if self._doubt and not transcript_trust.understood(p) and self._last != UNCLEAR:
            return self._say(UNCLEAR)  # once: a caller asked twice gets an answer that repeats nothing
        self._handled = True
        return self._say(self._answer(p))

    # --- internals -----------------------------------------------------------------------------------
    def _say(self, text: str) -> PolicyReply:
        self._last = text
        return PolicyReply(text)

    def _end(self, text: str) -> PolicyReply:
        self._ended = True
        self._last = text
        return PolicyReply(text, end_call=True)

    def _applies(self, clause: _Clause) -> bool:
        return self.scenario != "harassment" and (not clause.scope or self.scenario in clause.scope)

    def _wrong_number_again(self, p: str) -> PolicyReply:
        """After "you may have dialled the wrong number": confirm it, or say goodbye."""
        who = self._wrong
        if kw.GOODBYE.search(p) or kw.THANKS.search(p) or kw.SORRY.search(p):
            return self._end("没关系，再见。")
        if kw.DOUBT.search(p):
            return self._say(f"确定，这里不是{who}的电话，麻烦您再核对一下号码。")
        return self._end(f"这里不是{who}的电话，麻烦您核对一下号码，再见。")

    def _take_relay(self, specific_only: bool = False) -> tuple[str, bool]:
        """Unrelayed clauses that apply to this caller as one sentence (marked relayed), and whether one is
        specific to the caller's scenario (then it answers "where do I put it" by itself).
        ``specific_only``: only those (a caller who just reports something needs no account of the owner)."""
        fresh = [
            i
            for i, c in enumerate(self._clauses)
            if i not in self._relayed and self._applies(c) and (c.scope or not specific_only)
        ]
        self._relayed.update(fresh)
        return _sentence([self._clauses[i].text for i in fresh]), any(self._clauses[i].scope for i in fresh)

    def _told(self, kind: str) -> str:
        """Applicable preset clauses of one kind (dropoff, callback, channel), for when the caller asks
        again or pushes back: the instruction is repeated, the situation is not."""
        return _sentence([c.text for c in self._clauses if self._applies(c) and getattr(c, kind)])

    def _channel(self) -> str:
        """How the owner wants to be reached ("发短信"), from the preset, or ""."""
        return next((c.channel for c in self._clauses if c.channel and self._applies(c)), "")

    def _ack(self) -> str:
        options = [a for a in _ACKS if a != self._last]
        return options[self._turns % len(options)]

    def _answer(self, p: str) -> str:
        drop = self.scenario in _DROP_SCENARIOS
        if self.scenario in _ORDER_SCENARIOS and (cancel := self._told("cancel")):
            relay, _ = self._take_relay()  # an order called off: that is the answer, whatever was asked
            return self._fresh(f"抱歉，{relay or cancel}，给您添麻烦了。")
        in_person = drop and bool(kw.IN_PERSON.search(p))
        proposal = drop and bool(kw.PROPOSAL.search(p))  # "放门口行不行？" is a question, not pushback
        conflict = (
            in_person
            or (drop and not proposal and kw.REJECT_PLACE.search(p))
            or (self.scenario == "taxi" and kw.HURRY.search(p))
            or kw.SPEAK_NOW.search(p)
        )
        reports = not conflict and (kw.ACTION.search(p) is not None or kw.LOST.search(p) is not None)
        relay, specific = self._take_relay(specific_only=reports)
        if conflict:
            tail = self._fresh(self._conflict(p, drop))
            if not relay:
                return tail
            if specific:  # the owner's own instruction is the answer to the pushback
                return f"抱歉，{relay}。"
            if in_person:
                return f"抱歉，{relay}。{tail.removeprefix('抱歉，').replace('机主', '他')}"
            return f"抱歉，{relay}。我可以马上转告他。"
        answer, kind = self._intent(p, drop)
        if not relay:
            return self._fresh(answer)
        if "机主" in relay:
            answer = answer.replace("机主", "他")
        if kind == "where" and specific:
            return f"{relay}。"
        if kind == "when":
            return f"{relay}。我会让他尽快回复您。"
        if kind == "insist":
            return f"抱歉，{relay}。方便的话还是按这个来，谢谢。"
        if kind == "thanks":
            return f"谢谢您！{relay}。"
        if kind == "action":
            return f"好的，谢谢您。{relay}。"
        if kind == "ack":
            return f"好的，{relay}。我记下了，会转告他。"
        if kind == "request":
            return f"好的，{relay}。{answer.removeprefix('好的，')}"
        return f"好的，{relay}。{answer.removeprefix('好的，')}"

    def _fresh(self, answer: str) -> str:
        """Never say exactly the same thing twice in a row: a repeated push gets a different wording."""
        if answer != self._last:
            return answer
        return _ALTERNATES.get(answer) or self._ack()

    def _conflict(self, p: str, drop: bool) -> str:
        if drop and kw.REJECT_PLACE.search(p) and kw.IN_PERSON.search(p):
            return "明白，那麻烦您改天再送，我转告机主跟您约时间。"
        if drop and kw.IN_PERSON.search(p):
            where = self._told("dropoff") or "麻烦您先放门口或代收点"
            return f"抱歉，机主没法当面签收，{where}，谢谢。"
        if drop:
            return "明白，那麻烦您先放个安全的地方，我转告机主。"
        if kw.SPEAK_NOW.search(p):
            way = self._channel()
            return f"理解，我马上转告他，重要的事还是麻烦您{way}。" if way else _SPEAK_LATER
        return _HURRY_REPLY

    def _intent(self, p: str, drop: bool) -> tuple[str, str]:
        """A scenario-appropriate answer and its kind: where, when, action, thanks, insist, ack, other."""
        if drop and (m := kw.PROPOSAL.search(p)):
            told = self._told("dropoff")
            if told and m.group(1) not in told:
                return f"机主交代的是{told}，方便的话还是按这个来，谢谢。", "insist"
            where = "那儿" if self._doubt else m.group(1)  # a place it may have misheard is not said back
            return f"可以，那就麻烦放{where}，我会转告机主。", "other"
        if drop and kw.ACTION.search(p):
            return "好的，谢谢您，我会提醒机主去取。", "action"
        if kw.ADDRESS.search(p) and self.scenario in _ORDER_SCENARIOS:
            return "按订单上的地址就行，谢谢您。", "other"
        if kw.ADDRESS.search(p) or kw.PRIVATE.search(p):
            return "抱歉，这个不方便透露，我可以帮您转告机主。", "other"
        if kw.WHERE.search(p) or kw.ARRIVAL.search(p):
            told = self._told("dropoff") if drop else ""
            return (f"{told}，谢谢。" if told else _WHERE_DEFAULTS.get(self.scenario, self._ack())), "where"
        if kw.FIND.search(p):
            return "机主现在不方便接听，您有什么事，我可以转告。", "other"
        if kw.PAYMENT.search(p):
            way = self._channel()
            return (
                f"付款的事麻烦您{way}给机主。" if way else "费用的事我做不了主，我转告机主联系您。"
            ), "other"
        if kw.LOST.search(p):
            return "谢谢您！我转告机主，他会联系您。", "thanks"
        # "让他今天给我回个话"; a doubtful turn's words are not said back
        request = None if self._doubt else answers.request_for_owner(self._said)
        if kw.CALLBACK.search(p):
            when = self._told("callback")
            if when or not request:
                return (f"好的，我会转告他，{when}。" if when else "好的，我会转告机主尽快回复您。"), "other"
        if request:
            place = answers.dropoff_place(self._told("dropoff")) if drop else ""
            if place and "取" in request:
                return f"好的，我会提醒他去{place}取，谢谢您。", "request"
            return f"好的，我会转告他，{request.removeprefix('我会')}。", "request"
        if kw.URGENT.search(kw.NOT_URGENT.sub("", p)):
            return "明白，我马上转告机主。", "other"
        if kw.WHO.search(p):
            return "我是机主的电话助理，机主现在不方便接听。", "other"
        if kw.WHEN.search(p) or kw.STATUS.search(p):
            return "具体我不清楚，我记下来，让机主回复您。", "when"
        if not self._doubt and (said := answers.facts(self._said)):  # a message: its facts, said back
            return f"好的，{said}，我会转告机主。", "ack"
        return self._ack(), "ack"
