"""Edge cases of the metrics, on hand-built recordings: every boundary is placed exactly."""

import asyncio
import dataclasses

import numpy as np
import pytest

from tests.fakes import caller_turn_event, plan, reference, run_core, tone, turn
from voice.app.run.driver import run_call
from voice.core import events as ev
from voice.core.audio import ms_to_samples
from voice.core.call import AssistantAudio, AssistantControl, CallCore, LineInput
from voice.core.caller import CallerTiming
from voice.core.clock import VirtualClock
from voice.dialogues import parse_dialogue
from voice.lines.line import CallStart
from voice.lines.memory import MemoryLine
from voice.metrics.measure import measure
from voice.recording import Recording
from voice.speech.caller_plan import plan_call
from voice.speech.tts.memory import MemoryTTS

S = ms_to_samples


def synthetic(length_ms, assistant_ms, turns, extra=(), greeting=True):
    """A recording whose assistant channel sounds exactly during ``assistant_ms`` spans."""
    audio = np.zeros(S(length_ms), np.int16)
    for a, b in assistant_ms:
        audio[S(a) : S(b)] = tone(b - a)[: S(b) - S(a)]
    events: list[ev.CallEvent] = [ev.CallStarted(0, "x", len(turns), greeting)]
    events += [ev.TurnPlanned(0, i, "x") for i in range(len(turns))]
    events += [caller_turn_event(i, cs, ce, **more) for i, (cs, ce, more) in enumerate(turns)]
    events += list(extra)
    events.append(ev.CallEnded(len(audio), "completed", False))
    return Recording("x", np.zeros_like(audio), audio, events)


def test_a_reply_that_starts_before_the_caller_ends_is_negative_talk_over():
    rec = synthetic(6000, [(1800, 3500)], [(1000, 2000, {})])
    t = measure(rec).turns[0]
    assert t.latency_ms == pytest.approx(-200, abs=1)
    assert t.overlap_ms == pytest.approx(200, abs=1)
    assert t.rhythm == 2 and "before the caller finished" in t.rhythm_reasons[0]


def test_no_reply_scores_one_and_has_no_latency():
    t = measure(synthetic(5000, [], [(1000, 2000, {})])).turns[0]
    assert t.latency_ms is None and not t.replied and t.rhythm == 1


def test_a_barge_in_during_a_long_silence_is_not_counted_as_a_barge_in():
    # the assistant paused 800 ms mid-reply; the caller cut in 500 ms into that silence
    barge = ev.BargedIn(S(3300), 0, S(3300), reply_onset=0, offset=0)
    rec = synthetic(
        8000, [(500, 2800), (3600, 4000), (5200, 6000)], [(3300, 4500, {"mode": "barge_in"})], extra=[barge]
    )
    m = measure(rec)
    b = m.turns[0].barge_in
    assert b is not None and not b.active and not b.success
    assert m.barge_ins == []  # inactive barge-ins do not count in success rates


def test_a_barge_in_in_a_short_gap_counts_and_stop_is_the_end_of_the_run():
    barge = ev.BargedIn(S(2900), 0, S(2900), reply_onset=0, offset=0)
    rec = synthetic(8000, [(500, 2800), (3000, 3400)], [(2900, 4500, {"mode": "barge_in"})], extra=[barge])
    b = measure(rec).turns[0].barge_in
    assert b is not None and b.active and b.stop_latency_ms == pytest.approx(500, abs=1) and b.success


def test_a_backchannel_overlapping_the_reply_end_says_nothing():
    bc = ev.BackchannelSaid(S(2700), 0, "嗯", S(2700), S(2900))
    rec = synthetic(8000, [(500, 2800), (5000, 6000)], [(4000, 4600, {})], extra=[bc])
    assert measure(rec).turns[0].backchannel_carried_on is None


def test_stopping_and_answering_a_backchannel_is_not_carrying_on():
    bc = ev.BackchannelSaid(S(1500), 0, "嗯", S(1500), S(1700))
    # the reply stops at 1800 and the assistant speaks again at 2600, before the caller's turn at 4000
    rec = synthetic(8000, [(500, 1800), (2600, 3000), (5000, 6000)], [(4000, 4600, {})], extra=[bc])
    t = measure(rec).turns[0]
    assert t.backchannel_carried_on is False and "backchannel" in " ".join(t.rhythm_reasons)


