"""The words a reply answers, routes, goes along, hands back or withholds with (checklist judge).

Plain tuples matched literally (:mod:`voice.text.matching`, not by sound), read by
:mod:`voice.metrics.scoring.grounded`: each names what a phrase *does* in a call, so a rule can ask whether
a reply answers (可以, 不行, 马上) or only routes (转告) without a phrase list of its own.
"""

from __future__ import annotations

# saying yes, no or how it will be: an answer to a question or a proposal
ANSWER: tuple[str, ...] = (
    "可以", "行", "好的", "没问题", "不行", "不可以", "不用", "不要", "不能", "没法", "没关系", "对", "是的",
    "不是", "没有", "当然", "就行", "就好", "不方便", "恐怕", "改", "换", "暂时", "先", "放", "送", "等",
    "好", "嗯", "谢谢", "用不上", "用不着", "不办", "不需要", "没事", "提醒", "让他", "一定", "马上", "立刻",
    "这就", "祝",
)  # fmt: skip
# passing the call on to the owner as a message
ROUTE: tuple[str, ...] = (
    "转告", "转达", "告诉机主", "跟机主说", "告诉他", "跟他说", "告诉她", "跟她说", "留言", "记下", "帮您记",
    "让他回电", "给您回电", "回您电话", "带个话", "传达", "说一声", "帮您问", "问问他",
)  # fmt: skip
# going along with a scammer or a salesman: taking the matter up instead of turning it away
GOING_ALONG: tuple[str, ...] = (
    "我记一下", "您稍等", "稍等", "我问一下", "我问问", "我帮您问", "转给您", "发给您", "我念", "我告诉您",
    "有兴趣", "感兴趣", "详细说说", "您说说", "加微信", "加个微信", "留个电话", "我去查", "马上转", "这就转",
    "我帮您转", "我转告", "帮您转告", "我给您", "好的，您说",
)  # fmt: skip
# passing a call on to the owner: what a wrong number's call must not be
TO_OWNER: tuple[str, ...] = (
    "转告", "转达", "告诉机主", "跟机主说", "和机主说", "留言", "让他回电", "让机主回", "给您回电",
    "回您电话", "带个话", "帮您传达", "记下了", "帮您记", "我跟他说", "我告诉他", "让他联系您", "等他回来",
)  # fmt: skip
# handing the matter back to the caller instead of dealing with it (您跟机主自己商量吧, 您找他本人吧)
HANDS_OFF: tuple[str, ...] = (
    "自己商量", "找他本人", "跟机主自己", "您自己跟", "自己联系他", "没法处理", "处理不了", "管不了",
)  # fmt: skip
# turning an offer down in any words (a sales call's answer)
TURN_DOWN: tuple[str, ...] = (
    "用不上",
    "用不着",
    "不感兴趣",
    "不考虑",
    "不办",
    "不需要",
    "不用了",
    "不要了",
    "算了",
)
# asking again what the caller already said
# (not 再说一遍 or 没听清: asking to hear the turn again is a failure to hear it, not a fact forgotten)
REASK: tuple[str, ...] = ("来着", "刚才说", "再确认一下", "最后是")
# keeping something back (号码我这边不方便核对)
WITHHOLD: tuple[str, ...] = ("不方便", "不能", "没法", "不好说", "不便")
