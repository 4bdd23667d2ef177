"""What a reference assistant does and sounds like: its spec, checked for causality, and its reply audio.

A reference assistant (:mod:`server.assistants.reference`) behaves exactly as a :class:`ReferenceBehaviour`
says, and the fidelity bench rebuilds what it should have heard from the same spec
(:mod:`voice.app.benchmarks.fidelity.truth`, :mod:`voice.app.benchmarks.fidelity.score`).  This module is that
shared
contract, kept apart from the websocket server so that the truth and the scoring depend on the rules alone,
never on the assistant's runtime.  It sits beside the assistant it specifies (the server imports what it
serves with, never a benchmark); the bench, which needs both sides, imports it from here.

Causality limits what can be asked (checked on construction): a reply cannot be heard before the silence that
ends the turn has been received, nor a stop before the speech that causes it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Required, TypedDict

import numpy as np

from voice.contract.policy import AssistantView
from voice.core.audio import SAMPLE_RATE, Pcm, float_to_pcm16, ms_to_samples

DECISION_MARGIN_MS = 40.0  # a decision needs the 20 ms frame that holds it, plus transport and scheduling
CONFIRM_MARGIN_MS = 100.0  # a barge-in is confirmed within this of ``confirm_ms`` (syllable gaps, a frame)
REPLY_GAP_MS = 400.0  # replies are never closer than this: heard as two speech runs, not one


class BehaviourSpec(TypedDict):
    """A :class:`ReferenceBehaviour` as JSON: its fields by name (``start.dialogue.reference``)."""

    reply_ms: float
    stop_ms: float | None
    takeover_pauses: bool
    stop_on_backchannel: bool
    greeting_ms: float | None
    reply_len_ms: float
    endpoint_ms: float | None
    confirm_ms: float
    hangup_after_turns: int | None


class ReferenceView(AssistantView, total=False):
    """The assistant view the fidelity bench sends a reference assistant: the call's, and the behaviour to
    play as ``reference`` (a reference assistant without one plays its server's default)."""

    reference: BehaviourSpec


@dataclass(frozen=True)
class ReferenceBehaviour:
    """What a reference assistant does; every figure in ms on the caller's timeline.

    ``endpoint_ms`` is the silence after which caller speech is a finished turn: by default 200 ms with
    ``takeover_pauses`` (it answers into a pause) and 2500 ms without (it sits through any scripted pause);
    replies need ``reply_ms >= endpoint_ms + DECISION_MARGIN_MS``.  Caller speech shorter than
    ``confirm_ms`` is a backchannel: never answered, and it stops the reply only with
    ``stop_on_backchannel``; otherwise a stop needs the speech confirmed first, so
    ``stop_ms >= confirm_ms + CONFIRM_MARGIN_MS``.  ``stop_ms`` None: it never stops talking.
    ``hangup_after_turns`` N: once N caller turns are answered, the next finished turn gets a ``hangup``
    instead of a reply (None: it never hangs up; the caller ends the call).
    """

    reply_ms: float
    stop_ms: float | None
    takeover_pauses: bool
    stop_on_backchannel: bool
    greeting_ms: float | None = 300.0
    reply_len_ms: float = 3000.0
    endpoint_ms: float | None = None
    confirm_ms: float = 350.0
    hangup_after_turns: int | None = None

    def __post_init__(self) -> None:
        problems = []
        if self.reply_ms < self.endpoint + DECISION_MARGIN_MS:
            problems.append(
                f"reply_ms {self.reply_ms:g} < endpoint {self.endpoint:g} + {DECISION_MARGIN_MS:g}"
            )
        if self.stop_ms is not None:
            floor = DECISION_MARGIN_MS
            if not self.stop_on_backchannel:
                floor = self.confirm_ms + CONFIRM_MARGIN_MS
            if self.stop_ms < floor:
                problems.append(f"stop_ms {self.stop_ms:g} < {floor:g} (the stop cannot be decided in time)")
        if self.greeting_ms is not None and self.greeting_ms < DECISION_MARGIN_MS:
            problems.append(f"greeting_ms {self.greeting_ms:g} < {DECISION_MARGIN_MS:g} (no clock yet)")
        if self.reply_len_ms < 100 or self.confirm_ms <= 0:
            problems.append("reply_len_ms must be >= 100 and confirm_ms > 0")
        if self.hangup_after_turns is not None and self.hangup_after_turns < 0:
            problems.append("hangup_after_turns must be >= 0")
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def endpoint(self) -> float:
        if self.endpoint_ms is not None:
            return self.endpoint_ms
        return 200.0 if self.takeover_pauses else 2500.0

    def to_json(self) -> BehaviourSpec:
        """The fields by name, in order (what :meth:`from_json` reads back)."""
        return {
            "reply_ms": self.reply_ms,
            "stop_ms": self.stop_ms,
            "takeover_pauses": self.takeover_pauses,
            "stop_on_backchannel": self.stop_on_backchannel,
            "greeting_ms": self.greeting_ms,
            "reply_len_ms": self.reply_len_ms,
            "endpoint_ms": self.endpoint_ms,
            "confirm_ms": self.confirm_ms,
            "hangup_after_turns": self.hangup_after_turns,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> ReferenceBehaviour:
        """Strict: an unknown key raises ValueError (a typo must not silently change the behaviour)."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(obj) - names)
        if unknown:
            raise ValueError(f"unknown behaviour keys: {', '.join(unknown)}")
        try:
            return cls(**obj)
        except TypeError as exc:
            raise ValueError(str(exc)) from exc


class RefNote(TypedDict, total=False):
    """What a reference assistant says it did, as a ``log`` event (recorded, never measured; the fidelity
    bench reads ``reply`` and ``clear``): ``ref`` is turn, stop, no_stop, reply or clear; the positions
    are caller samples."""

    ref: Required[str]
    onset: int  # turn, stop, no_stop: where the caller's speech began
    end: int  # turn: where it ended
    decided: int  # turn, stop: the caller samples received when it was decided
    why: str  # stop, no_stop: what called for the stop
    at: int  # stop, no_stop, clear: where the replies fall silent
    index: int  # reply: which reply
    heard_at: int  # reply: where its first audible sample is heard
    chunk_at: int  # reply: where its first chunk was due
    late_ms: float  # reply, clear: how late it was sent


@functools.lru_cache(maxsize=16)
def reply_voice(ms: float) -> Pcm:
    """Speech-like audio that sounds from its first sample to its last: 200 ms "syllables" of harmonics
    with their own pitch and formant, an envelope that never drops below 60 %.  webrtcvad takes it as one
    speech segment, so where it is cut is where it is heard to stop, to the sample."""
    n = ms_to_samples(ms)
    t = np.arange(n) / SAMPLE_RATE
    k = (t // 0.2).astype(int) % 8
    f0 = np.array([200, 235, 180, 250, 210, 170, 225, 195])[k] * (1 + 0.08 * np.sin(2 * np.pi * t / 0.2))
    formant = np.array([700, 1100, 500, 900, 1300, 600, 800, 1000])[k]
    phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    x = np.zeros(n)
    for h in range(1, 16):
        weight = (1 + 2 * np.exp(-(((h * f0 - formant) / 250) ** 2))) / h  # a formant peak per syllable
        x += weight * np.sin(h * phase + 0.3 * h)  # the phase offset makes the very first sample sound
    x = x * (0.6 + 0.4 * np.sin(np.pi * (t % 0.2) / 0.2))
    out = float_to_pcm16(0.5 * x / np.max(np.abs(x)))
    out.flags.writeable = False
    return out
