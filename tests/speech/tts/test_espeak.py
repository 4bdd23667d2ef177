"""espeak-ng through its binary (skipped where the binary is not installed)."""

import shutil
import time

import numpy as np
import pytest

from voice.core.audio import SAMPLE_RATE, active_bounds
from voice.errors import EngineError, EngineUnavailable
from voice.speech.tts.engine import EDGE_PAD_SAMPLES
from voice.speech.tts.espeak import EspeakTTS, parse_wav

needs_espeak = pytest.mark.skipif(
    shutil.which("espeak-ng") is None, reason="espeak-ng binary not installed (apt-get install espeak-ng)"
)


@needs_espeak
def test_synthesizes_fast_16khz_int16_with_trimmed_edges():
    tts = EspeakTTS()
    started = time.perf_counter()
    audio = tts.synthesize("你好，我想查询一下明天北京的天气。")
    assert time.perf_counter() - started < 1.0
    assert audio.dtype == np.int16
    assert 2.5 <= len(audio) / SAMPLE_RATE <= 6.0
    assert active_bounds(audio) == (EDGE_PAD_SAMPLES, len(audio) - EDGE_PAD_SAMPLES)


@needs_espeak
def test_text_is_never_read_as_an_option_and_bad_voices_fail_clearly():
    assert len(EspeakTTS().synthesize("--help")) > 0
    with pytest.raises(EngineError, match="voice"):
        EspeakTTS("xx-no-such-voice").synthesize("你好")
    assert EspeakTTS(wpm=200).params() == {"voice": "cmn", "wpm": "200", "reading": "1"}
    assert EspeakTTS("en", wpm=200).params() == {"voice": "en", "wpm": "200"}


@needs_espeak
def test_a_mandarin_voice_speaks_the_callers_reading():
    """8:45 is said 八点四十五 (the reading), not 八 四十五 (espeak-ng's own): same audio as the reading."""
    tts = EspeakTTS()
    assert np.array_equal(tts.synthesize("明早8:45到"), tts.synthesize("明早八点四十五到"))
    assert np.array_equal(tts.synthesize("发我Excel表"), tts.synthesize("发我艾克赛尔表"))
    english = EspeakTTS("en")
    assert not np.array_equal(english.synthesize("8:45"), english.synthesize("八点四十五"))


def test_missing_binary_names_the_package_to_install():
    with pytest.raises(EngineUnavailable, match="apt-get install espeak-ng"):
        EspeakTTS(binary="espeak-ng-not-here")


def test_parse_wav_reads_a_streamed_header_with_placeholder_sizes():
    import struct

    samples = (np.arange(100, dtype=np.int16) * 50).astype("<i2").tobytes()
    header = (
        b"RIFF" + struct.pack("<I", 0x7FFFFFFF) + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, 22050, 44100, 2, 16)
        + b"data" + struct.pack("<I", 0x7FFFFFFF)
    )  # fmt: skip
    pcm, rate = parse_wav(header + samples)
    assert rate == 22050 and len(pcm) == 100 and pcm[3] == 150
