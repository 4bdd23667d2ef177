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
repeats itself nor forgets what it already said.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

POLICY_NAME: Final = "rule-v1"
GREETING: Final = "您好，我是机主的电话助理，机主现在不方便接听，请问有什么事？"
UNCLEAR: Final = "不好意思，没听清，您能再说一遍吗？"
MAX_TURNS: Final = 10  # a scripted call has 2-5 caller turns; past this, wrap up rather than loop
MAX_UNCLEAR: Final = 3  # consecutive unintelligible turns before giving up on the line

# Traditional → simplified for the characters the rules look at (ASR may emit traditional script).
# Generated once from OpenCC's TSCharacters table, restricted to this module's vocabulary, so the policy
# needs no dictionary files at run time.
_T2S: Final = str.maketrans(
    "丟乾來係個們倖傢傳儘優兒別動務匯區員問單嗎噹嚴圓團報奬婦媽實審專對導師帶幫幹幾彆彙復徵愛戶掛擾時會朮東査條棟業榦樓樣機檢檯櫃氣沒況滙滿煩燒獎現異當發盡監確碼箇簽籤糰約給經綫網緊線緝總繫聯職聽臺處號術衕"
    "衛裏裡複見親覺觀訂記訴診証評話誒說説誰課請講謝證議護讓讚豐財貴貸費貼賠賣賬贊趕車輸轉辦迴這進運過達遞還郵醫銀銷錢鏡鐵門開間閤閱閲闆關險電韻項順領題額颱飛餓餵馬騎驗驛體髮麪麫麵麼麽點齣",
    "丢干来系个们幸家传尽优儿别动务汇区员问单吗当严圆团报奖妇妈实审专对导师带帮干几别汇复征爱户挂扰时会术东查条栋业干楼样机检台柜气没况汇满烦烧奖现异当发尽监确码个签签团约给经线网紧线缉总系联职听台处号术同"
    "卫里里复见亲觉观订记诉诊证评话诶说说谁课请讲谢证议护让赞丰财贵贷费贴赔卖账赞赶车输转办回这进运过达递还邮医银销钱镜铁门开间合阅阅板关险电韵项顺领题额台飞饿喂马骑验驿体发面面面么么点出",
)

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_NOT_WORD = re.compile(r"[^\w]|_")
_CLAUSE_SPLIT = re.compile(r"[，,。.；;！!？?、\n]+")

SCENARIO_WORDS: Final[Mapping[str, tuple[str, ...]]] = {
    "takeout": ("外卖", "骑手", "美团", "饿了么", "送餐", "取餐", "出餐", "你的餐", "餐到了", "外卖柜"),
    "delivery": ("快递", "包裹", "驿站", "丰巢", "快递柜", "顺丰", "中通", "圆通", "韵达", "申通", "邮政",
                 "京东物流", "到付", "取件", "签收", "寄件"),
    "taxi": ("司机", "打车", "滴滴", "上车", "车牌", "网约车", "快车", "专车", "出租车", "尾号", "接单",
             "等车", "停车", "导航", "行程"),
    "work": ("会议", "开会", "项目", "方案", "老板", "同事", "客户", "报销", "合同", "领导", "经理", "公司",
             "评审", "汇报", "财务", "人事", "工作", "总监", "主管", "上线", "加班"),
}  # fmt: skip
# Harassment, most specific first: each entry's reply declines without saying anything about the owner.
HARASSMENT: Final[tuple[tuple[tuple[str, ...], str], ...]] = (
    (("公安", "派出所", "警官", "法院", "检察院", "涉嫌", "洗钱", "通缉", "传票"),
     "电话里不提供任何信息，如有公务请通过官方渠道联系，再见。"),
    (("验证码", "银行卡", "卡号", "密码", "安全账户", "身份证"), "抱歉，个人信息和验证码都不能提供，再见。"),
    (("中奖", "抽中", "奖金", "领奖", "幸运用户"), "谢谢，机主不需要，也不会交任何费用，再见。"),
    (("客服", "理赔", "订单异常", "账户异常"), "有问题机主会通过官方渠道处理，电话里不办理，再见。"),
    (("贷款", "额度", "保险", "理财", "股票", "推销", "办卡", "信用卡", "征信", "刷单", "兼职", "优惠活动"),
     "谢谢，机主不需要，请不要再打来了，再见。"),
)  # fmt: skip