def test_carrying_on_through_a_backchannel():
    bc = ev.BackchannelSaid(S(1000), 0, "嗯", S(1000), S(1200))
    rec = synthetic(8000, [(500, 3000), (5000, 6000)], [(4000, 4600, {})], extra=[bc])
    assert measure(rec).turns[0].backchannel_carried_on is True


def test_the_answer_owed_to_an_ignored_barge_in_is_not_a_reaction_to_a_later_backchannel():
    # turn 0 barges in at 1500 but the reply talks on to 3000; 嗯 at 2900; then the answer to turn 0 at 3400
    barge = ev.BargedIn(S(1500), 0, S(1500), reply_onset=0, offset=0)
    bc = ev.BackchannelSaid(S(2900), 1, "嗯", S(2900), S(3100))
    turns = [(1500, 2500, {"mode": "barge_in"}), (6000, 6600, {})]
    rec = synthetic(9000, [(500, 3000), (3400, 5000)], turns, extra=[barge, bc])
    m = measure(rec)
    assert m.turns[0].reply_onset_ms == pytest.approx(3400, abs=1)
    assert m.turns[1].backchannel_carried_on is None  # the reply simply ended; what followed was owed


def test_speaking_again_after_a_backchannel_counts_once_the_previous_turn_was_answered():
    bc = ev.BackchannelSaid(S(2900), 1, "嗯", S(2900), S(3100))
    turns = [(0, 400, {}), (6000, 6600, {})]
    rec = synthetic(9000, [(500, 3000), (3400, 5000)], turns, extra=[bc])
    assert measure(rec).turns[1].backchannel_carried_on is False  # 嗯 took the floor from the reply


def test_a_call_that_ends_mid_turn_measures_what_was_heard():
    rec = synthetic(3000, [(200, 900)], [(1500, 4500, {})])  # the caller's turn runs past the end
    m = measure(rec)
    assert m.first_word_ms == pytest.approx(200, abs=1)
    assert m.turns[0].latency_ms is None and m.turns[0].overlap_ms == 0


def test_longest_silence_and_total_overlap():
    rec = synthetic(9000, [(200, 900), (2600, 3400), (6000, 6500)], [(1200, 2000, {}), (3300, 4000, {})])
    m = measure(rec)
    assert m.longest_silence_ms == pytest.approx(2000, abs=1)  # 4000 → 6000
    assert m.overlap_ms == pytest.approx(100, abs=1)  # 3300 → 3400


def test_audio_that_arrives_in_one_burst_is_heard_in_real_time():
    core = CallCore(plan(turn(0), greeting=False))
    bot = reference(greeting_ms=None, reply_ms=10**9)  # it never replies by itself
    caller, heard = [], []
    sent = False
    while not core.done:
        tick = core.tick()
        caller.append(tick.caller)
        heard.append(tick.heard)
        bot.frame(tick.caller)
        speech_end = next((e.speech_end for e in core.events if isinstance(e, ev.CallerSpoke)), None)
        if not sent and speech_end is not None and core.now >= speech_end + S(700):
            core.receive(AssistantAudio(tone(2000)), at=core.now + 37)  # the whole reply at once
            sent, burst_at = True, core.now + 37
    rec = Recording("b", np.concatenate(caller), np.concatenate(heard), core.events)
    t = measure(rec).turns[0]
    assert t.reply_onset_ms == pytest.approx(burst_at / 16, abs=1)
    # heard for exactly its own duration from its arrival, not squeezed into the arrival frame
    assert np.abs(rec.assistant[burst_at + S(1950) : burst_at + S(1990)]).max() > 1000


# --- regressions found by scripts/bench_fidelity -------------------------------------------------------

DIALOGUE_HEAD = {"id": "x", "scenario": "delivery", "preset": {"type": "none"}, "owner_goal": "收快递",
                 "caller_goal": "送快递", "relation": "alignment"}  # fmt: skip


