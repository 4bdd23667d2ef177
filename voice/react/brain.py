"""The reactive caller's mind: one chat request per decision, checked, cached, with a safe fallback.

:meth:`CallerBrain.decide` asks the model for the caller's next move given what it heard
(:mod:`voice.react.prompt`), holds the answer to the dialogue schema's bounds
(:mod:`voice.react.decision`; a refused answer goes back to the model with the reason, as the LLM client
does for every schema), and never fails the call: a server that cannot be reached, times out or keeps
answering badly gives way to the script — the dialogue's caller line with this index, with the next scripted
line's cues for the reply — or, when the script has no such line, to hanging up.  Every refusal and every
fallback is kept in the :class:`Decided` it returns, which the session logs as a ``caller_decision`` event.

Answers come from the LLM client's disk cache when the same model was asked the same question before (the
key covers the prompt version, the model, the persona and the heard history), so a rerun against an
assistant that behaved the same replays the same caller offline.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from voice.dialogues import CallerTurn, Dialogue
from voice.errors import EngineError, EngineOutputError
from voice.llm.cache import request_key
from voice.llm.client import ChatRequest, LLMClient, Message
from voice.react.decision import CallerDecision, output_schema, parse_decision
from voice.react.heard_so_far import HeardLine
from voice.react.persona import Persona
from voice.react.prompt import PROMPT_VERSION, SYSTEM_PROMPT, Situation, render_user

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Decided:
    """A decision and its provenance: llm (asked now or replayed), fallback_script or fallback_hangup."""

    decision: CallerDecision
    source: str
    rejected: str = ""  # the model's refused answers, why ("; "-joined)
    key: str = ""  # the LLM cache key of the request
    cached: bool = False  # replayed from the answer cache


class CallerBrain:
    """Decides one caller's moves in one call; ``timeout_s`` bounds each decision, fallbacks included."""

    def __init__(
        self, client: LLMClient, dialogue: Dialogue, persona: Persona, *, max_turns: int, timeout_s: float
    ) -> None:
        self.client = client
        self.dialogue = dialogue
        self.persona = persona
        self.max_turns = max_turns
        self.timeout_s = timeout_s

    def request(self, heard: Sequence[HeardLine], situation: Situation) -> ChatRequest:
        """The chat request for one decision (what is sent, and what the cache key is made of)."""
        user = render_user(self.dialogue, self.persona, heard, situation, self.max_turns)
        return ChatRequest(
            (Message("system", SYSTEM_PROMPT), Message("user", user)),
            schema=output_schema(),
            schema_name="caller_turn",
            prompt_version=PROMPT_VERSION,
            temperature=0.0,
        )

    async def decide(self, heard: Sequence[HeardLine], situation: Situation) -> Decided:
        """The caller's move; never raises for the model's sake (it falls back and says why)."""
        request = self.request(heard, situation)
        key = request_key(request.key_material(self.client.model))
        refused: list[str] = []
        interrupting = situation.reason == "interrupt"

        def check(data: Any) -> None:
            try:
                parse_decision(data, interrupting=interrupting, max_chars=self.persona.max_chars)
            except ValueError as exc:
                refused.append(str(exc))
                raise

        try:
            result = await asyncio.wait_for(self.client.achat(request, check=check), self.timeout_s)
        except (EngineError, TimeoutError) as exc:
            why = f"timed out after {self.timeout_s:g} s" if isinstance(exc, TimeoutError) else str(exc)
            log.warning("caller model failed on %s turn %d: %s", self.dialogue.id, situation.turn, why)
            problems = exc.problems if isinstance(exc, EngineOutputError) else tuple(refused)
            return self.fallback(situation, why, "; ".join(problems), key)
        decision = parse_decision(result.data, interrupting=interrupting, max_chars=self.persona.max_chars)
        if situation.reason == "debrief" and decision.action != "hang_up":
            return self.fallback(situation, "the debrief answer gave no verdict", "", key)
        # a replayed answer is logged as the model's, so a replay's event log is byte-identical
        return Decided(decision, "llm", "; ".join(refused), key, cached=result.cached)

    def fallback(self, situation: Situation, why: str, rejected: str = "", key: str = "") -> Decided:
        """The scripted line for this turn (cues for the reply from the one after it), else hanging up."""
        if situation.reason == "interrupt":
            return Decided(
                CallerDecision("wait", reason=f"fallback: {why}"), "fallback_script", rejected, key
            )
        script = self.dialogue.caller_turns
        if situation.reason != "debrief" and situation.turn < len(script):
            line = script[situation.turn]
            after = script[situation.turn + 1] if situation.turn + 1 < len(script) else None
            decision = CallerDecision(
                "say",
                turn=CallerTurn(line.text, line.pause_before_ms, pause_inside=line.pause_inside),
                backchannel=after.backchannel if after is not None else None,
                interrupt_after_ms=after.barge_in_ms if after is not None else None,
                reason=f"fallback: {why}",
            )
            return Decided(decision, "fallback_script", rejected, key)
        return Decided(CallerDecision("hang_up", reason=f"fallback: {why}"), "fallback_hangup", rejected, key)