_GOODBYE = re.compile(
    r"再见|拜拜|挂了|先挂|挂啦|不打扰了|就这样(?:吧|了|啊)?$|先这样|没别的事|没事了|走了啊|我走了|先走了"
)
_NO_HANGUP = re.compile(r"别挂|不要挂|先别挂")
_THANKS = re.compile(r"谢|辛苦|麻烦你了|麻烦了")
_ACK_TOKENS = re.compile(
    r"好的|好嘞|好滴|行吧|没问题|知道了|明白了|明白|了解|可以|谢谢你|谢谢您|谢谢|谢了|辛苦了|辛苦|麻烦你了|麻烦了"
    r"|那就|好|行|嗯|那|啊|哈|吧|呀|哦|噢|ok"
)
_FILLER = re.compile(r"[嗯啊呃哦噢唔额哎诶欸喔呢]+")
_HELLO = re.compile(r"(喂|你好|您好|在吗|hello|hi)+")
_HALLUCINATION = re.compile(r"字幕|订阅|点赞|谢谢观看|谢谢收看|明镜|amara")
_MESSAGE = re.compile(r"让他|叫他|跟他说|告诉他|转告|提醒他|带个话|回电|回个电话|回个话|回我|联系我")

_IN_PERSON = re.compile(
    r"当面|本人签|签字|签收|下来拿|下楼拿|下来取|出来拿|出来取|开门|开个门|送上楼|送上去|亲手|你下来"
)
_REJECT_PLACE = re.compile(r"不能放|放不了|不让放|没法放|不好放|关门了|满了|贵重")
_SPEAK_NOW = re.compile(r"接电话|让他接|叫他接|本人接|找他本人|马上接|让他上线|上线一下|进会|打过来|亲自")
_HURRY = re.compile(r"不能停|没法停|停不了|贴条|取消|不等了|等不了|太久|快点|催")
_PROPOSAL = re.compile(
    r"放(?:在|到)?(.{1,6}?(?:里|那儿|那里)?)(?:行不行|可以吗|行吗|好吗|可不可以|成不成|成吗)"
)
_ACTION = re.compile(
    r"(?:我|那我|给你|帮你)(?:先|就)?(?:放|交给)|放好了|放了|已经放|放丰巢了|放驿站了|拍个?照"
)
_ADDRESS = re.compile(r"哪户|几号楼|门牌|哪栋|几单元|几楼|地址|住哪|住在哪")
_PRIVATE = re.compile(r"手机号|电话号码|号码多少|身份证|住址|住哪|住在哪|家在哪|在哪上班|单位在哪")
_WHERE = re.compile(
    r"放哪|放在哪|放什么地方|怎么放|有人在家|家里有人|在家吗|有人吗|你在哪|人在哪|在哪儿|哪个门|哪个口|位置"
)
_ARRIVAL = re.compile(r"到了|到楼下|到门口|到你家|到小区|快到|马上到|送到|在楼下|到上车点|到你楼下|到医院")
_FIND = re.compile(r"找一下他|找他|找机主|他在吗|他在不在|叫他听|让他听")
_PAYMENT = re.compile(r"到付|付钱|给钱|付款|运费|多少钱|加钱|等候费")
_LOST = re.compile(r"落在|落我|忘在|丢在|落下")
_CALLBACK = re.compile(r"回电|回个电话|回我电话|回个话|回复我|联系我|给我打|打给我|回我")
_URGENT = re.compile(r"急|尽快|赶紧|马上|严重|紧急|要紧")
_NOT_URGENT = re.compile(r"不急|不着急|不用急|别急")
_WHEN = re.compile(r"什么时候|几点|多久|啥时候|有没有空|有空吗|回来|来不来|去不去|能不能来")
_STATUS = re.compile(r"怎么样|情况|在干嘛|在忙什么|在忙吗|方便吗")
_WHO = re.compile(r"你是谁|你是哪位|机器人|是本人吗|是他本人|是机主吗|你是他")

