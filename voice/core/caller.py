"""The caller plan: the timed turns the call core plays as the caller (audio, think times, pauses, barge-ins,
backchannels), and the timing settings they are drawn from.

The plan is computed once, before the call (from a dialogue and a voice, by
:func:`voice.speech.caller_plan.plan_call`); the call core then executes it against what the caller hears.
Only the plan's types live here, free of the dialogue schema and the speech engines, so the core imports
nothing above it.  Every timing decision comes from a seeded random generator (:func:`caller_rng`), so a
run is reproducible and every decision can be written to the event log.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field

from voice.core.audio import SAMPLE_RATE, Pcm
from voice.core.events import BackchannelCue, TurnPlanned
from voice.errors import ConfigError


@dataclass(frozen=True)
class CallerTiming:
    """How the simulated caller paces itself; all figures in milliseconds, converted to samples once."""

    think_distribution: str = "lognormal"  # "lognormal" (median, sigma) or "uniform" (min..max)
    think_median_ms: float = 400.0  # human gaps cluster around 200-500 ms (Stivers et al. 2009)
    think_sigma: float = 0.4  # log-space spread of the lognormal
    think_min_ms: float = 150.0  # think times are clipped to [min, max]
    think_max_ms: float = 1500.0
    end_of_reply_ms: float = 700.0  # silence after which the caller takes the assistant's reply as finished
    response_timeout_ms: float = 8000.0  # no reply this long after the caller stops: a missed reply
    max_missed_replies: int = 2  # this many missed replies in a row end the call as a failure
    hangup_after_ms: float = 400.0  # after the last reply ends, the caller hangs up
    max_call_ms: float = 240_000.0  # hard ceiling on a call's length
    drain_ms: float = 3000.0  # after an assistant hang-up, how long buffered audio may keep playing
    seed: int = 0

    def __post_init__(self) -> None:
        if self.think_distribution not in ("lognormal", "uniform"):
            raise ConfigError(
                f"unknown think-time distribution {self.think_distribution!r} (lognormal, uniform)"
            )
        if not 0 <= self.think_min_ms <= self.think_max_ms:
            raise ConfigError("think times need 0 <= think_min_ms <= think_max_ms")

    def sample_think_ms(self, rng: random.Random) -> float:
        """One think time from the configured distribution, clipped to [think_min_ms, think_max_ms]."""
        if self.think_distribution == "uniform":
            value = rng.uniform(self.think_min_ms, self.think_max_ms)
        else:
            value = rng.lognormvariate(math.log(self.think_median_ms), self.think_sigma)
        return min(self.think_max_ms, max(self.think_min_ms, value))


@dataclass(frozen=True)
class PlannedTurn:
    """One caller turn, ready to play.  Sample positions inside ``audio`` are exact speech boundaries."""

    index: int  # position among the caller turns (0-based)
    turn_index: int  # position in the dialogue's turn list
    text: str
    audio: Pcm  # the whole turn including any mid-turn pause
    speech_start: int  # first audible sample in ``audio``
    speech_end: int  # one past the last audible sample in ``audio``
    think: int  # samples to wait after the reply before speaking
    think_source: str  # "script" (pause_before_ms) or "random"
    pause: tuple[int, int] | None = None  # [start, end) of the mid-turn pause inside ``audio``
    barge_in: int | None = None  # start this many samples after the assistant reply's onset
    backchannel_text: str | None = None
    backchannel_audio: Pcm | None = None
    backchannel_at: int | None = None  # samples after the reply's onset

    def planned(self, reference: str | None) -> TurnPlanned:
        """The turn's timing decisions, for the event log (``reference``: the assistant line after it)."""
        cue = None
        if self.backchannel_at is not None:
            cue = BackchannelCue(self.backchannel_text or "", self.backchannel_at)
        return TurnPlanned(
            0,
            self.index,
            self.text,
            dialogue_turn=self.turn_index,
            audio_samples=len(self.audio),
            speech_start=self.speech_start,
            speech_end=self.speech_end,
            think=self.think,
            think_source=self.think_source,
            pause=self.pause,
            barge_in=self.barge_in,
            backchannel=cue,
            reference=reference,
        )


@dataclass(frozen=True)
class CallerPlan:
    """Everything the call core needs to play one dialogue as the caller."""

    dialogue_id: str
    turns: tuple[PlannedTurn, ...]
    expects_greeting: bool  # the dialogue opens with the assistant speaking
    references: tuple[str | None, ...]  # reference assistant reply after each caller turn (None if absent)
    greeting_reference: str | None
    timing: CallerTiming
    sample_rate: int = SAMPLE_RATE
    notes: list[str] = field(default_factory=list)


def caller_rng(dialogue_id: str, seed: int) -> random.Random:
    """The seeded generator of one call's timing decisions (think times): the same for the same dialogue
    and seed, on any machine."""
    digest = hashlib.sha256(f"{seed}:{dialogue_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))
