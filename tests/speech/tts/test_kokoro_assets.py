"""Kokoro's files: the voices checked by sha256 (missing or corrupt named), the model joined once and
checked, the npm tarball refused when it is not the pinned one; no network (a local file:// tarball)."""

import io
import tarfile

import numpy as np
import pytest

from voice.errors import EngineError, EngineUnavailable
from voice.speech.tts import kokoro_assets as assets


def _voice_bytes(seed: int) -> bytes:
    return np.random.default_rng(seed).standard_normal((510, 256)).astype("<f4").tobytes()


def test_a_missing_voice_file_is_named_with_the_fix(tmp_path):
    with pytest.raises(EngineUnavailable, match=r"zm_yunxi\.bin cannot be read .*scripts/setup"):
        assets.load_voice("zm_yunxi", tmp_path)


def test_a_corrupt_voice_file_is_named(tmp_path):
    (tmp_path / "zm_yunxi.bin").write_bytes(_voice_bytes(0))
    with pytest.raises(EngineUnavailable, match=r"zm_yunxi\.bin is corrupt"):
        assets.load_voice("zm_yunxi", tmp_path)


def test_an_unknown_voice_is_refused_with_the_known_ones(tmp_path):
    with pytest.raises(EngineError, match="known: zf_xiaobei"):
        assets.load_voice("jf_alpha", tmp_path)


def test_a_tarball_that_is_not_the_pinned_one_is_refused_and_nothing_is_kept(tmp_path):
    blob = io.BytesIO()
    with tarfile.open(fileobj=blob, mode="w:gz") as tar:
        data = _voice_bytes(1)
        info = tarfile.TarInfo("package/voices/zm_yunxi.bin")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    path = tmp_path / "kokoro-js.tgz"
    path.write_bytes(blob.getvalue())
    with pytest.raises(EngineUnavailable, match=r"is not kokoro-js 1\.2\.1's pinned"):
        assets.install_voices(tmp_path / "voices", url=path.as_uri())
    assert not (tmp_path / "voices").exists()


def test_an_unreachable_registry_says_it_is_needed_once_at_setup(tmp_path):
    with pytest.raises(EngineUnavailable, match="needed once, at set-up"):
        assets.install_voices(tmp_path / "voices", url=(tmp_path / "absent.tgz").as_uri())


def test_the_installed_voices_and_model_are_the_pinned_ones(tmp_path):
    # scripts/setup installed them into this environment: every file matches its sha256
    for name in assets.VOICE_SHA256:
        assert assets.load_voice(name).shape == (510, 256)
    model = assets.ensure_model(tmp_path)  # joined afresh from the four PyPI parts, sha256 checked
    assert model.stat().st_size == assets.MODEL_BYTES
    assert assets.ensure_model(tmp_path) == model  # once: the second call finds it


def test_a_model_of_the_wrong_size_is_joined_again(tmp_path):
    (tmp_path / assets.MODEL_NAME).write_bytes(b"half a model")
    assert assets.ensure_model(tmp_path).stat().st_size == assets.MODEL_BYTES
    assert not list(tmp_path.glob(f".{assets.MODEL_NAME}.*"))  # no staging file left behind


def test_the_vocabulary_is_kokoros():
    vocab = assets.vocabulary()
    assert len(vocab) > 100 and vocab["a"] > 0 and "↗" in vocab
