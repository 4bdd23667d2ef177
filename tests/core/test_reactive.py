"""The reactive core: turns come one at a time; late ones are the simulator's; cut-ins are sample-exact."""

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest

from tests.fakes import plan, reference, tone, turn
from voice.core import events as ev
from voice.core.audio import FRAME_SAMPLES, Pcm, ms_to_samples, silence
from voice.core.call import AssistantAudio, AssistantControl
from voice.core.reactive import CallerMove, HangUp, ReactiveCallCore, ReplyCues, Say, TurnRequest, Wait
from voice.metrics.measure import measure
from voice.recording import Recording

Mover = Callable[[TurnRequest, int], tuple[CallerMove, int] | None]  # (move, frames until it is ready)


def drive(
    core: ReactiveCallCore,
    mover: Mover,
    bot=None,
    max_frames: int = 20_000,
    rest: tuple[Pcm, int] | None = None,
    rest_failed_after: str | None = None,
    pieces: tuple[tuple[Pcm, int], ...] = (),
) -> Recording:
    """Run the core against the reference bot; answer each request with ``mover`` after its delay.

    ``rest``: for a turn supplied by its first clause (``Say(more=True)``), its rest and the frames after
    the supply when it is ready; ``pieces``: the rest streamed in pieces instead, each with the frames after
    the supply when it is ready (``more`` for all but the last); ``rest_failed_after``: the text said so
    far, handed over with each piece."""
    bot = bot or reference(reply_len_ms=1500, greeting_ms=300)
    bot.start()
    pieces = pieces or ((rest,) if rest is not None else ())
    voicing: list[tuple[int, int, Pcm, bool]] = []  # (turn, frames left, piece, more) of pieces being voiced
    pending: tuple[CallerMove, int] | None = None
    asked: TurnRequest | None = None
    heard, said = [], []
    for _ in range(max_frames):
        for at, item in bot.due(core.now, core.now + FRAME_SAMPLES):
            core.receive(item, at)
        tick = core.tick()
        heard.append(tick.heard)
        said.append(tick.caller)
        bot.frame(tick.caller)
        if tick.done:
            return Recording("c", np.concatenate(said), np.concatenate(heard), core.events)
        ready = [v for v in voicing if v[1] == 0]
        voicing = [(index, left - 1, pcm, more) for index, left, pcm, more in voicing if left > 0]
        for index, _, pcm, more in ready:
            core.extend(index, pcm, core.now, said=rest_failed_after, more=more)
        if pending is not None:
            move, left = pending
            pending = (move, left - 1) if left > 0 else None
            if left == 0:
                core.supply(move, core.now)
                voicing += streamed(move, pieces)
        req = core.request
        if req is not None and req != asked and pending is None:
            asked = req
            answer = mover(req, core.now)
            if answer is not None and answer[1] == 0:
                core.supply(answer[0], core.now)  # ready at once: before the next frame
                voicing += streamed(answer[0], pieces)
            elif answer is not None:
                pending = (answer[0], answer[1] - 1)
    raise AssertionError("the call never ended")


def streamed(move: CallerMove, pieces: tuple[tuple[Pcm, int], ...]) -> list[tuple[int, int, Pcm, bool]]:
    """A turn supplied by its first clause: the pieces of its rest to voice (turn, frames until ready,
    piece, more)."""
    if not isinstance(move, Say) or not move.more:
        return []
    return [(move.turn.index, frames, pcm, k < len(pieces) - 1) for k, (pcm, frames) in enumerate(pieces)]


def kinds(core, kind):
    return [e for e in core.events if isinstance(e, kind)]


def say(index: int, ms: float = 800, think_ms: float = 300, cues: ReplyCues | None = None) -> Say:
    return Say(turn(index, ms, think_ms=think_ms), cues or ReplyCues())


def test_a_turn_is_asked_for_after_each_reply_and_the_caller_hangs_up_when_it_says_so():
    core = ReactiveCallCore(plan(greeting=True), max_turns=5)
    moves = iter([say(0), say(1), HangUp("goal yes: 放门口了")])
    drive(core, lambda req, now: (next(moves), 0))
    requests = kinds(core, ev.TurnRequested)
    assert [(r.turn, r.reason) for r in requests] == [
        (0, "reply_ended"),
        (1, "reply_ended"),
        (2, "reply_ended"),
    ]
    assert core.outcome is not None and (core.outcome.reason, core.outcome.failed) == ("completed", False)
    assert core.outcome.detail == "goal yes: 放门口了"
    assert kinds(core, ev.HungUp)[-1].reason == "goal yes: 放门口了"
    assert [p.turn for p in kinds(core, ev.TurnPlanned)] == [0, 1]


