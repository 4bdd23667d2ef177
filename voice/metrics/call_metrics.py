"""What :mod:`voice.metrics.measure` finds in a recording: the per-turn and per-call figures, as records.

Apart from the measuring so that what reads the figures (the rhythm score, summaries, the run, reports)
depends on these records alone, not on the voice detection that produced them: :mod:`voice.metrics.rhythm`
scores a :class:`TurnMetrics` and :mod:`voice.metrics.measure` fills it with that score, without an import
circle.  Definitions are in docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from voice.metrics.goal import CallerGoal, goal_from_json


@dataclass(frozen=True)
class BargeIn:
    at_ms: float
    active: bool  # the assistant was speaking (within measure.YIELD_SILENCE_MS) when the caller cut in
    stop_latency_ms: float | None  # barge-in onset → assistant silent; None if it never stopped
    success: bool
    scripted: bool = True  # a cue of the dialogue; False: the caller's turn began while the assistant spoke


@dataclass(frozen=True)
class TurnMetrics:
    turn: int
    mode: str
    text: str
    caller_start_ms: float
    caller_end_ms: float
    reply_onset_ms: float | None
    latency_ms: float | None  # reply onset − caller speech end; negative = started before the caller ended
    overlap_ms: float  # assistant speech during the caller's speech
    barge_in: BargeIn | None = None
    false_starts: int = 0  # assistant speech that began and ended while the caller's turn was going on
    pause_takeover: bool | None = None
    backchannel_carried_on: bool | None = None
    reference: str | None = None
    heard_text: str | None = None  # what the assistant was heard saying (CallSim's transcript of the reply)
    # what the assistant says it heard the caller say: the texts of its ``log`` messages of kind ``caller``
    # that arrived during this turn (joined by " / "); None if it sent none (not every assistant does)
    assistant_asr_text: str | None = None
    rhythm: int | None = None  # 1-5, see voice/metrics/rhythm.py
    rhythm_reasons: tuple[str, ...] = ()

    @property
    def replied(self) -> bool:
        return self.reply_onset_ms is not None


@dataclass(frozen=True)
class CallMetrics:
    call_id: str
    dialogue_id: str
    outcome: str
    failed: bool
    duration_ms: float
    first_word_ms: float | None  # pick-up → the assistant's first audible speech
    turns: list[TurnMetrics] = field(default_factory=list)
    caller_turns_planned: int = 0
    greeting_text: str | None = None
    overlap_ms: float = 0.0  # both sides speaking at once, whole call
    longest_silence_ms: float | None = None  # neither side speaking, between the first and last speech
    # the assistant's speech as heard, [start, end) ms: detected once, reused by transcripts and reports
    assistant_speech_ms: list[tuple[float, float]] = field(default_factory=list)
    hangup_ms: float | None = None  # the assistant hung up (or closed the line) here: the call's end
    caller_turns_cut: int = 0  # caller turns cut short or never said because the assistant hung up
    detail: str = ""  # why the call ended, in words (the event log's ``call_end`` detail)
    goal: CallerGoal | None = None  # the reactive caller's verdict on its goal (None: a scripted caller)
    # records the bot sent more of than a call keeps: {kind: {"received": n, "kept": k}} (voice.core.eventlog)
    records_capped: dict[str, dict[str, int]] = field(default_factory=dict)
    # CallSim's own lateness sending the caller's 20 ms frames, {"p50", "p99", "max"} ms (the recording's
    # meta; None when it has none): the simulator's, never the assistant's; latencies are off by up to it
    pacing_late_ms: dict[str, float] | None = None

    def __post_init__(self) -> None:
        # a call read back from JSON (resumed runs, reports, compare) hands its ``goal`` object over as is
        if isinstance(self.goal, Mapping):
            object.__setattr__(self, "goal", goal_from_json(self.goal))

    @property
    def turns_of_call(self) -> int:
        """Caller turns the assistant owed a reply: spoken ones, plus any the call failed to reach."""
        unsaid = self.caller_turns_planned - len(self.turns) - self.caller_turns_cut
        return len(self.turns) + (max(0, unsaid) if self.failed else 0)

    @property
    def served(self) -> bool:
        """The assistant did its job: the call ran and it answered every caller turn of it (one at least).

        Distinct from ``not failed`` (the call ran): an assistant that hangs up after a second without
        answering anything ran a call but served no one.
        """
        return not self.failed and self.turns_completed >= 1 and self.turns_completed == self.turns_of_call

    @property
    def false_starts(self) -> int:
        return sum(t.false_starts for t in self.turns)

    @property
    def rhythm(self) -> float | None:
        """Mean rhythm score of the call's turns."""
        scores = [t.rhythm for t in self.turns if t.rhythm is not None]
        return sum(scores) / len(scores) if scores else None

    @property
    def latencies_ms(self) -> list[float]:
        return [t.latency_ms for t in self.turns if t.latency_ms is not None]

    @property
    def turns_completed(self) -> int:
        return sum(1 for t in self.turns if t.replied)

    @property
    def barge_ins(self) -> list[BargeIn]:
        return [t.barge_in for t in self.turns if t.barge_in is not None and t.barge_in.active]
