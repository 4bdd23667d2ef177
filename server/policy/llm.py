"""``--policy openai:MODEL``: the built-in assistant's replies from a chat model, streamed into its voice.

pipecat's own OpenAI-compatible LLM service (``OpenAILLMService``) does the talking to the server; this
module gives it a CallBench phone assistant to be and wires it into the built-in pipeline:

    … turns → LLMPolicyProcessor → OpenAILLMService → ReplyGate → TTS → output

- :class:`LLMPolicyProcessor` is the rules' processor with the model in place of ``respond``: the call's
  assistant view becomes the system prompt (:func:`system_prompt`), each finished caller turn a user message,
  and the greeting is fixed (it says nothing before the caller is known).  An ``ErrorFrame`` from the model
  (server down, refused, timed out) gets a spoken fallback and an ``error`` log: never silence, never a crash.
- :class:`ReplyGate` passes the model's tokens on as they stream, in clauses (cut at ，。！？； once four
  characters long: pipecat's own aggregator waits for a full stop, a whole sentence in Mandarin speech),
  so the first audio goes out after the first clause; it keeps what was said in the conversation
  (including a reply cut short by a barge-in, which cancels the stream and the queued audio as pipecat does),
  and turns the hang-up signal into a hang-up once the goodbye has been spoken.

The hang-up signal is the marker :data:`HANG_UP` at the end of a reply: plain text works with every
OpenAI-compatible server, including those without tool calls.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any

from loguru import logger
from pipecat.frames.frames import (
    EndWorkerFrame,
    ErrorFrame,
    Frame,
    InterruptionFrame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    OutputTransportMessageUrgentFrame,
    TranscriptionFrame,
    TTSSpeakFrame,
)
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from server.policy.processor import DEFAULT_VIEW, TURN_TRANSCRIPTS, PolicyProcessor
from server.policy.rules import GREETING

PROMPT_VERSION = "callsim-assistant/1"
MIN_CLAUSE = 4  # characters before a clause boundary may send the clause to the TTS
_BOUNDARY = re.compile(r"[，,。．！!？?；;：:]")
HANG_UP = "[挂断]"
FALLBACK = "抱歉，我这边线路有点问题，我会转告机主您来过电话，再见。"

_RULES = f"""你是机主的 AI 电话助理，正在替机主接听电话。来电者听到的是你的语音。

规则：
- 你代表机主，但你不是机主；机主现在不方便接听。
- 机主的交代（预设）优先：紧急预设优先于平时的安排；照预设办，不要答应与预设相反的事。
- 只说来电者需要知道的；预设里的私事（去向、病情、住址等）除非对方需要才说；
  验证码、银行卡、身份证号等一律不说。
- 推销、诈骗、冒充客服或公检法的电话：礼貌拒绝，不透露任何信息，然后挂断。
- 对方找的不是机主（打错电话）：告诉对方可能打错了，请他核对号码，不要替别人转告。
- 不清楚对方要做什么时，先问清楚；对方留言时，把关键信息（时间、地点、数量）复述一遍并答应转告。
- 像打电话一样说话：每次一到两句、口语、简短，用普通话，不用列表、括号或表情。
- 通话该结束时（对方道别、事情办完、要挂断骚扰电话），说完道别的话后，在回复最后加上 {HANG_UP}。"""


def system_prompt(view: Mapping[str, Any]) -> str:
    """The model's instructions for one call, from its assistant view (never the caller's goal)."""
    preset = view.get("preset")
    preset = preset if isinstance(preset, Mapping) else {}
    kind = str(preset.get("type") or "none")
    text = str(preset.get("text") or "").strip()
    owner_goal = str(view.get("owner_goal") or "").strip()
    label = {"emergent": "紧急预设", "regular": "日常预设"}.get(kind, "")
    lines = [_RULES, ""]
    lines.append(f"机主的{label}：{text}" if text and label else "机主没有留下交代。")
    if owner_goal:
        lines.append(f"机主希望：{owner_goal}")
    return "\n".join(lines)


class LLMPersona:
    """What :class:`~server.policy.processor.PolicyProcessor` builds per call: the greeting and the prompt."""

    def __init__(self, view: Mapping[str, Any]) -> None:
        self.system = system_prompt(view)

    def greeting(self) -> str:
        return GREETING

    def respond(self, caller_text: str) -> Any:  # the model answers instead (LLMPolicyProcessor)
        raise NotImplementedError("the LLM policy's replies come from the model")


class LLMPolicyProcessor(PolicyProcessor):
    """The rules' processor, answering each finished turn through the model that follows it."""

    def __init__(self, context: LLMContext, **kwargs: Any) -> None:
        kwargs.setdefault("default_view", DEFAULT_VIEW)
        super().__init__(LLMPersona, **kwargs)
        self.context = context

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, ErrorFrame) and direction == FrameDirection.UPSTREAM and not self.ended:
            await self._fallback(frame.error)
        await super().process_frame(frame, direction)

    async def _greet(self) -> None:
        if isinstance(self._policy, LLMPersona):
            self.context.set_messages([{"role": "system", "content": self._policy.system}])
        await super()._greet()
        self.context.add_message({"role": "assistant", "content": GREETING})

    async def _answer_turn(self) -> None:
        transcripts: list[TranscriptionFrame] = self._transcripts
        caller_text = "".join(t.text.strip() for t in transcripts)
        self._transcripts = []
        self._in_turn = self._turn_stopped = False
        if self.ended or not caller_text:
            return
        if self._policy is None:
            await self._configure(self._default_view, source="default")
            await self._greet_silently()
        self.caller_turns.append(caller_text)
        self.context.add_message({"role": "user", "content": caller_text})
        await self._log({"kind": "caller", "text": caller_text}, {TURN_TRANSCRIPTS: transcripts})
        await self.push_frame(LLMContextFrame(self.context))

    async def _greet_silently(self) -> None:
        if isinstance(self._policy, LLMPersona) and not self.context.get_messages():
            self.context.set_messages([{"role": "system", "content": self._policy.system}])

    async def _fallback(self, error: str) -> None:
        logger.error(f"call {self.call_id}: the policy model failed: {error}")
        await self._log({"kind": "error", "message": f"policy model failed: {error}"})
        await self._say(FALLBACK, end_call=True, kind="fallback")