def test_a_turn_ready_in_time_is_said_exactly_think_after_the_reply_and_nothing_is_late():
    core = ReactiveCallCore(plan(greeting=True), max_turns=2)
    drive(core, lambda req, now: (say(req.turn, think_ms=900), 0) if req.turn < 2 else (HangUp("done"), 0))
    spoke = kinds(core, ev.CallerSpoke)
    # the end of a reply is noticed 700 ms after it; a think time longer than that is kept exactly
    assert [s.gap for s in spoke] == [ms_to_samples(900)] * 2
    assert kinds(core, ev.CallerLate) == []


def test_a_slow_caller_is_logged_late_and_the_assistants_latency_does_not_change():
    def run(delay_frames: int):
        core = ReactiveCallCore(plan(greeting=True), max_turns=3)
        rec = drive(
            core, lambda req, now: (say(req.turn), delay_frames) if req.turn < 3 else (HangUp("done"), 0)
        )
        return core, rec

    (fast, fast_rec), (slow, slow_rec) = run(0), run(100)  # 2 s late
    late = kinds(slow, ev.CallerLate)
    assert len(late) == 3 and all(x.late == late[0].late > ms_to_samples(1500) for x in late)
    assert kinds(fast, ev.CallerLate) == []
    a, b = measure(fast_rec), measure(slow_rec)
    assert [t.latency_ms for t in a.turns] == [t.latency_ms for t in b.turns]  # the wait is not the bot's
    assert len(a.turns) == 3 and all(t.latency_ms is not None for t in a.turns)
    assert b.duration_ms - a.duration_ms == pytest.approx(3 * late[0].late / 16, abs=20)


def test_an_impatient_caller_cuts_in_sample_exactly_when_its_turn_is_ready():
    bot = reference(reply_len_ms=6000, greeting_ms=300, stop_ms=200)
    core = ReactiveCallCore(
        plan(greeting=True), max_turns=3, first_cues=ReplyCues(interrupt_after=ms_to_samples(1000))
    )
    moves = {"interrupt": say(0, think_ms=0), "reply_ended": HangUp("done")}
    drive(core, lambda req, now: (moves[req.reason], 5), bot)
    [req] = [r for r in kinds(core, ev.TurnRequested) if r.reason == "interrupt"]
    [barge] = kinds(core, ev.BargedIn)
    spoke = kinds(core, ev.CallerSpoke)[0]
    assert spoke.mode == "barge_in" and barge.at == spoke.speech_start
    assert req.t - barge.reply_onset == ms_to_samples(1000)  # asked exactly when the patience ran out
    assert barge.at == req.t + 5 * FRAME_SAMPLES + turn(0).speech_start  # said the moment it was ready
    assert barge.offset == barge.at - barge.reply_onset


def test_waiting_lets_the_reply_go_on_and_the_next_request_comes_when_it_ends():
    core = ReactiveCallCore(
        plan(greeting=True), max_turns=1, first_cues=ReplyCues(interrupt_after=ms_to_samples(500))
    )
    answers = {"interrupt": Wait(), "reply_ended": HangUp("done")}
    drive(core, lambda req, now: (answers[req.reason], 0))
    assert [r.reason for r in kinds(core, ev.TurnRequested)] == ["interrupt", "reply_ended"]
    assert kinds(core, ev.BargedIn) == [] and core.outcome.detail == "done"


def test_a_reply_that_ends_before_the_cut_in_is_ready_turns_it_into_an_answer():
    core = ReactiveCallCore(
        plan(greeting=True), max_turns=1, first_cues=ReplyCues(interrupt_after=ms_to_samples(200))
    )
    drive(core, lambda req, now: (say(0), 200) if req.reason == "interrupt" else (HangUp("done"), 0))
    assert [s.reason for s in kinds(core, ev.BargeInSkipped)] == [
        "reply ended before the caller was ready to cut in"
    ]
    assert kinds(core, ev.CallerSpoke)[0].mode == "after_reply"


