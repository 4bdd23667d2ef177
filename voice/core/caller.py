"""A dialogue script becomes a timed caller plan: audio, think times, pauses, barge-ins, backchannels.

The plan is computed once, before the call, from the dialogue and the TTS engine; the call core then
executes it against what the caller hears.  Every timing decision is made here, from a seeded random
generator, so a run is reproducible and every decision can be written to the event log.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm, active_bounds, ms_to_samples, silence
from voice.core.events import BackchannelCue, TurnPlanned
from voice.dialogues import AssistantTurn, CallerTurn, Dialogue
from voice.errors import CallerSpeechFailed, ConfigError, StorageError, explain
from voice.speech.tts.base import TTSEngine


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


def _rng(dialogue_id: str, seed: int) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{dialogue_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def speak(tts: TTSEngine, text: str) -> Pcm:
    """One caller line, voiced; :class:`CallerSpeechFailed` if the engine fails on it or gives silence.

    Whatever the engine raises becomes that one error (but the disk's refusal, which stops a run), so a
    run can tell a caller it could not voice, CallSim's failure, from a failure of the assistant.
    """
    try:
        audio = tts.synthesize(text)
    except (CallerSpeechFailed, StorageError):
        raise
    except Exception as exc:
        raise CallerSpeechFailed(f"TTS engine {tts.name!r} failed on {text!r}: {explain(exc)}") from exc
    if active_bounds(audio) is None:
        raise CallerSpeechFailed(f"TTS engine {tts.name!r} produced silence for {text!r}")
    return audio


def plan_call(dialogue: Dialogue, tts: TTSEngine, timing: CallerTiming | None = None) -> CallerPlan:
    """Synthesize every caller line of ``dialogue`` and fix the caller's timing decisions."""
    timing = timing or CallerTiming()
    rng = _rng(dialogue.id, timing.seed)
    turns: list[PlannedTurn] = []
    references: list[str | None] = []
    items = list(dialogue.turns)
    for turn_index, turn in enumerate(items):
        if not isinstance(turn, CallerTurn):
            continue
        nxt = items[turn_index + 1] if turn_index + 1 < len(items) else None
        references.append(nxt.text if isinstance(nxt, AssistantTurn) else None)
        turns.append(plan_turn(len(turns), turn_index, turn, tts, timing, rng))
    first = items[0] if items else None
    return CallerPlan(
        dialogue_id=dialogue.id,
        turns=tuple(turns),
        expects_greeting=isinstance(first, AssistantTurn),
        references=tuple(references),
        greeting_reference=first.text if isinstance(first, AssistantTurn) else None,
        timing=timing,
    )


def spoken_texts(dialogue: Dialogue) -> list[str]:
    """Every text :func:`plan_call` asks the voice to speak for ``dialogue``, in order (a turn with a pause
    inside is spoken as its two parts, as :func:`plan_turn` does; a backchannel on its own)."""
    out: list[str] = []
    for turn in dialogue.caller_turns:
        if turn.pause_inside is not None:
            out += [turn.pause_inside.after, turn.text[len(turn.pause_inside.after) :]]
        else:
            out.append(turn.text)
        if turn.backchannel is not None:
            out.append(turn.backchannel.text)
    return out


def caller_rng(dialogue_id: str, seed: int) -> random.Random:
    """The seeded generator of one call's timing decisions (think times)."""
    return _rng(dialogue_id, seed)


def plan_turn(
    index: int, turn_index: int, turn: CallerTurn, tts: TTSEngine, timing: CallerTiming, rng: random.Random
) -> PlannedTurn:
    """Synthesize one caller turn and draw its think time (``turn_index``: its place in the script, or -1)."""
    pause: tuple[int, int] | None = None
    if turn.pause_inside is not None:
        head = speak(tts, turn.pause_inside.after)
        tail = speak(tts, turn.text[len(turn.pause_inside.after) :])
        head_bounds, tail_bounds = active_bounds(head), active_bounds(tail)
        assert head_bounds is not None and tail_bounds is not None
        head = head[: head_bounds[1]]
        tail = tail[tail_bounds[0] :]
        gap = ms_to_samples(turn.pause_inside.ms)
        audio = np.concatenate([head, silence(gap), tail]).astype(np.int16)
        pause = (len(head), len(head) + gap)
    else:
        audio = speak(tts, turn.text)
    bounds = active_bounds(audio)
    assert bounds is not None
    think_ms = timing.sample_think_ms(rng)
    think_source = "random"
    if turn.pause_before_ms is not None:
        think_ms, think_source = float(turn.pause_before_ms), "script"
    bc_text = bc_audio = bc_at = None
    if turn.backchannel is not None:
        bc_text = turn.backchannel.text
        bc_audio = speak(tts, bc_text)
        bc_at = ms_to_samples(turn.backchannel.at_ms)
    return PlannedTurn(
        index=index,
        turn_index=turn_index,
        text=turn.text,
        audio=audio,
        speech_start=bounds[0],
        speech_end=bounds[1],
        think=ms_to_samples(think_ms),
        think_source=think_source,
        pause=pause,
        barge_in=ms_to_samples(turn.barge_in_ms) if turn.barge_in_ms is not None else None,
        backchannel_text=bc_text,
        backchannel_audio=bc_audio,
        backchannel_at=bc_at,
    )
