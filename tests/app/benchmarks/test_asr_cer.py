"""The ASR character-error bench (``scripts/bench_asr_cer`` → ``voice/app/benchmarks/asr_cer.py``), on
doubles:
MemoryTTS speaks, a scripted transcriber hears each clip as a given text (no Whisper)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from voice.app.benchmarks import asr_cer
from voice.speech.asr import MemoryASR
from voice.speech.known_replies import builtin_replies
from voice.speech.transcribers import ASSISTANT_WHISPER, REPLY_WHISPER
from voice.speech.tts import MemoryTTS

LINES = ["你好，我找一下机主", "快递放驿站了", "验证码是四五六"]
HEARD = {
    "你好，我找一下机主": "你好我找一下机主",
    "快递放驿站了": "快地放一站了",
    "验证码是四五六": "验证码是四五六",
}


def run(argv: list[str], settings: list[Any] | None = None) -> int:
    tts = MemoryTTS()

    def transcriber(spec: str, *, whisper: Any) -> MemoryASR:
        assert spec == "whisper"
        if settings is not None:
            settings.append(whisper)
        return MemoryASR.from_pairs(((tts.synthesize(t), h) for t, h in HEARD.items()), default="")

    return asr_cer.main(argv, tts_factory=lambda name: tts, transcriber_factory=transcriber)


@pytest.fixture
def texts(tmp_path: Path) -> Path:
    path = tmp_path / "lines.txt"
    path.write_text("# lines like real calls\n" + "\n".join(LINES) + "\n\n", encoding="utf-8")
    return path


def test_json_gives_the_corpus_cer_the_worst_lines_first_and_saves_every_line(texts, tmp_path, capsys):
    saved = tmp_path / "out.json"
    assert run(["--texts", str(texts), "--json", "--worst", "2", "--save", str(saved)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["speech"] == "caller" and result["lines"] == 3
    assert 0 < result["cer"] < 1 and result["errors"] == 2  # 快地, 一站: two edits; punctuation ignored
    assert [w["text"] for w in result["worst"]] == ["快递放驿站了", "你好，我找一下机主"]
    assert result["worst"][0]["heard"] == "快地放一站了" and result["worst"][1]["cer"] == 0.0
    assert result["transcriber"] == "memory (scripted)" and "provenance" in result
    per_line = json.loads(saved.read_text(encoding="utf-8"))["per_line"]
    assert [x["text"] for x in per_line] == LINES and {x["heard"] for x in per_line} == set(HEARD.values())


def test_text_output_names_the_set_the_figures_and_the_worst_lines(texts, capsys) -> None:
    assert run(["--texts", str(texts), "--limit", "2", "--worst", "1"]) == 0
    out = capsys.readouterr().out
    assert f"{texts}: 2 lines" in out and "CER (corpus): " in out and "real-time factor" in out
    assert "快递放驿站了  →  快地放一站了" in out and "验证码" not in out  # --limit 2


def test_the_caller_gets_the_assistant_whisper_settings_and_replies_the_reply_settings(texts) -> None:
    seen: list[Any] = []
    run(["--texts", str(texts), "--prompt", "", "--beam", "3", "--json"], seen)
    assert seen[0].initial_prompt is None and seen[0].beam_size == 3
    assert seen[0].hotwords == ASSISTANT_WHISPER.hotwords
    run(["--speech", "references", "--limit", "1", "--hotwords", "机主", "--json"], seen)
    assert seen[1].initial_prompt == REPLY_WHISPER.initial_prompt and seen[1].hotwords == "机主"


def test_replies_are_the_rule_policys_as_bundled(tmp_path, capsys) -> None:
    saved = tmp_path / "out.json"
    assert run(["--speech", "replies", "--limit", "2", "--json", "--save", str(saved)]) == 0
    assert json.loads(capsys.readouterr().out)["speech"] == "replies"
    per_line = json.loads(saved.read_text(encoding="utf-8"))["per_line"]
    assert [x["text"] for x in per_line] == builtin_replies()[:2]


def test_texts_go_with_the_caller_speech_only(texts) -> None:
    with pytest.raises(SystemExit, match="--texts goes with --speech caller"):
        run(["--texts", str(texts), "--speech", "references"])


def test_an_unknown_speech_is_refused_by_the_parser(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        asr_cer.parser().parse_args(["--speech", "music"])
    assert exit_.value.code == 2 and "invalid choice: 'music'" in capsys.readouterr().err