@pytest.mark.parametrize("late_samples", [1, 16])
def test_measure_credits_a_clear_that_arrives_as_the_assistant_falls_silent(late_samples):
    """Minimal reproduction: the assistant stops 100 ms into a backchannel and its ``clear`` arrives 1
    sample (or 1 ms) after its last sound, as a clear only can: it arrives once the audio before it has
    been heard.  measure() must still count it (it once counted clears only up to the run's last sample)."""
    audio = np.zeros(S(4000), np.int16)
    audio[S(300) : S(1300)] = tone(1000)
    events = [
        ev.TurnPlanned(0, 0, "x"),
        ev.BackchannelSaid(S(1000), 0, "嗯", S(1000), S(1200)),
        ev.PlayoutCleared(S(1300) + late_samples, 1000),
        caller_turn_event(0, 2600, 3600),
        ev.CallEnded(S(4000), "completed", False),
    ]
    rec = Recording("x", np.zeros_like(audio), audio, events)
    assert measure(rec).turns[0].backchannel_carried_on is False


def test_measure_counts_stop_latency_from_the_callers_speech_onset():
    """Minimal reproduction on virtual time, no sockets: an assistant that stops exactly 200 ms after the
    caller's first audible sample.  Every TTS engine leads its audio with EDGE_PAD_MS (30 ms) of silence,
    the barge-in onset must be the first audible sample (it was once logged at the audio start: 230 ms)."""
    turns = [{"role": "assistant", "text": "您好。"}, {"role": "caller", "text": "你好快递到了"},
             {"role": "assistant", "text": "好的。"}, {"role": "caller", "text": "放哪", "barge_in_ms": 600},
             {"role": "assistant", "text": "门口。"}]  # fmt: skip
    dialogue = parse_dialogue({**DIALOGUE_HEAD, "turns": turns})
    core = CallCore(plan_call(dialogue, MemoryTTS(), CallerTiming(seed=0)))
    heard = run_core(core, reference(reply_ms=400, stop_ms=200, reply_len_ms=3000))
    rec = Recording("x", np.zeros(1, np.int16), np.concatenate(heard), core.events)
    barge = next(t for t in measure(rec).turns if t.barge_in is not None)
    assert barge.barge_in is not None
    assert barge.barge_in.stop_latency_ms == pytest.approx(200, abs=1)


# --- edge cases found in the field, each a whole call on virtual time (docs/metrics.md "Edge cases") ----


class TapeBot:
    """An assistant that plays a fixed tape: audio or control messages at set times (ms after pick-up).

    It is deaf on purpose: each case places the assistant's speech exactly where the field reproduction
    had it, relative to the caller's plan (whose timing is known to the sample on virtual time).  What is
    due goes out with the next caller frame, so it is heard up to 20 ms (plus a tone's soft onset) late.
    """

    def __init__(self, *tape: tuple[float, str, float], reason: str = "goodbye") -> None:
        self.tape = sorted(tape)  # (at_ms, "speak" | "hangup", length_ms)
        self.frames = 0
        self.reason = reason  # a hangup's

    def on_start(self, start: CallStart) -> list[LineInput]:
        return self._due(0.0)

    def on_frame(self, pcm) -> list[LineInput]:
        self.frames += 1
        return self._due(self.frames * 20.0)

    def _due(self, now_ms: float) -> list[LineInput]:
        out: list[LineInput] = []
        while self.tape and self.tape[0][0] <= now_ms:
            _, what, length = self.tape.pop(0)
            if what == "speak":
                out.append(AssistantAudio(tone(length, f0=300.0)))
            else:
                out.append(AssistantControl(what, {"reason": self.reason}))
        return out


def call(core_plan, *tape: tuple[float, str, float], reason: str = "goodbye") -> Recording:
    trace = asyncio.run(
        run_call(
            CallCore(core_plan), MemoryLine(TapeBot(*tape, reason=reason)), VirtualClock(), CallStart("c")
        )
    )
    return trace.recording("c", {})


def test_a_caller_who_starts_during_an_unexpected_greeting_barges_in_and_the_reply_is_what_follows():
    # no opening assistant turn: the caller speaks 450 ms after pick-up, but the assistant greets anyway
    # (0-1150 ms); its real reply comes 1300 ms after the caller's end (1450 ms)
    rec = call(plan(turn(0, think_ms=450), greeting=False), (0, "speak", 1150), (2750, "speak", 800))
    m = measure(rec)
    (t,) = m.turns
    assert t.barge_in is not None and not t.barge_in.scripted and t.barge_in.active
    assert t.barge_in.stop_latency_ms == pytest.approx(700, abs=40)
    assert t.latency_ms == pytest.approx(1300, abs=40)  # not -1450: the greeting is not the reply
    assert t.rhythm == 3 and m.first_word_ms is None


