"""What the dialogue itself says about one reply's turn, beyond its annotations (checklist judge).

A user's dialogues are annotated thinly or not at all, but every call still gives the judge grounds: the
caller's turn asks, proposes or requests something (a reply must answer, confirm or route it), says
goodbye, says it is a wrong number (nothing to pass on to the owner), or carries the marks of a scam or a
sales call; the caller and the reference replies up to the turn say what is already known to the caller
(repeating it discloses nothing); the numbers said so far are the facts of the call.

:class:`Grounds` reads these off a dialogue and a caller-turn index, from the text alone (no annotation,
no model).  Each vocabulary is a plain tuple matched literally (:mod:`voice.text.matching`): by sound,
打错 would be heard in 大车.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from voice.dialogues import AssistantTurn, CallerTurn, Dialogue
from voice.text import matching as m

WRONG_NUMBER: tuple[str, ...] = (
    "打错了", "打错电话", "拨错", "打错号", "打错人", "找错人", "号码错了", "搞错号码", "不是找你们",
    "不是打给", "我打错", "我拨错",
)  # fmt: skip
# dialled someone else in other words: 我打成上一单乘客的电话了
_DIALLED_OTHER = re.compile(r"(?:打成|拨成)(?:了)?[^，。,.]{0,8}(?:电话|号码)")
# a reference reply telling the caller they have the wrong number (这边没有刘姐，您可能打错号码了)
TOLD_WRONG_NUMBER: tuple[str, ...] = (
    "打错", "拨错", "没有这个人", "这边没有叫", "这里没有叫", "没有这位", "不是您要找", "号码不对",
)  # fmt: skip
# the caller closing the call (beyond the assistant's goodbyes of voice.text.matching.GOODBYE)
CALLER_GOODBYE: tuple[str, ...] = (
    *m.GOODBYE,
    "走了啊",
    "先走了",
    "那我走了",
    "您忙",
    "你忙",
    "先忙",
    "没别的事",
    "打扰了",
    "明天见",
    "到时候见",
    "到时见",
    "回聊",
    "那就这样",
    "就这样吧",
    "先这样",
    "那我上去了",
    "那我过去了",
    "那我先去",
)
# the caller asks the line to hold while they check (你等一下啊，我看看): no time to hang up
HOLDING: tuple[str, ...] = (
    "我看看", "我看一下", "我查一下", "我查查", "我找找", "我找一下", "我翻一下", "我确认一下", "等一下啊",
    "你等一下", "您等一下", "稍等一下", "你稍等", "您稍等", "等我一下", "我问一下", "我问问",
)  # fmt: skip
# the caller's closing thanks at the end of a short turn (好的，那麻烦了，谢谢啊)
CLOSING_THANKS = re.compile(
    r"(?:谢谢|谢了|谢啦|多谢|麻烦了|麻烦你了|麻烦您了|辛苦了)(?:你|您)?(?:啊|哈|呀|了)?$"
)
CLOSING_THANKS_MAX = 14
# asking for something: a request or a proposal that needs a yes, a no or a next step
REQUEST: tuple[str, ...] = (
    "麻烦", "帮我", "帮忙", "请你", "请您", "你让他", "您让他", "让他", "告诉他", "跟他说", "转告", "叫他",
    "可以吗", "行吗", "好吗", "行不", "可以不", "要不", "怎么办", "咋办", "你看", "您看", "得签", "要签",
)  # fmt: skip
# the marks of a scam: what a fraudster asks for or threatens with
SCAM: tuple[str, ...] = (
    "验证码", "安全账户", "转账", "汇款", "保证金", "冻结", "涉嫌", "洗钱", "公安局", "检察院", "传票",
    "中奖", "理赔", "退保", "银行卡号", "卡号", "身份证号", "刷单", "解冻", "共享屏幕", "屏幕共享", "链接",
    "征信", "保释",
)  # fmt: skip
# the marks of a sales or nuisance call
SALES: tuple[str, ...] = (
    "推销", "贷款", "理财", "办卡", "保险", "课程", "辅导", "优惠", "额度", "利息", "楼盘", "投资", "股票",
    "会员", "免费体验", "试听", "促销", "活动价", "房源",
)  # fmt: skip
# a reply that is nothing but acknowledgement (the whole reply, punctuation and fillers aside)
BACKCHANNEL = frozenset(
    ("嗯", "嗯嗯", "好", "好的", "好吧", "哦", "噢", "喔", "行", "啊", "是吗", "这样啊", "哦这样啊", "知道了",
     "了解", "明白", "收到", "对", "是", "是的", "好嘞", "ok")
)  # fmt: skip
_FILLER = re.compile(r"^(?:哦|噢|嗯|啊|呃|唉|诶)+|(?:啊|呀|哦|吧|呢)+$")
THANKS_MAX = 8  # a caller turn this short that thanks is the caller's closing
BACKCHANNEL_CALLER_MIN = 6  # a caller turn this long or more, not a goodbye, is more than a backchannel


@dataclass(frozen=True)
class Grounds:
    """One caller turn (``dialogue.turns[index]``) and what the call says around it."""

    dialogue: Dialogue
    index: int  # the caller turn's index in dialogue.turns; -1 for a turn not from the script

    @property
    def caller_text(self) -> str:
        item = self.dialogue.turns[self.index] if 0 <= self.index < len(self.dialogue.turns) else None
        return item.text if isinstance(item, CallerTurn) else ""

    @property
    def reference(self) -> str | None:
        """The scripted reference reply to this caller turn, if any."""
        nxt = self.index + 1
        found = self.dialogue.turns[nxt] if self.index >= 0 and nxt < len(self.dialogue.turns) else None
        return found.text if isinstance(found, AssistantTurn) else None

    def _upto(self) -> list[CallerTurn | AssistantTurn]:
        end = self.index + 2 if self.index >= 0 else len(self.dialogue.turns)
        return list(self.dialogue.turns[:end])

    @property
    def known(self) -> str:
        """What the caller has said or been told by the reference replies up to and including this turn's
        reference, one turn a line: repeating it gives the caller nothing new."""
        return "\n".join(t.text for t in self._upto())

    @property
    def told(self) -> str:
        """What the reference replies up to and including this turn's told the caller: a fact the caller
        only guessed at (二院好多病房都用我们) is not theirs until a reply confirms it."""
        return "\n".join(t.text for t in self._upto() if isinstance(t, AssistantTurn))

    @property
    def caller_words(self) -> str:
        """Everything the caller said up to and including this turn."""
        return "\n".join(t.text for t in self._upto() if isinstance(t, CallerTurn))

    @property
    def recent_caller(self) -> str:
        """The caller's last two turns up to this one: what a question now would ask again."""
        said = [t.text for t in self._upto() if isinstance(t, CallerTurn)]
        return "\n".join(said[-2:])

    @property
    def earlier(self) -> str:
        """The call before this caller turn (the preset first): what a reply here carries over."""
        before = self.dialogue.turns[: max(self.index, 0)]
        return "\n".join([self.dialogue.preset.text or "", *(t.text for t in before)])

    @property
    def first(self) -> bool:
        """The caller's first turn: nothing of the call before it but the greeting."""
        return not any(isinstance(t, CallerTurn) for t in self.dialogue.turns[: max(self.index, 0)])

    @property
    def wrong_number(self) -> bool:
        """The caller said, in this turn or before, that they dialled the wrong number, or a reference reply
        up to this turn told them so."""
        return (
            _says_any(self.caller_words, WRONG_NUMBER)
            or bool(_DIALLED_OTHER.search(self.caller_words))
            or _says_any(self.told, TOLD_WRONG_NUMBER)
        )

    @property
    def goodbye(self) -> bool:
        """The caller closes the call: a goodbye, or a short thanks (行，谢谢啊)."""
        text = self.caller_text
        said = m.canonical(text)
        short_thanks = len(said) <= THANKS_MAX and "谢谢" in text
        closing = (
            len(said) <= CLOSING_THANKS_MAX
            and bool(CLOSING_THANKS.search(said))
            and not m.asks_question(text)
        )
        return short_thanks or closing or _says_any(text, CALLER_GOODBYE)

    @property
    def holding(self) -> bool:
        """The caller asks the line to hold while they check something (你等一下啊，我看看)."""
        return _says_any(self.caller_text, HOLDING) and not self.goodbye

    @property
    def needs_answer(self) -> bool:
        """The caller's turn asks, proposes or requests something (a question, 行吗, 麻烦您...)."""
        text = self.caller_text
        return bool(text) and not self.goodbye and (m.asks_question(text) or _says_any(text, REQUEST))

    @property
    def more_than_backchannel(self) -> bool:
        """The caller said something a bare 嗯 does not answer: long enough, not a goodbye or a thanks."""
        text = m.canonical(self.caller_text)
        return len(text) >= BACKCHANNEL_CALLER_MIN and not self.goodbye and not text.startswith("谢谢")

    @property
    def scam(self) -> bool:
        return _says_any(self.caller_words, SCAM)

    @property
    def sales(self) -> bool:
        return _says_any(self.caller_words, SALES)