_SITUATION = re.compile(
    r"^我(?:正|现在|今天|这会儿|目前|人)?在|^我(?:要|得|赶)|开会|医院|急诊|陪护|高铁|飞机|出差|加班|上班|开车"
    r"|输液|手术|检查|睡觉|上课|见客户|发烧|收拾"
)
_DROPOFF = re.compile(r"放|交给|门口|门卫|保安|驿站|快递柜|丰巢|外卖柜|前台|物业")
_CHANNEL = re.compile(r"发短信|发微信|留言|发消息")
_CALLBACK_CLAUSE = re.compile(r"回电|回复|回电话|回来处理|再打")
_PERSON_REWRITES: Final[tuple[tuple[str, str], ...]] = (
    (r"^(?:你就|你|就)?(?:帮我)?(?:跟|和|告诉|对)(?:他|她|对方|他们)(?:说)?", ""),
    (r"^(?:你就|就)说", ""),
    (r"让(?:司机|骑手|快递员|快递小哥|外卖员|师傅|对方|他|她)", "请您"),
    (r"我(?:妈妈|爸爸|妈|爸|父母|家人)", "家人"),
    (r"我(?:爱人|老婆|老公|媳妇)", "我爱人"),
    (r"我(?:孩子|儿子|女儿)", "孩子"),
    (r"别打扰|不要打扰|勿扰", "不方便接电话"),
    (r"帮我|替我", ""),
    (r"我们|我的|我", "机主"),
)
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
    """One reply; ``end_call`` asks the line to hang up once ``text`` has been spoken."""

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


def normalise(text: str) -> str:
    """ASR text in comparable form: NFKC (full-width → half-width), simplified script, no spaces, lower."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).translate(_T2S)).lower()


def plain(text: str) -> str:
    """Only letters and digits (CJK included): what the keyword rules match against."""
    return _NOT_WORD.sub("", normalise(text))


def infer_scenario(text: str) -> str | None:
    """The scenario a caller's words point to (harassment wins), or None when nothing matches."""
    p = plain(text)
    if _harassment_reply(p) is not None:
        return "harassment"
    hits = {s: sum(w in p for w in words) for s, words in SCENARIO_WORDS.items()}
    best = max(hits, key=lambda s: hits[s])
    return best if hits[best] else None