def test_a_false_start_in_a_pause_is_counted_and_the_reply_is_what_goes_on_past_the_callers_end():
    # caller speaks 300-800 ms, pauses to 2000, resumes to 2500; the assistant blips 250 ms inside the pause
    # (too short to be a takeover) and again 150 ms after the caller resumed; the real reply at 4000
    p = plan(turn(0, 1000, think_ms=300, pause=(500, 1200)), greeting=False)
    rec = call(p, (1000, "speak", 250), (2100, "speak", 150), (4000, "speak", 800))
    (t,) = measure(rec).turns
    assert t.false_starts == 2 and t.pause_takeover is False
    assert t.latency_ms == pytest.approx(1500, abs=40)  # positive: the blips are not the reply
    assert t.rhythm == 2 and any("false start" in r for r in t.rhythm_reasons)


def test_speech_that_starts_before_the_callers_end_and_goes_on_is_talk_over_not_a_false_start():
    rec = call(plan(turn(0, 1000, think_ms=300), greeting=False), (1000, "speak", 1500))
    (t,) = measure(rec).turns
    assert t.false_starts == 0 and t.latency_ms == pytest.approx(-300, abs=40)


def test_turns_after_a_proper_hang_up_are_not_turns_of_the_call():
    # greeting 0-1000; turn 0 at 1720-2720 (700 ms to notice the greeting ended); reply 3120-4120; turn 1
    # from 4840; the assistant hangs up at 5200, while turn 1 is under way
    p = plan(turn(0), turn(1), turn(2))
    rec = call(p, (0, "speak", 1000), (3120, "speak", 1000), (5200, "hangup", 0))
    m = measure(rec)
    assert m.outcome == "assistant_hangup" and not m.failed
    assert [t.turn for t in m.turns] == [0] and m.turns[0].rhythm == 5
    assert m.caller_turns_cut == 2 and m.turns_of_call == 1 and m.served
    assert m.hangup_ms == pytest.approx(5200, abs=40)
    assert m.detail == "the assistant hung up: goodbye"  # why the call ended, in the reports


def test_a_hang_up_reason_that_only_says_it_hung_up_is_not_said_twice():
    def detail(reason: str) -> str:
        return measure(call(plan(turn(0)), (0, "speak", 500), (1000, "hangup", 0), reason=reason)).detail

    for said in ("assistant hung up", "The assistant hung up.", "hangup"):
        assert detail(said) == "the assistant hung up"
    assert detail("the owner is busy") == "the assistant hung up: the owner is busy"
    assert detail("") == ""  # no reason: the outcome says it all


def test_callsims_own_frame_pacing_is_read_from_the_recordings_meta():
    rec = call(plan(turn(0)), (0, "speak", 500), (3000, "speak", 500))
    pacing = rec.meta["pacing_late_ms"]  # the driver's: how late its 20 ms wake-ups were
    assert measure(rec).pacing_late_ms == {k: float(pacing[k]) for k in ("p50", "p99", "max")}
    assert measure(dataclasses.replace(rec, meta={})).pacing_late_ms is None  # a recording from before
    half = dataclasses.replace(rec, meta={"pacing_late_ms": {"p50": 1.0, "p99": "x"}})
    assert measure(half).pacing_late_ms is None  # a damaged meta is no figure, not a crash


def test_an_assistant_that_hangs_up_at_once_ran_a_call_but_did_not_serve_the_caller():
    rec = call(plan(turn(0), turn(1)), (0, "speak", 500), (1000, "hangup", 0))
    m = measure(rec)
    assert m.outcome == "assistant_hangup" and not m.failed  # the call ran
    assert m.turns == [] and m.turns_of_call == 0 and not m.served  # the assistant did not do its job


def test_turns_a_failed_call_never_reached_are_still_owed():
    rec = call(plan(turn(0), turn(1), response_timeout_ms=1000, max_missed_replies=1), (0, "speak", 500))
    m = measure(rec)
    assert m.failed and m.turns_of_call == 2 and not m.served
