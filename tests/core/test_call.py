"""The I/O-free call core on virtual time, against the ground-truth reference assistant (in memory)."""

import numpy as np

from tests.fakes import plan, reference, run_core, tone, turn
from voice.core.audio import ms_to_samples, rms_dbfs
from voice.core.call import AssistantAudio, AssistantControl, CallCore, EnergyDetector, LineClosed


def kinds(core: CallCore) -> list[str]:
    return [e.kind for e in core.events]


def first(core: CallCore, kind: str) -> dict:
    return next(dict(e.data) for e in core.events if e.kind == kind)


def test_a_normal_call_completes_and_logs_every_decision():
    core = CallCore(plan(turn(0), turn(1)))
    run_core(core, reference())
    assert core.outcome is not None and core.outcome.reason == "completed" and not core.outcome.failed
    k = kinds(core)
    assert k[0] == "call_start" and k.count("turn_plan") == 2
    assert k.count("caller_turn") == 2 and k.count("reply_onset") == 3  # greeting + two replies
    assert k[-1] == "call_end"
    t0 = first(core, "caller_turn")
    assert t0["mode"] == "after_reply"


def test_the_caller_waits_its_think_time_after_the_reply_ends():
    core = CallCore(plan(turn(0, think_ms=900), end_of_reply_ms=700))
    run_core(core, reference(greeting_ms=300, reply_len_ms=1000))
    greeting_end = ms_to_samples(1300)
    start = first(core, "caller_turn")["audio_start"]
    assert start == greeting_end + ms_to_samples(900)


def test_silent_assistant_ends_the_call_as_a_failure_without_hanging():
    core = CallCore(plan(turn(0), turn(1), response_timeout_ms=2000, max_missed_replies=2))
    run_core(core, reference(greeting_ms=None, reply_ms=10**9))
    assert core.outcome is not None and core.outcome.reason == "assistant_silent" and core.outcome.failed
    assert kinds(core).count("no_response") == 2


def test_barge_in_starts_exactly_at_the_offset_into_the_reply():
    core = CallCore(plan(turn(0), turn(1, barge_in_ms=800)))
    run_core(core, reference(reply_len_ms=4000, stop_ms=250))
    b = first(core, "barge_in")
    assert b["offset"] == ms_to_samples(800)
    assert b["at"] == b["reply_onset"] + ms_to_samples(800)
    assert "clear" in kinds(core)


def test_barge_in_is_skipped_when_the_reply_ends_first():
    core = CallCore(plan(turn(0), turn(1, barge_in_ms=5000)))
    run_core(core, reference(reply_len_ms=1000))
    assert "barge_in" not in kinds(core)
    assert first(core, "barge_in_skipped")["turn"] == 1


def test_backchannel_is_played_while_the_assistant_talks():
    core = CallCore(plan(turn(0), turn(1, backchannel_at_ms=600)))
    heard = run_core(core, reference(reply_len_ms=3000, stop_ms=None))
    bc = first(core, "backchannel")
    onset = next(e.data["at"] for e in core.events if e.kind == "reply_onset" and e.data["turn"] == 0)
    assert bc["start"] - onset < ms_to_samples(600) + ms_to_samples(40)
    assert len(heard) > 0


def test_assistant_hangup_drains_buffered_audio_then_ends():
    core = CallCore(plan(turn(0), turn(1), turn(2)))
    run_core(core, reference(hangup_after_turns=1))
    assert core.outcome is not None and core.outcome.reason == "assistant_hangup" and not core.outcome.failed
    end = first(core, "call_end")
    assert end["caller_turns_started"] == 2


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
    rx = [e for e in core.events if e.kind == "rx"][-1]
    assert rx.data["start"] == 5 * 320 and rx.data["arrival"] == 10
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


def test_energy_detector_floor_is_the_rms_level_in_dbfs():
    det = EnergyDetector(floor_dbfs=-50.0)
    quiet, loud = (np.full(320, v, dtype=np.int16) for v in (90, 120))  # -51.2 and -48.7 dBFS
    assert rms_dbfs(quiet) < -50 < rms_dbfs(loud)
    assert det.active(quiet) is None and det.active(np.zeros(320, np.int16)) is None
    assert det.active(loud) == (0, 320)  # below the sample threshold: the whole frame
    spike = np.zeros(320, dtype=np.int16)
    spike[100:140] = 3000
    assert det.active(spike) == (100, 140)
    assert det.active(np.zeros(0, np.int16)) is None