def _clause_scope(text: str) -> frozenset[str]:
    scenarios = frozenset(s for s, words in SCENARIO_WORDS.items() if any(w in text for w in words))
    if not scenarios and _DROPOFF.search(text):
        return frozenset({"takeout", "delivery"})
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
    for raw in (c for c in _CLAUSE_SPLIT.split(normalise(text)) if c):
        situation = bool(_SITUATION.search(raw))  # "我在开会" concerns every caller, whatever its words
        scope = frozenset() if situation else (_clause_scope(raw) or prev)
        channel = m.group(0) if (m := _CHANNEL.search(raw)) else ""
        rewritten = _third_person(raw)
        if rewritten:
            dropoff, callback = bool(_DROPOFF.search(raw)), bool(_CALLBACK_CLAUSE.search(raw))
            clauses.append(_Clause(rewritten, scope, dropoff, channel, callback))
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
        self._hint: str | None = hint if hint in SCENARIO_WORDS or hint == "life" else None
        self._clauses = parse_preset(self.preset_text) if self.preset_type != "none" else ()
        self._relayed: set[int] = set()
        self._scenario: str | None = None
        self._turns = 0
        self._unclear = 0
        self._handled = False
        self._ended = False
        self._last = ""

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

    # --- the call ------------------------------------------------------------------------------------
    def greeting(self) -> str:
        """The opening line; it says nothing about the owner because the caller is still unknown."""
        return GREETING

    def respond(self, caller_text: str) -> PolicyReply:
        """The reply to one finished caller turn."""
        if self._ended:
            return PolicyReply("好的，再见。", end_call=True)
        p = plain(caller_text)
        p = "好的" if p in ("ok", "okay") else p
        if not _CJK.search(p) or _HALLUCINATION.search(p):
            self._unclear += 1
            if self._unclear >= MAX_UNCLEAR:
                return self._end("信号不太好，我会转告机主您来过电话，再见。")
            return self._say(UNCLEAR)
        self._unclear = 0
        self._turns += 1
        if decline := _harassment_reply(p):
            self._scenario = "harassment"
            return self._end(decline)
        if self._scenario is None:
            self._scenario = infer_scenario(p)
        if _FILLER.fullmatch(p):
            return self._say("嗯，您请说。")
        if _HELLO.fullmatch(p):
            return self._say("我在听，您请讲。" if self._handled else "您好，请问有什么事？")
        ack_only = not _ACK_TOKENS.sub("", p)
        bye = bool(_GOODBYE.search(p)) and not _NO_HANGUP.search(p)
        if bye or (self._turns > 1 and len(p) <= 8 and "打扰了" in p) or (ack_only and self._handled):
            if _MESSAGE.search(p):
                return self._end("好的，我会转告机主，再见。")
            return self._end("不客气，再见。" if _THANKS.search(p) else "好的，再见。")
        if ack_only:
            return self._say("好的，请问还有别的事吗？")
        if self._turns > MAX_TURNS:
            return self._end("我都记下了，会转告机主，先这样，再见。")
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

    def _take_relay(self) -> tuple[str, bool]:
        """Unrelayed clauses that apply to this caller as one sentence (marked relayed), and whether one is
        specific to the caller's scenario (then it answers "where do I put it" by itself)."""
        fresh = [i for i, c in enumerate(self._clauses) if i not in self._relayed and self._applies(c)]
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
        drop = self.scenario in ("takeout", "delivery")
        in_person = drop and bool(_IN_PERSON.search(p))
        proposal = drop and bool(_PROPOSAL.search(p))  # "放门口行不行？" is a question, not pushback
        conflict = (
            in_person
            or (drop and not proposal and _REJECT_PLACE.search(p))
            or (self.scenario == "taxi" and _HURRY.search(p))
            or _SPEAK_NOW.search(p)
        )
        relay, specific = self._take_relay()
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
        return f"好的，{relay}。{answer.removeprefix('好的，')}"

    def _fresh(self, answer: str) -> str:
        """Never say exactly the same thing twice in a row: a repeated push gets a different wording."""
        if answer != self._last:
            return answer
        return _ALTERNATES.get(answer) or self._ack()

    def _conflict(self, p: str, drop: bool) -> str:
        if drop and _REJECT_PLACE.search(p) and _IN_PERSON.search(p):
            return "明白，那麻烦您改天再送，我转告机主跟您约时间。"
        if drop and _IN_PERSON.search(p):
            where = self._told("dropoff") or "麻烦您先放门口或代收点"
            return f"抱歉，机主没法当面签收，{where}，谢谢。"
        if drop:
            return "明白，那麻烦您先放个安全的地方，我转告机主。"
        if _SPEAK_NOW.search(p):
            way = self._channel()
            return f"理解，我马上转告他，重要的事还是麻烦您{way}。" if way else _SPEAK_LATER
        return _HURRY_REPLY

    def _intent(self, p: str, drop: bool) -> tuple[str, str]:
        """A scenario-appropriate answer and its kind: where, when, action, thanks, insist, ack, other."""
        if drop and (m := _PROPOSAL.search(p)):
            told = self._told("dropoff")
            if told and m.group(1) not in told:
                return f"机主交代的是{told}，方便的话还是按这个来，谢谢。", "insist"
            return f"可以，那就麻烦放{m.group(1)}，我会转告机主。", "other"
        if drop and _ACTION.search(p):
            return "好的，谢谢您，我会提醒机主去取。", "action"
        if _ADDRESS.search(p) and self.scenario in ("takeout", "delivery", "taxi"):
            return "按订单上的地址就行，谢谢您。", "other"
        if _ADDRESS.search(p) or _PRIVATE.search(p):
            return "抱歉，这个不方便透露，我可以帮您转告机主。", "other"
        if _WHERE.search(p) or _ARRIVAL.search(p):
            told = self._told("dropoff") if drop else ""
            return (f"{told}，谢谢。" if told else _WHERE_DEFAULTS.get(self.scenario, self._ack())), "where"
        if _FIND.search(p):
            return "机主现在不方便接听，您有什么事，我可以转告。", "other"
        if _PAYMENT.search(p):
            way = self._channel()
            return (
                f"付款的事麻烦您{way}给机主。" if way else "费用的事我做不了主，我转告机主联系您。"
            ), "other"
        if _LOST.search(p):
            return "谢谢您！我转告机主，他会联系您。", "thanks"
        if _CALLBACK.search(p):
            when = self._told("callback")
            return (f"好的，我会转告他，{when}。" if when else "好的，我会转告机主尽快回复您。"), "other"
        if _URGENT.search(_NOT_URGENT.sub("", p)):
            return "明白，我马上转告机主。", "other"
        if _WHO.search(p):
            return "我是机主的电话助理，机主现在不方便接听。", "other"
        if _WHEN.search(p) or _STATUS.search(p):
            return "具体我不清楚，我记下来，让机主回复您。", "when"
        return self._ack(), "ack"


def _harassment_reply(p: str) -> str | None:
    """The decline for the first harassment pattern the caller's words match, or None."""
    return next((reply for words, reply in HARASSMENT if any(w in p for w in words)), None)
