"""The reactive core: turns come one at a time; late ones are the simulator's; cut-ins are sample-exact."""

from collections.abc import Callable

import numpy as np
import pytest

from tests.fakes import plan, reference, tone, turn
from voice.core import events as ev
from voice.core.audio import FRAME_SAMPLES, ms_to_samples
from voice.core.call import AssistantAudio
from voice.core.reactive import CallerMove, HangUp, ReactiveCallCore, ReplyCues, Say, TurnRequest, Wait
from voice.metrics.measure import measure
from voice.recording import Recording

Mover = Callable[[TurnRequest, int], tuple[CallerMove, int] | None]  # (move, frames until it is ready)


def drive(core: ReactiveCallCore, mover: Mover, bot=None, max_frames: int = 20_000) -> Recording:
    """Run the core against the reference bot; answer each request with ``mover`` after its delay."""
    bot = bot or reference(reply_len_ms=1500, greeting_ms=300)
    bot.start()
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
        if pending is not None:
            move, left = pending
            pending = (move, left - 1) if left > 0 else None
            if left == 0:
                core.supply(move, core.now)
        req = core.request
        if req is not None and req != asked and pending is None:
            asked = req
            answer = mover(req, core.now)
            if answer is not None and answer[1] == 0:
                core.supply(answer[0], core.now)  # ready at once: before the next frame
            elif answer is not None:
                pending = (answer[0], answer[1] - 1)
    raise AssertionError("the call never ended")


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
