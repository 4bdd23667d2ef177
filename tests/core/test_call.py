"""The I/O-free call core on virtual time, against the ground-truth reference assistant (in memory)."""

from typing import TypeVar

import numpy as np

from tests.fakes import plan, reference, run_core, tone, turn
from voice.core import events as ev
from voice.core.audio import ms_to_samples
from voice.core.call import (
    MAX_QUEUED_S,
    AssistantAudio,
    AssistantControl,
    CallCore,
    LineClosed,
    PlayoutMark,
)

E = TypeVar("E", bound=ev.Event)


def kinds(core: CallCore) -> list[str]:
    return [e.kind for e in core.events]


def first(core: CallCore, kind: type[E]) -> E:
    return next(e for e in core.events if isinstance(e, kind))


def test_a_normal_call_completes_and_logs_every_decision():
    core = CallCore(plan(turn(0), turn(1)))
    run_core(core, reference())
    assert core.outcome is not None and core.outcome.reason == "completed" and not core.outcome.failed
    k = kinds(core)
    assert k[0] == "call_start" and k.count("turn_plan") == 2
    assert k.count("caller_turn") == 2 and k.count("reply_onset") == 3  # greeting + two replies
    assert k[-1] == "call_end"
    assert first(core, ev.CallerSpoke).mode == "after_reply"


def test_the_caller_waits_its_think_time_after_the_reply_ends():
    core = CallCore(plan(turn(0, think_ms=900), end_of_reply_ms=700))
    run_core(core, reference(greeting_ms=300, reply_len_ms=1000))
    greeting_end = ms_to_samples(1300)
    start = first(core, ev.CallerSpoke).audio_start
    assert start == greeting_end + ms_to_samples(900)


def test_silent_assistant_ends_the_call_as_a_failure_without_hanging():
    core = CallCore(plan(turn(0), turn(1), response_timeout_ms=2000, max_missed_replies=2))
    run_core(core, reference(greeting_ms=None, reply_ms=10**9))
    assert core.outcome is not None and core.outcome.reason == "assistant_silent" and core.outcome.failed
    assert kinds(core).count("no_response") == 2


def test_barge_in_starts_exactly_at_the_offset_into_the_reply():
    core = CallCore(plan(turn(0), turn(1, barge_in_ms=800)))
    run_core(core, reference(reply_len_ms=4000, stop_ms=250))
    b = first(core, ev.BargedIn)
    assert b.offset == ms_to_samples(800)
    assert b.at == b.reply_onset + ms_to_samples(800)
    assert "clear" in kinds(core)


def test_barge_in_is_skipped_when_the_reply_ends_first():
    core = CallCore(plan(turn(0), turn(1, barge_in_ms=5000)))
    run_core(core, reference(reply_len_ms=1000))
    assert "barge_in" not in kinds(core)
    assert first(core, ev.BargeInSkipped).turn == 1


def test_backchannel_is_played_while_the_assistant_talks():
    core = CallCore(plan(turn(0), turn(1, backchannel_at_ms=600)))
    heard = run_core(core, reference(reply_len_ms=3000, stop_ms=None))
    bc = first(core, ev.BackchannelSaid)
    onset = next(e.at for e in core.events if isinstance(e, ev.ReplyStarted) and e.turn == 0)
    assert bc.start - onset < ms_to_samples(600) + ms_to_samples(40)
    assert len(heard) > 0


def test_assistant_hangup_drains_buffered_audio_then_ends():
    core = CallCore(plan(turn(0), turn(1), turn(2)))
    run_core(core, reference(hangup_after_turns=1))
    assert core.outcome is not None and core.outcome.reason == "assistant_hangup" and not core.outcome.failed
    assert first(core, ev.CallEnded).caller_turns_started == 2


def test_line_closed_mid_call_is_a_recorded_failure():
    core = CallCore(plan(turn(0)))
    core.tick()
    core.receive(LineClosed("closed by assistant (code 1011)"), at=100)
    tick = core.tick()
    assert tick.done and tick.hangup is None
    assert core.outcome is not None and core.outcome.reason == "line_closed" and core.outcome.failed
    assert "1011" in core.outcome.detail


def test_error_event_ends_the_call_and_the_caller_hangs_up():
    core = CallCore(plan(turn(0)))
    core.receive(AssistantControl("error", {"message": "model crashed"}), at=0)
    tick = core.tick()
    assert tick.done and tick.hangup == "assistant_error"


