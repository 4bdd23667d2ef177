"""What a judge reads of one call: each caller turn and the reply as heard, with timing facts inlined.

Pure functions over a recording, its metrics and its dialogue (plus a transcriber, for the audio the
metrics hold no transcript of).  A reply is the assistant's audio from its onset to the end of the last
speech segment that starts before the next caller turn (as in ``voice.app.run.runner.transcribe_replies``);
its transcript is the metrics' ``heard_text`` when present, else the transcriber's.  Where timing matters for
judging, facts are written into the text, so a judge does not penalise a reply for being cut off by a
barge-in and does penalise talk-over:

``[caller interrupted here]``        a barge-in (scripted or not) cut into the reply: placed at the barge-in
                                     onset, by the share of the reply's speech time heard before it
``[assistant cut off]``              ...and the assistant stopped within 1.5 s (the barge-in success rule)
``[assistant talked over the caller for 1.2 s]``  it did not stop in time (after the interruption), or the
                                     reply began before the caller had finished (before the reply)
``[false start: 好的]``               speech begun and abandoned while the caller still spoke (transcribed
                                     when a transcriber is given; ``[false start]`` otherwise)
``[assistant stopped at the caller's 嗯]``  it stopped for a backchannel instead of carrying on
``[no reply]``, ``[unintelligible reply]``, ``[reply not transcribed]``
``[assistant hung up]``              after the last reply of a call the assistant ended; the caller turns it
                                     never heard are ``after_hangup`` (the call's ending, not failed turns)
``[no reply: the call failed (...)]`` caller turns a failed call never reached (the assistant owed them)

Each turn is placed in the script by its ``TurnPlanned`` event: ``dialogue_turn`` -1 means the caller's words
were not the script's (the reactive caller pursues its goal in its own words), so the turn gets no reference
reply and no annotations (``HeardTurn.dialogue_turn`` -1), rather than the scripted line that happens to
have its number.  Only a recording without plan events (older than them) is matched to the script by count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from voice.core import events as ev
from voice.core.audio import ms_to_samples, samples_to_ms
from voice.dialogues import Dialogue
from voice.metrics.measure import (
    BARGE_IN_SUCCESS_MS,
    YIELD_SILENCE_MS,
    BargeIn,
    CallMetrics,
    TurnMetrics,
    heard_span,
    reply_spans_ms,
)
from voice.metrics.scoring.vocabulary import HeardTurn, ScoringInput
from voice.recording import Recording
from voice.speech.asr import ASREngine

Span = tuple[float, float]  # [start, end) in ms

NO_REPLY = "[no reply]"
HUNG_UP = "[assistant hung up]"
INTERRUPTED = "[caller interrupted here]"
CUT_OFF = "[assistant cut off]"
UNINTELLIGIBLE = "[unintelligible reply]"
NOT_TRANSCRIBED = "[reply not transcribed]"
FROM_METRICS = "the run's transcripts (heard_text; transcriber not recorded)"


def talked_over(seconds: float) -> str:
    return f"[assistant talked over the caller for {seconds:.1f} s]"


@dataclass(frozen=True)
class _Reply:
    """One stretch of assistant speech to render: a turn's reply or the greeting."""

    span: Span | None  # None: no reply
    next_turn: TurnMetrics | None  # the caller turn that follows (it may cut in)
    heard_text: str | None  # from the metrics


class _Ears:
    """Transcribes spans of the assistant channel (or takes the metrics' text), noting whose text it used."""

    def __init__(self, rec: Recording, transcriber: ASREngine | None, heard_by: str) -> None:
        self.rec, self.transcriber, self.heard_by = rec, transcriber, heard_by
        self.used: dict[str, None] = {}

    def text(self, span: Span, known: str | None) -> str | None:
        if known is not None:
            self.used.setdefault(self.heard_by or FROM_METRICS)
            return known
        if self.transcriber is None:
            return None
        rate = self.rec.sample_rate
        lo, hi = ms_to_samples(span[0], rate), ms_to_samples(span[1], rate)
        self.used.setdefault(self.transcriber.describe())
        return self.transcriber.transcribe(self.rec.assistant[lo:hi]).strip() if hi > lo else ""


