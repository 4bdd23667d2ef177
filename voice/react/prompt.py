"""What the reactive caller model reads: who it is, what it wants, the script as guidance, what it heard.

The user message is plain Mandarin in fixed sections (a model reads prose best, and a scripted test model
can still find its way by the section headers).  ``PROMPT_VERSION`` is part of every cache key: bump it
when the meaning of the prompt changes, so old answers are not replayed for a new question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from voice.core import events as ev
from voice.core.reactive import ReactiveCallCore
from voice.dialogues import CallerTurn, Dialogue
from voice.react.heard_so_far import HeardLine
from voice.react.persona import Persona

PROMPT_VERSION = "callsim-caller/1"

SCENARIO_NAMES = {
    "takeout": "外卖",
    "delivery": "快递",
    "taxi": "打车",
    "work": "工作",
    "life": "生活",
    "harassment": "骚扰",
}

SYSTEM_PROMPT = """你在扮演一个打电话的人。接电话的是机主的 AI 电话助理，它替机主接听。
你有自己的目标，要在通话里争取达成；你只知道你从电话里听到的内容（助理的话是语音识别的结果，可能有错字）。

规则：
- 每次只说一轮话，像真人打电话一样口语、简短，用普通话。
- 根据你听到的内容回应：助理问了问题就回答，助理说得不清楚或答非所问就追问，不要机械照念参考剧本。
- 参考剧本只用来参考风格和事实（地址、时间、单号等），不必照念，也不必说完。
- 目标达成、确定达不成、或者对方已经道别时，就挂断（action 为 hang_up），并用 goal 说明你的目标是否达成：
  yes（达成）、partly（部分达成）、no（没达成），reason 写一句原因。
- 如果问你要不要打断还在说话的助理：想打断就 say 你要插的话，不想打断就 wait。

只回答一个 JSON 对象，字段：
- action：say / hang_up / wait
- text：你要说的话（say 时必填，其它情况为空字符串）
- pause_before_ms：开口前停顿的毫秒数（0-10000），没有特别要求就填 null
- pause_inside：说到一半停顿：{"after": text 开头的一段原话, "ms": 300-5000}，不停顿填 null
- backchannel：助理下一次说话时你插的附和：{"text": "嗯"（最多4字）, "at_ms": 助理开口后的毫秒数}，
  不需要填 null
- interrupt_after_ms：如果助理下一次说话超过这么多毫秒（50-20000）你就打断它，不打算打断填 null
- goal：hang_up 时填 yes / partly / no，其它情况填 null
- reason：一句话说明你为什么这么做"""


@dataclass(frozen=True)
class Situation:
    """Why the caller is asked now: the call just began, a reply ended, one is still going, none came."""

    reason: str  # first, reply_ended, interrupt, reply_missed, debrief
    turn: int  # the caller turn being asked for
    talking_s: float = 0.0  # interrupt: how long the reply has gone on
    ended_by: str = ""  # debrief: how the call ended

    def render(self) -> str:
        if self.reason == "first":
            return "电话刚接通，对方还没说话。你先开口。"
        if self.reason == "interrupt":
            return (
                f"助理还在说话（已经说了 {self.talking_s:.1f} 秒）。你要打断它吗？打断就 say，不打断就 wait。"
            )
        if self.reason == "reply_missed":
            return "你说完以后助理一直没有回应。你说点什么，或者挂断。"
        if self.reason == "debrief":
            return f"通话已经结束（{self.ended_by}）。请用 hang_up 回答：你的目标达成了吗？"
        return "助理说完了，轮到你说话。"


def _script_line(turn: object) -> str:
    if isinstance(turn, CallerTurn):
        return f"来电者：{turn.text}"
    return f"助理：{getattr(turn, 'text', '')}"


def render_user(
    dialogue: Dialogue, persona: Persona, heard: Sequence[HeardLine], situation: Situation, max_turns: int
) -> str:
    """The user message for one decision."""
    lines = [
        f"场景：{SCENARIO_NAMES.get(dialogue.scenario, dialogue.scenario)}",
        f"你的目标：{dialogue.caller_goal}",
        f"你的性格：{persona.manner}（每次最多说 {persona.max_chars} 个字）",
        f"这是你的第 {situation.turn + 1} 轮话，最多 {max_turns} 轮。",
        "",
        "参考剧本（风格和事实的参考，不必照念）：",
        *(f"  {_script_line(t)}" for t in dialogue.turns),
        "",
        "到目前为止的通话（助理的话是你从电话里听到的）：",
        *([f"  {line.render()}" for line in heard] or ["  （还没有人说话）"]),
        "",
        f"现在：{situation.render()}",
    ]
    return "\n".join(lines)


def ended_by(core: ReactiveCallCore) -> str:
    """How the call ended, told to the caller asked for its verdict afterwards."""
    hung = [e for e in core.events if isinstance(e, ev.HungUp)]
    if hung and hung[-1].by == "assistant":
        return "助理挂断了电话"
    if core.outcome is not None and core.outcome.detail == "turn limit":
        return "你已经说到了轮数上限"
    if core.outcome is not None and core.outcome.failed:
        return f"通话出了问题（{core.outcome.reason}）"
    return "通话结束了"