def test_late_audio_is_never_placed_in_the_past():
    core = CallCore(plan(turn(0)))
    for _ in range(5):
        core.tick()
    core.receive(AssistantAudio(tone(100)), at=10)  # stamped long ago
    rx = [e for e in core.events if isinstance(e, ev.AudioReceived)][-1]
    assert rx.start == 5 * 320 and rx.arrival == 10
    assert np.abs(core.tick().heard).max() > 0


def test_call_timeout_caps_the_call():
    core = CallCore(plan(turn(0), max_call_ms=3000, response_timeout_ms=10_000))
    run_core(core, reference(greeting_ms=None))
    assert core.outcome is not None and core.outcome.reason == "call_timeout"


def test_audio_received_before_the_line_closes_is_still_heard():
    core = CallCore(plan(turn(0)))
    core.receive(AssistantAudio(tone(500)), at=0)
    core.receive(AssistantControl("hangup"), at=10)
    core.receive(LineClosed("closed by assistant (code 1000)"), at=20)
    heard = []
    while True:
        tick = core.tick()
        heard.append(tick.heard)
        if tick.done:
            break
    assert sum(len(h) for h in heard) >= ms_to_samples(500)  # the goodbye played to its end
    assert core.outcome is not None and core.outcome.reason == "assistant_hangup" and not core.outcome.failed


def test_closing_without_hangup_after_the_last_turn_is_not_a_failure():
    core = CallCore(plan(turn(0)))
    run = run_core(core, reference(hangup_after_turns=None))
    assert run and core.outcome is not None and core.outcome.reason == "completed"
    core2 = CallCore(plan(turn(0), greeting=False))
    bot = reference(greeting_ms=None)
    bot.start()
    while core2.now < ms_to_samples(3000):  # the caller spoke, the reply is playing
        for at, item in bot.due(core2.now, core2.now + 320):
            core2.receive(item, at)
        bot.frame(core2.tick().caller)
    core2.receive(LineClosed("closed by assistant (code 1000)"), at=core2.now)
    while not core2.tick().done:
        pass
    assert core2.outcome is not None and core2.outcome.reason == "line_closed" and not core2.outcome.failed


def test_a_protocol_error_ends_the_call_at_once():
    core = CallCore(plan(turn(0)))
    core.receive(LineClosed("protocol_error: malformed JSON control message"), at=0)
    assert core.done and core.outcome is not None and core.outcome.failed
    assert core.outcome.reason == "protocol_error"


def ticks_until_marks(core: CallCore, limit: int = 500) -> tuple[int, tuple[str, ...]]:
    """Tick until a frame reports marks: (that frame, the marks)."""
    for _ in range(limit):
        tick = core.tick()
        if tick.marks:
            return tick.frame, tick.marks
    raise AssertionError("no mark was played")


def test_a_mark_is_played_in_the_frame_where_the_audio_before_it_ends():
    core = CallCore(plan(turn(0)))
    core.tick()
    core.receive(AssistantAudio(tone(1000)), at=100)  # plays [320, 16320): heard from the next frame
    core.receive(PlayoutMark("after-1s"), at=200)
    core.receive(AssistantAudio(tone(500)), at=300)  # queued behind the mark: not waited for
    core.receive(PlayoutMark("after-1.5s"), at=400)
    assert [e for e in core.events if isinstance(e, ev.MarkReceived)] == [
        ev.MarkReceived(320, "after-1s", due=16320),
        ev.MarkReceived(400, "after-1.5s", due=24320),
    ]
    assert ticks_until_marks(core) == (50, ("after-1s",))  # frame 50 is [16000, 16320)
    assert ticks_until_marks(core) == (75, ("after-1.5s",))  # frame 75 ends at 24320
    assert [e for e in core.events if isinstance(e, ev.MarkPlayed)] == [
        ev.MarkPlayed(16320, "after-1s", at=16320),
        ev.MarkPlayed(24320, "after-1.5s", at=24320),
    ]


def test_a_mark_with_nothing_queued_is_played_in_the_next_frame_and_marks_keep_their_order():
    core = CallCore(plan(turn(0)))
    for _ in range(3):
        core.tick()
    core.receive(PlayoutMark("a"), at=1000)
    core.receive(PlayoutMark("b"), at=1100)
    tick = core.tick()
    assert tick.frame == 3 and tick.marks == ("a", "b")
    assert core.tick().marks == ()