def build_scoring_input(
    rec: Recording,
    metrics: CallMetrics,
    dialogue: Dialogue,
    transcriber: ASREngine | None = None,
    *,
    heard_by: str = "",
    retranscribe: bool = False,
) -> ScoringInput:
    """The turns of one call as the caller heard them, ready for a judge.

    ``transcriber`` transcribes what the metrics hold no transcript of (the greeting, false starts, replies
    without ``heard_text``; every reply with ``retranscribe``); ``heard_by`` says which transcriber made the
    metrics' ``heard_text`` (the run's settings).  ``ScoringInput.transcriber`` names the transcripts used.
    """
    segs = list(metrics.assistant_speech_ms)
    ears = _Ears(rec, transcriber, heard_by)
    turns = list(metrics.turns)
    following = [*turns[1:], _cut_in(rec, metrics, segs, {t.turn for t in turns})]
    replies = [
        _Reply(span, following[i], None if retranscribe else t.heard_text)
        for i, (t, span) in enumerate(zip(turns, reply_spans_ms(metrics), strict=True))
    ]
    plans = {e.turn: e for e in rec.events if isinstance(e, ev.TurnPlanned)}
    heard: list[HeardTurn] = []
    last = len(turns) - 1
    for t, reply in zip(turns, replies, strict=True):
        text, tags = _render(reply, segs, ears)
        prefix, prefix_tags = _before_reply(t, segs, ears)
        text, tags = " ".join(x for x in (*prefix, text) if x), prefix_tags + tags
        if metrics.hangup_ms is not None and t.turn == turns[last].turn:
            text, tags = f"{text} {HUNG_UP}", (*tags, "hung_up")
        heard.append(_heard(t.turn, t.text, text, tags, plans, dialogue, t.reference, t.rhythm))
    heard += _unheard(metrics, plans, dialogue, {t.turn for t in turns})
    greeting = _greeting(metrics, turns[0] if turns else following[-1], segs, ears)
    if greeting is not None and metrics.hangup_ms is not None and not turns:
        greeting = f"{greeting} {HUNG_UP}"
    return ScoringInput(
        call_id=metrics.call_id,
        dialogue=dialogue,
        turns=heard,
        greeting=greeting,
        ended_by=metrics.outcome,
        transcriber="; ".join(ears.used),
        notes=_notes(metrics),
    )


def _speech_before(segs: Sequence[Span], span: Span, at: float) -> float:
    """Share (0-1) of the speech inside ``span`` that was heard before ``at``."""
    inside = [(max(s, span[0]), min(e, span[1])) for s, e in segs if e > span[0] and s < span[1]]
    total = sum(e - s for s, e in inside)
    before = sum(max(0.0, min(e, at) - s) for s, e in inside)
    return before / total if total > 0 else 0.0


def _render(reply: _Reply, segs: Sequence[Span], ears: _Ears) -> tuple[str, tuple[str, ...]]:
    """The reply's transcript with the interruption, cut-off and talk-over marked."""
    if reply.span is None:
        return NO_REPLY, ("no_reply",)
    text = ears.text(reply.span, reply.heard_text)
    if text is None:
        return NOT_TRANSCRIBED, ("not_transcribed",)
    tags: tuple[str, ...] = ()
    if not text:
        text, tags = UNINTELLIGIBLE, ("unintelligible",)
    nxt = reply.next_turn
    barge = nxt.barge_in if nxt is not None else None
    if nxt is not None and barge is not None and barge.active:
        share = _speech_before(segs, reply.span, barge.at_ms)
        cut = round(len(text) * share) if text != UNINTELLIGIBLE else len(text)
        text = f"{text[:cut]} {INTERRUPTED} {text[cut:]}".replace("  ", " ").strip()
        tags += ("interrupted",)
        if barge.stop_latency_ms is not None and barge.stop_latency_ms <= BARGE_IN_SUCCESS_MS:
            text, tags = f"{text} {CUT_OFF}", (*tags, "cut_off")
        else:
            stop = barge.at_ms + barge.stop_latency_ms if barge.stop_latency_ms is not None else reply.span[1]
            seconds = _overlap(segs, barge.at_ms, min(stop, nxt.caller_end_ms)) / 1000
            text, tags = f"{text} {talked_over(seconds)}", (*tags, f"talk_over:{seconds:.1f}")
    if nxt is not None and nxt.backchannel_carried_on is False:
        said = _backchannel_text(ears.rec, nxt.turn)
        text, tags = f"{text} [assistant stopped at the caller's {said}]", (*tags, "stopped_at_backchannel")
    return text, tags