class ReplyGate(FrameProcessor):
    """Between the model and the TTS: streams the reply on, records it, and hangs up when told to."""

    def __init__(self, context: LLMContext, *, send_logs: bool = True, timeout_secs: float = 10.0) -> None:
        super().__init__()
        self.context = context
        self._timeout_secs = timeout_secs
        self._watchdog: asyncio.Task[None] | None = None
        self._reply = ""  # what has gone to the TTS of the current reply
        self._held = ""  # text that may be the start of the hang-up marker
        self._clause = ""  # text of the clause being written, not yet sent
        self._hang_up = False
        self._send_logs = send_logs
        self.replies: list[str] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMFullResponseStartFrame):
            self._reply, self._held, self._clause, self._hang_up = "", "", "", False
            await self.push_frame(frame, direction)
            await self._stop_watchdog()
            self._watchdog = self.create_task(self._watch(), "policy_watchdog")
        elif isinstance(frame, LLMTextFrame):
            await self._stop_watchdog()
            await self._text(frame.text)
        elif isinstance(frame, LLMFullResponseEndFrame):
            await self._stop_watchdog()
            await self._flush()
            await self.push_frame(frame, direction)
            await self._finish()
        elif isinstance(frame, InterruptionFrame):
            await self._stop_watchdog()
            if self._reply:  # cut short by the caller: the model should know what was (partly) said
                self.context.add_message({"role": "assistant", "content": self._reply + "……"})
                self._reply = ""
            self._held = self._clause = ""
            await self.push_frame(frame, direction)
        else:
            await self.push_frame(frame, direction)

    async def _watch(self) -> None:
        """A reply that has not begun after ``timeout_secs``: the fallback, said and logged, then hang up."""
        await asyncio.sleep(self._timeout_secs)
        self._watchdog = None
        logger.error(f"{self}: the policy model gave no reply within {self._timeout_secs:g}s")
        await self._log({"kind": "error", "message": f"policy model: no reply in {self._timeout_secs:g} s"})
        await self.push_frame(TTSSpeakFrame(FALLBACK, append_to_context=False))
        await self.push_frame(EndWorkerFrame(reason="the policy model did not answer"))

    async def _stop_watchdog(self) -> None:
        task, self._watchdog = self._watchdog, None
        if task is not None and task is not asyncio.current_task():
            await self.cancel_task(task)

    async def _log(self, payload: dict[str, Any]) -> None:
        if self._send_logs:
            await self.push_frame(OutputTransportMessageUrgentFrame(message={"event": "log", **payload}))

    async def _text(self, text: str) -> None:
        self._held += text
        if HANG_UP in self._held:
            self._hang_up = True
            self._held = self._held.replace(HANG_UP, "")
        cut = self._held.rfind("[")
        keep = self._held[cut:] if cut >= 0 and HANG_UP.startswith(self._held[cut:]) else ""
        out = self._held[: len(self._held) - len(keep)]
        self._held = keep
        self._clause += out
        while (
            m := next((b for b in _BOUNDARY.finditer(self._clause) if b.end() >= MIN_CLAUSE), None)
        ) is not None:
            await self._speak(self._clause[: m.end()])
            self._clause = self._clause[m.end() :]

    async def _speak(self, clause: str) -> None:
        if clause.strip():
            self._reply += clause
            await self.push_frame(TTSSpeakFrame(clause, append_to_context=False))

    async def _flush(self) -> None:
        await self._speak(self._clause + self._held)
        self._clause = self._held = ""

    async def _finish(self) -> None:
        reply = self._reply.strip()
        self._reply = ""
        if reply:
            self.replies.append(reply)
            self.context.add_message({"role": "assistant", "content": reply})
        await self._log({"kind": "reply", "text": reply, "end_call": self._hang_up})
        if self._hang_up:
            if not reply:
                await self.push_frame(TTSSpeakFrame("好的，再见。", append_to_context=False))
            await self.push_frame(EndWorkerFrame(reason="assistant hung up"))