def test_a_clear_answers_the_marks_of_the_dropped_audio_at_once():
    core = CallCore(plan(turn(0)))
    core.receive(AssistantAudio(tone(2000)), at=0)
    core.receive(PlayoutMark("dropped"), at=0)
    for _ in range(10):
        assert core.tick().marks == ()
    core.receive(AssistantControl("clear"), at=3300)
    core.receive(PlayoutMark("after-clear"), at=3400)  # nothing queued any more
    tick = core.tick()
    assert tick.frame == 10 and tick.marks == ("dropped", "after-clear")
    assert np.abs(tick.heard[3300 - 3200 :]).max() == 0  # the audio stopped with the clear
    played = [(e.name, e.at) for e in core.events if isinstance(e, ev.MarkPlayed)]
    assert played == [("dropped", 3300), ("after-clear", 3400)]


def test_marks_after_the_call_ended_are_not_played():
    core = CallCore(plan(turn(0)))
    core.receive(AssistantControl("error", {"message": "x"}), at=0)
    core.receive(PlayoutMark("late"), at=0)
    assert core.tick().marks == () and "mark" not in kinds(core)


def test_a_flood_of_audio_ahead_of_playout_is_a_protocol_error():
    second = tone(1000)
    core = CallCore(plan(turn(0)))
    for _ in range(MAX_QUEUED_S):  # a minute queued at once is allowed
        core.receive(AssistantAudio(second), at=0)
    assert not core.done
    core.receive(AssistantAudio(tone(20)), at=0)
    assert core.done and core.outcome is not None and core.outcome.failed
    assert core.outcome.reason == "protocol_error"
    assert core.outcome.detail == (
        "protocol_error: flood: 60.0 s of audio queued ahead of playout (cap 60 s)"
    )
    assert kinds(core).count("rx") == 60  # the flooding chunk is refused
    assert core.tick().hangup == "protocol_error"


def test_audio_played_out_or_cleared_no_longer_counts_towards_a_flood():
    second = tone(1000)
    core = CallCore(plan(turn(0), response_timeout_ms=100_000))
    for _ in range(MAX_QUEUED_S):
        core.receive(AssistantAudio(second), at=0)
    for _ in range(50):  # one second plays
        core.tick()
    core.receive(AssistantAudio(second), at=core.now)
    assert not core.done
    core.receive(AssistantControl("clear"), at=core.now)
    for _ in range(MAX_QUEUED_S):
        core.receive(AssistantAudio(second), at=core.now)
    assert not core.done


def test_a_clear_over_the_record_cap_still_clears_what_the_caller_hears():
    capped, uncapped = CallCore(plan(turn(0))), CallCore(plan(turn(0)))
    uncapped.log.cap = 10**9
    heard = []
    for core in (capped, uncapped):
        for _ in range(capped.log.cap):
            core.receive(AssistantControl("clear"), at=0)
        core.receive(AssistantAudio(tone(2000)), at=0)
        core.receive(AssistantControl("clear"), at=1600)  # the 1001st: its record is dropped, not its effect
        heard.append(np.concatenate([core.tick().heard for _ in range(10)]))
    assert np.array_equal(heard[0], heard[1]) and np.abs(heard[0][1600:]).max() == 0
    assert kinds(capped).count("clear") == capped.log.cap
    assert kinds(uncapped).count("clear") == capped.log.cap + 1


def test_the_dropped_counts_are_logged_once_before_call_end():
    core = CallCore(plan(turn(0)))
    for i in range(1500):
        core.receive(AssistantControl("spam", {"i": i}), at=0)
    core.receive(AssistantControl("error", {"message": "x"}), at=0)
    assert kinds(core)[-2:] == ["capped", "call_end"]
    assert first(core, ev.RecordsCapped).counts == {"control:unknown": {"received": 1500, "kept": 1000}}


def test_a_flood_of_hangups_is_one_hang_up():
    core = CallCore(plan(turn(0)))
    for _ in range(5):
        core.receive(AssistantControl("hangup", {"reason": "bye"}), at=0)
    assert kinds(core).count("hangup") == 1 and kinds(core).count("control") == 5
