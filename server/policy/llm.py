"""``--policy openai:MODEL``: the built-in assistant's replies from a chat model, streamed into its voice.

pipecat's own OpenAI-compatible LLM service (``OpenAILLMService``) does the talking to the server; this
module gives it a CallBench phone assistant to be and wires it into the built-in pipeline:

    … turns → LLMPolicyProcessor → OpenAILLMService → ReplyGate → TTS → output

- :class:`LLMPolicyProcessor` is the rules' processor with the model in place of ``respond``: the call's
  policy (:class:`~server.policy.llm_policy.LLMPolicy`, the same one ``load_policy_factory`` gives anyone)
  gives the system prompt and the fixed greeting, each finished caller turn becomes a user message.  An
  ``ErrorFrame`` from the model (server down, refused, timed out) gets a spoken fallback and an ``error``
  log: never silence, never a crash.
- :class:`ReplyGate` passes the model's tokens on as they stream, in clauses (cut at ，。！？； once four
  characters long: pipecat's own aggregator waits for a full stop, a whole sentence in Mandarin speech),
  so the first audio goes out after the first clause; it keeps what was said in the conversation
  (including a reply cut short by a barge-in, which cancels the stream and the queued audio as pipecat does),
  and turns the hang-up signal into a hang-up once the goodbye has been spoken.

The hang-up signal is the marker :data:`~server.policy.llm_policy.HANG_UP` at the end of a reply: plain text
works with every OpenAI-compatible server, including those without tool calls.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

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

from server.policy.llm_policy import FALLBACK, HANG_UP, LLMPolicy, LLMPolicyFactory
from server.policy.processor import DEFAULT_VIEW, PolicyLog, PolicyProcessor
from server.policy.rules import GREETING

logger = logging.getLogger(__name__)

MIN_CLAUSE = 4  # characters before a clause boundary may send the clause to the TTS
_BOUNDARY = re.compile(r"[，,。．！!？?；;：:]")


class LLMPolicyProcessor(PolicyProcessor):
    """The rules' processor, answering each finished turn through the model that follows it."""

    def __init__(self, context: LLMContext, policy_factory: LLMPolicyFactory, **kwargs: Any) -> None:
        """``policy_factory`` makes the call's :class:`LLMPolicy`: its prompt and greeting are used here, its
        (blocking, whole-reply) ``respond`` is not: the model's answer streams through the pipeline."""
        kwargs.setdefault("default_view", DEFAULT_VIEW)
        super().__init__(policy_factory, **kwargs)
        self.context = context

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, ErrorFrame) and direction == FrameDirection.UPSTREAM and not self.ended:
            await self._fallback(frame.error)
        await super().process_frame(frame, direction)

    async def _greet(self) -> None:
        if isinstance(self._policy, LLMPolicy):
            self.context.set_messages([{"role": "system", "content": self._policy.system}])
        await super()._greet()
        self.context.add_message({"role": "assistant", "content": GREETING})

    async def _answer_turn(self) -> None:
        transcripts: list[TranscriptionFrame] = self._take_turn()
        caller_text = "".join(t.text.strip() for t in transcripts)
        if self.ended or not caller_text:
            return
        if self._policy is None:
            await self._configure(self._default_view, source="default")
            await self._greet_silently()
        self.caller_turns.append(caller_text)
        self.context.add_message({"role": "user", "content": caller_text})
        await self._log({"kind": "caller", "text": caller_text}, transcripts)
        await self.push_frame(LLMContextFrame(self.context))

    async def _greet_silently(self) -> None:
        if isinstance(self._policy, LLMPolicy) and not self.context.get_messages():
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

    async def _log(self, payload: PolicyLog) -> None:
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