def _before_reply(t: TurnMetrics, segs: Sequence[Span], ears: _Ears) -> tuple[list[str], tuple[str, ...]]:
    """False starts during the caller's turn, and talk-over by a reply that began before the caller ended."""
    out: list[str] = []
    tags: tuple[str, ...] = ()
    lo = t.caller_start_ms
    if t.barge_in is not None:  # the reply it cut into is not this turn's (nothing is, if it never stopped)
        stop = t.barge_in.stop_latency_ms
        lo = max(lo, t.barge_in.at_ms + stop) if stop is not None else float("inf")
    for s, e in segs:
        if lo <= s and e <= t.caller_end_ms:
            said = ears.text((s, e), None)
            out.append(f"[false start: {said}]" if said else "[false start]")
            tags += ("false_start",)
    if t.latency_ms is not None and t.latency_ms < 0 and t.reply_onset_ms is not None:
        seconds = _overlap(segs, t.reply_onset_ms, t.caller_end_ms) / 1000
        out.append(talked_over(seconds))
        tags += (f"talk_over:{seconds:.1f}",)
    return out, tags


def _cut_in(
    rec: Recording, metrics: CallMetrics, segs: Sequence[Span], spoken: set[int]
) -> TurnMetrics | None:
    """The caller turn under way when the assistant hung up, if it cut into the last reply.

    It is not a turn of the call, so the metrics keep no barge-in for it; it is rebuilt here (as measure
    does: the assistant's speech run covering the caller's first sound, runs closer than 300 ms joined), so
    a reply cut short by the caller and then hung up on reads as interrupted, not as unfinished.
    """
    if metrics.hangup_ms is None:
        return None
    cut = sorted(
        (e for e in rec.events if isinstance(e, ev.CallerSpoke) and e.turn not in spoken),
        key=lambda e: e.turn,
    )
    if not cut:
        return None
    d, rate = cut[0], rec.sample_rate
    scripted = next((e.at for e in rec.events if isinstance(e, ev.BargedIn) and e.turn == d.turn), None)
    at = samples_to_ms(scripted if scripted is not None else d.speech_start, rate)
    runs: list[list[float]] = []
    for s, e in segs:
        if runs and s - runs[-1][1] < YIELD_SILENCE_MS:
            runs[-1][1] = max(runs[-1][1], e)
        else:
            runs.append([s, e])
    covering = next(((s, e) for s, e in runs if s <= at < e), None)
    if covering is None:
        return None
    latency = covering[1] - at if covering[1] < metrics.duration_ms else None
    success = latency is not None and latency <= BARGE_IN_SUCCESS_MS
    barge = BargeIn(at, True, latency, success, scripted is not None)
    start, end = samples_to_ms(d.speech_start, rate), samples_to_ms(d.speech_end, rate)
    return TurnMetrics(d.turn, d.mode, "", start, end, None, None, 0.0, barge_in=barge)


def _overlap(segs: Sequence[Span], lo: float, hi: float) -> float:
    return sum(max(0.0, min(e, hi) - max(s, lo)) for s, e in segs)


def _backchannel_text(rec: Recording, turn: int) -> str:
    said = next((e.text for e in rec.events if isinstance(e, ev.BackchannelSaid) and e.turn == turn), "")
    return said or "backchannel"