def test_the_turn_limit_hangs_up_after_the_last_reply():
    core = ReactiveCallCore(plan(greeting=True), max_turns=2)
    drive(core, lambda req, now: (say(req.turn), 0))
    assert len(kinds(core, ev.CallerSpoke)) == 2 and core.outcome.detail == "turn limit"


def test_a_backchannel_cue_is_said_during_the_next_reply():
    cues = ReplyCues("嗯", tone(250), ms_to_samples(600))
    core = ReactiveCallCore(plan(greeting=True), max_turns=2)
    drive(
        core,
        lambda req, now: (
            (say(req.turn, cues=cues if req.turn == 0 else ReplyCues()), 0) if req.turn < 2 else None
        ),
    )
    [bc] = kinds(core, ev.BackchannelSaid)
    assert bc.turn == 1 and bc.start - bc.reply_onset == ms_to_samples(600)


def test_a_missed_reply_asks_again_and_a_wrong_index_is_refused():
    core = ReactiveCallCore(plan(greeting=True), max_turns=3)
    bot = reference(greeting_ms=None)  # never greets: the caller's wait times out
    seen = []

    def mover(req, now):
        seen.append(req.reason)
        return (HangUp("nobody there"), 0)

    drive(core, mover, bot)
    assert seen == ["reply_missed"] and core.outcome.detail == "nobody there"
    core2 = ReactiveCallCore(plan(greeting=True), max_turns=3)
    with pytest.raises(ValueError, match="requested"):
        drive(core2, lambda req, now: (say(req.turn + 1), 0))


def test_a_wait_that_comes_after_the_reply_ended_is_asked_again():
    cues = ReplyCues(interrupt_after=ms_to_samples(200))
    core = ReactiveCallCore(plan(greeting=True), max_turns=1, first_cues=cues)
    drive(core, lambda req, now: (Wait(), 200) if req.reason == "interrupt" else (HangUp("done"), 0))
    assert [r.reason for r in kinds(core, ev.TurnRequested)] == ["interrupt", "reply_ended"]
    assert core.outcome is not None and core.outcome.detail == "done"


def test_a_guess_at_a_pause_is_the_request_that_follows_when_nothing_more_is_heard():
    core = ReactiveCallCore(plan(greeting=True), max_turns=5)
    core.receive(AssistantAudio(tone(500)), 0)
    guesses = []
    while core.request is None:
        core.tick()
        guesses.append(core.guess(ms_to_samples(240)))
    first = next(i for i, g in enumerate(guesses) if g is not None)
    assert first * FRAME_SAMPLES >= ms_to_samples(500 + 240 - 20)  # not before the pause was long enough
    guess, req = guesses[first], core.request
    assert (guess.turn, guess.reason, guess.reply_onset, guess.reply_end) == (
        req.turn,
        req.reason,
        req.reply_onset,
        req.reply_end,
    )
    assert core.guess(ms_to_samples(240)) is None  # the request is raised: nothing to guess


def test_no_guess_while_no_reply_is_heard_or_at_the_turn_limit():
    core = ReactiveCallCore(plan(greeting=True), max_turns=0)
    core.tick()
    assert core.guess(ms_to_samples(240)) is None  # awaiting the greeting
    core.receive(AssistantAudio(tone(200)), core.now)
    for _ in range(30):
        core.tick()
    assert core.guess(ms_to_samples(240)) is None  # no turn left to say: it will hang up


def test_the_reply_onset_is_known_while_a_reply_is_heard_and_only_then():
    core = ReactiveCallCore(plan(greeting=True), max_turns=1)
    core.receive(AssistantAudio(np.concatenate([silence(ms_to_samples(100)), tone(400)])), 0)
    core.tick()
    assert core.reply_onset is None  # awaiting the greeting: nothing heard yet
    onsets = []
    while core.request is None:
        core.tick()
        onsets.append(core.reply_onset)
    [started] = kinds(core, ev.ReplyStarted)
    assert started.at in onsets and set(onsets) <= {started.at, None}
    assert onsets[-1] is None  # the reply has ended: the caller's turn is asked for


# --- a turn supplied by its first clause (Say(more=True)) and its rest (extend) ----------------------------