def backchannel_only(text: str) -> bool:
    """The whole reply is an acknowledgement (嗯, 好, 哦，这样啊): nothing answered, confirmed or routed."""
    said = m.canonical(text)
    if said in BACKCHANNEL:
        return True
    bare = _FILLER.sub("", said)
    return bool(said) and (not bare or bare in BACKCHANNEL)


# what a brush-off is made of: acknowledgements, thanks, "I'll pass it on"
_BRUSH = (
    "我知道了", "知道了", "好的", "明白了", "明白", "收到", "谢谢您", "谢谢你", "谢谢", "转告机主", "转告他",
    "转告她", "转告", "跟机主说", "告诉机主", "这个情况", "这情况", "这件事", "这事", "机主", "行", "好",
    "嗯", "哦", "噢", "啊", "那", "太", "了", "我", "您", "你", "的", "吧", "呀",
)  # fmt: skip
ECHO_MIN = 2  # a stretch of the caller's own words this long, said back, is an echo


def brush_off(text: str, caller: str = "") -> bool:
    """The reply (its goodbye aside) says nothing but an acknowledgement, a thanks or "I'll pass it on"
    (好的，我知道了，我转告机主), or the ``caller``'s own words said back (哦，漏水啊，好的): no answer, no
    help, no next step."""
    said = m.canonical(text)
    for word in _BRUSH:
        said = said.replace(word, "")
    heard = m.canonical(caller)
    while said:
        echo = next((said[:n] for n in range(len(said), ECHO_MIN - 1, -1) if said[:n] in heard), None)
        if echo is None:
            return False
        said = said[len(echo) :]
    return True


@functools.lru_cache(maxsize=4096)
def _says_any(text: str, phrases: tuple[str, ...]) -> bool:
    return m.first_said(text, phrases, by_sound=False) is not None