def _greeting(
    metrics: CallMetrics, first: TurnMetrics | None, segs: Sequence[Span], ears: _Ears
) -> str | None:
    """The opening as heard (with an interruption by the caller's first turn marked), if there was one."""
    if metrics.first_word_ms is None:
        return None
    spoken = first is not None and first.turn in {t.turn for t in metrics.turns}
    next_start = first.caller_start_ms if first is not None and spoken else metrics.duration_ms
    span = heard_span(segs, metrics.first_word_ms, next_start)
    text, _tags = _render(_Reply(span, first, None), segs, ears)
    return None if text == NOT_TRANSCRIBED else text


def _heard(
    turn: int,
    caller_text: str,
    heard: str,
    tags: tuple[str, ...],
    plans: dict[int, ev.TurnPlanned],
    dialogue: Dialogue,
    reference: str | None,
    rhythm: int | None,
    after_hangup: bool = False,
) -> HeardTurn:
    plan = plans.get(turn)
    if not plans:  # a recording older than the plan events: the script's caller turns, counted
        index = _dialogue_index(dialogue, turn)
    else:  # the plan says where the turn is in the script; -1 (or no plan): not from the script
        index = max(plan.dialogue_turn, -1) if plan is not None else -1
    if index < 0:  # not from the script (a reactive caller's own words): no reference, no annotations
        reference = None
    following = dialogue.turns[index + 1] if 0 <= index < len(dialogue.turns) - 1 else None
    if reference is None and following is not None and following.role == "assistant":
        reference = following.text
    if not caller_text and 0 <= index < len(dialogue.turns):
        caller_text = dialogue.turns[index].text
    return HeardTurn(turn, index, caller_text, heard, reference, tags, rhythm, after_hangup)


def _dialogue_index(dialogue: Dialogue, turn: int) -> int:
    """Index in the dialogue's turn list of caller turn ``turn`` (-1 if there is none).

    Only for a recording without ``TurnPlanned`` events (older than them): a planned turn says where it is
    in the script itself, and -1 there means it is not in the script at all (the reactive caller's own
    words), so counting would pair it with a scripted line it never said."""
    callers = [i for i, t in enumerate(dialogue.turns) if t.role == "caller"]
    return callers[turn] if 0 <= turn < len(callers) else -1


def _unheard(
    metrics: CallMetrics, plans: dict[int, ev.TurnPlanned], dialogue: Dialogue, spoken: set[int]
) -> list[HeardTurn]:
    """Caller turns not among the metrics' turns: cut by the assistant's hang-up, or never reached."""
    indices = sorted(set(plans) | set(range(metrics.caller_turns_planned)))
    missing = [i for i in indices if i not in spoken and (not spoken or i > max(spoken))]
    if metrics.hangup_ms is not None:
        return [
            _heard(i, _plan_text(plans, i), HUNG_UP, ("after_hangup",), plans, dialogue, None, None, True)
            for i in missing
        ]
    if metrics.failed:
        failed = f"[no reply: the call failed ({metrics.outcome})]"
        return [
            _heard(i, _plan_text(plans, i), failed, ("no_reply", "call_failed"), plans, dialogue, None, None)
            for i in missing
        ]
    return []


def _plan_text(plans: dict[int, ev.TurnPlanned], turn: int) -> str:
    plan = plans.get(turn)
    return plan.text if plan is not None else ""


def _notes(metrics: CallMetrics) -> tuple[str, ...]:
    notes = [f"call outcome: {metrics.outcome}" + (" (failed)" if metrics.failed else "")]
    if metrics.hangup_ms is not None:
        notes.append(f"the assistant hung up at {metrics.hangup_ms / 1000:.1f} s")
    if metrics.caller_turns_cut:
        notes.append(
            f"{metrics.caller_turns_cut} caller turn(s) after the hang-up: the call's ending, not failures"
        )
    return tuple(notes)