def clause_first(
    frames_to_rest: int, rest_ms: float = 600, gap_ms: float = 200
) -> tuple[Say, tuple[Pcm, int]]:
    """Turn 0 supplied by an 800 ms first clause; its rest (a pause, then ``rest_ms`` of speech) ready
    ``frames_to_rest`` frames later."""
    rest = np.concatenate([silence(ms_to_samples(gap_ms)), tone(rest_ms)])
    return Say(turn(0, 800, think_ms=300), more=True), (rest, frames_to_rest)


def test_a_rest_ready_while_the_first_clause_plays_follows_it_and_the_records_hold_the_whole_turn():
    core = ReactiveCallCore(plan(greeting=True), max_turns=1)
    first, rest = clause_first(10)
    rec = drive(core, lambda req, now: (first, 0) if req.turn == 0 else (HangUp("done"), 0), rest=rest)
    (spoke,) = kinds(core, ev.CallerSpoke)
    (planned,) = kinds(core, ev.TurnPlanned)
    whole = len(first.turn.audio) + len(rest[0])
    assert planned.audio_samples == whole and spoke.pause is None  # no gap: the rest came in time
    assert spoke.speech_end == spoke.audio_start + whole - (len(first.turn.audio) - first.turn.speech_end)
    said = rec.caller[spoke.audio_start : spoke.audio_start + whole]
    assert np.array_equal(said, np.concatenate([first.turn.audio, rest[0]]))  # played back to back
    assert core.events.index(planned) < core.events.index(spoke)


def test_a_rest_ready_after_the_first_clause_has_played_leaves_a_gap_logged_as_the_turns_pause():
    core = ReactiveCallCore(plan(greeting=True), max_turns=1)
    first, rest = clause_first(80)  # 1.6 s: after the 0.8 s first clause has played
    drive(core, lambda req, now: (first, 0) if req.turn == 0 else (HangUp("done"), 0), rest=rest)
    (spoke,) = kinds(core, ev.CallerSpoke)
    assert spoke.pause is not None and spoke.pause[0] == spoke.audio_start + first.turn.speech_end
    assert spoke.pause[1] - spoke.pause[0] > ms_to_samples(200)  # longer than the clause's own pause
    assert spoke.speech_end > spoke.pause[1]
    (late,) = kinds(core, ev.CallerLate)  # the gap is the simulator's, counted as its lateness
    assert (late.turn, late.due) == (0, spoke.audio_start + len(first.turn.audio)) and late.late > 0
    # the caller kept the turn while its rest was voiced: no reply was taken for one in the gap
    assert all(r.at > spoke.speech_end for r in kinds(core, ev.ReplyStarted) if r.t > spoke.t)


def test_a_turn_whose_rest_never_comes_ends_with_its_first_clause_and_its_records_are_kept():
    core = ReactiveCallCore(plan(greeting=True), max_turns=1)
    first, _ = clause_first(0)
    drive(core, lambda req, now: (first, 0) if req.turn == 0 else (HangUp("done"), 0), rest=(tone(0), 5))
    (spoke,) = kinds(core, ev.CallerSpoke)
    assert spoke.speech_end == spoke.audio_start + first.turn.speech_end and spoke.pause is None
    assert core.outcome is not None and not core.outcome.failed


def test_a_turn_whose_rest_failed_is_recorded_with_what_was_said():
    core = ReactiveCallCore(plan(greeting=True), max_turns=1)
    first, _ = clause_first(0)
    first = dataclasses.replace(first, turn=dataclasses.replace(first.turn, text="外卖到了，放门口吧。"))
    mover: Mover = lambda req, now: (first, 0) if req.turn == 0 else (HangUp("done"), 0)  # noqa: E731
    drive(core, mover, rest=(tone(0), 5), rest_failed_after="外卖到了，")
    (planned,) = kinds(core, ev.TurnPlanned)
    assert planned.text == "外卖到了，"  # not the whole turn the caller never finished


# --- the rest streamed clause by clause (extend(..., more=True)) ------------------------------------------


def piece(frames: int, ms: float = 600, gap_ms: float = 200) -> tuple[Pcm, int]:
    """One clause of a rest (its mark's pause, then ``ms`` of speech), ready ``frames`` after the supply."""
    return np.concatenate([silence(ms_to_samples(gap_ms)), tone(ms)]), frames


