"""What the rules policy's replies open with whatever the call: known before the caller says a word.

The TTS speaks a reply's first clause first (:func:`server.processors.split_for_tts`), so a reply's first
audio is a cache hit when that clause was synthesized before.  These openings, the fixed replies that are
one piece, and the declines to harassment are warmed in the TTS cache behind every call's greeting
(:meth:`server.policy.rules.RulePolicy.expected_replies`, ``WarmRepliesFrame``), with the call's own fixed
replies and preset clauses.
"""

from __future__ import annotations

from typing import Final

from server.policy import keywords as kw

OPENINGS: Final = ("好的，", "抱歉，", "可以，", "明白，", "理解，", "谢谢，", "您好，", "嗯，", "我理解，")
CLOSINGS: Final = ("好的，再见。", "不客气，再见。", "谢谢您！", "嗯，我在听，您请说。", "嗯，您请说。")
FIXED: Final = ("按订单上的地址就行，谢谢您。", "具体我不清楚，我记下来，让机主回复您。")


def any_call() -> tuple[str, ...]:
    """The openings, closings, fixed one-piece replies and harassment declines, in that order."""
    return (*OPENINGS, *CLOSINGS, *FIXED, *(reply for _, reply in kw.HARASSMENT))