def stream(*pieces: tuple[Pcm, int], said: str | None = None) -> tuple[ReactiveCallCore, Recording, Say]:
    core = ReactiveCallCore(plan(greeting=True), max_turns=1)
    first = Say(turn(0, 800, think_ms=300), more=True)
    mover: Mover = lambda req, now: (first, 0) if req.turn == 0 else (HangUp("done"), 0)  # noqa: E731
    return core, drive(core, mover, pieces=pieces, rest_failed_after=said), first


def test_a_rest_streamed_in_pieces_in_time_plays_back_to_back_and_the_records_hold_the_whole_turn() -> None:
    parts = (piece(5), piece(10, ms=400), piece(15, ms=500))
    core, rec, first = stream(*parts)
    (spoke,) = kinds(core, ev.CallerSpoke)
    (planned,) = kinds(core, ev.TurnPlanned)
    audio = np.concatenate([first.turn.audio] + [p for p, _ in parts])
    assert planned.audio_samples == len(audio) and spoke.pause is None and kinds(core, ev.CallerLate) == []
    assert spoke.speech_end == spoke.audio_start + len(audio) and planned.speech_end == len(audio)
    assert np.array_equal(rec.caller[spoke.audio_start : spoke.audio_start + len(audio)], audio)
    assert core.events.index(planned) < core.events.index(spoke)


@pytest.mark.parametrize("frames", [(60, 150, 155), (110, 160, 165)])
def test_late_pieces_log_caller_late_and_the_turns_pause_is_the_longest_gap(
    frames: tuple[int, int, int],
) -> None:
    a, b, c = frames  # the head and each piece play 40 frames: (a, b) make a short and a long gap
    parts = (piece(a), piece(b), piece(c))
    core, _, first = stream(*parts)
    (spoke,) = kinds(core, ev.CallerSpoke)
    (planned,) = kinds(core, ev.TurnPlanned)
    lates = kinds(core, ev.CallerLate)
    assert [late.turn for late in lates] == [0, 0]  # the last piece came in time
    head, lead = len(first.turn.audio), ms_to_samples(200) + 1  # a tone's first sample is silent
    first_start, second_start = (late.t for late in lates)
    assert lates[0].due == spoke.audio_start + head and lates[1].due == first_start + len(parts[0][0])
    gaps = [
        (spoke.audio_start + first.turn.speech_end, first_start + lead),
        (first_start + len(parts[0][0]), second_start + lead),
    ]
    assert spoke.pause == max(gaps, key=lambda g: g[1] - g[0])  # one gap is kept: the longest
    end = second_start + len(parts[1][0]) + len(parts[2][0])  # the last one followed the second at once
    assert planned.audio_samples == end - spoke.audio_start and spoke.speech_end == end
    # the caller kept the turn through its gaps: no reply was taken for one in them
    assert all(r.at > spoke.speech_end for r in kinds(core, ev.ReplyStarted) if r.t > spoke.t)


def test_an_empty_piece_mid_stream_ends_the_turn_with_what_was_said() -> None:
    parts = (piece(5), (tone(0), 10), piece(15))  # the second clause failed: the third never comes
    core, _, first = stream(*parts, said="外卖到了，放门口吧，")
    (spoke,) = kinds(core, ev.CallerSpoke)
    (planned,) = kinds(core, ev.TurnPlanned)
    said = len(first.turn.audio) + len(parts[0][0])
    assert planned.text == "外卖到了，放门口吧，" and planned.audio_samples == said
    assert spoke.speech_end == spoke.audio_start + said and spoke.pause is None
    assert core.outcome is not None and not core.outcome.failed


def test_a_call_that_ends_mid_stream_records_what_was_said_by_then() -> None:
    core = ReactiveCallCore(plan(greeting=True), max_turns=1)
    core.receive(AssistantAudio(tone(300)), 0)
    while core.request is None:
        core.tick()
    whole = dataclasses.replace(turn(0, 800, think_ms=300), text="外卖到了，放门口吧，谢谢。")
    core.supply(Say(whole, more=True), core.now)
    core.extend(0, piece(0)[0], core.now, said="外卖到了，放门口吧，", more=True)
    assert kinds(core, ev.TurnPlanned) == []  # held for the rest
    core.receive(AssistantControl("error", {"message": "boom"}), core.now)
    (planned,) = kinds(core, ev.TurnPlanned)
    assert planned.text == "外卖到了，放门口吧，"  # not the clause the caller never said
