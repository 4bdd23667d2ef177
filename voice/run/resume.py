"""Resuming a run folder: what a folder already holds, and whether it may be reused.

A target folder's ``run.json`` holds the settings fingerprint its calls were made with; a rerun with other
settings is refused.  A call is finished when its ``<call>.metrics.json`` exists (written atomically and
last), is readable, and was made from the same dialogue content; anything else is made again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from voice.dialogues import Dialogue
from voice.errors import ConfigError
from voice.metrics.measure import BargeIn, CallMetrics, TurnMetrics
from voice.metrics.results import write_json


def dialogue_sha(d: Dialogue) -> str:
    """A short content hash, so an edited dialogue is called again instead of reusing an old result."""
    text = json.dumps(dataclasses.asdict(d), ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_resumable(out_dir: Path, fingerprint: dict[str, Any]) -> None:
    """Refuse to mix calls made with different settings in one folder."""
    run_file = out_dir / "run.json"
    if run_file.exists():
        try:
            previous = json.loads(run_file.read_text(encoding="utf-8")).get("settings")
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{run_file}: unreadable ({exc}); remove it or choose another --out") from exc
        if previous != fingerprint:
            raise ConfigError(
                f"{out_dir} holds a run made with other settings; choose another --out or remove it"
            )
    write_json(run_file, {"settings": fingerprint})


def remove_partial_files(folder: Path) -> int:
    """Delete temporary files a killed writer left behind (``atomic_write_bytes`` names them ``.*.tmp``)."""
    stale = list(folder.glob(".*.tmp"))
    for p in stale:
        p.unlink(missing_ok=True)
    return len(stale)


def metrics_path(out_dir: Path, call_id: str) -> Path:
    return out_dir / f"{call_id}.metrics.json"


def load_done(out_dir: Path, call_id: str) -> dict[str, Any] | None:
    """A completed call's metrics JSON, or None (absent or unreadable: the call is made again)."""
    path = metrics_path(out_dir, call_id)
    if not path.exists():
        return None
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data
    except (OSError, json.JSONDecodeError):
        return None


def metrics_from_json(d: dict[str, Any]) -> CallMetrics:
    """Rebuild :class:`CallMetrics` from its JSON form (for resumed runs, reports and comparisons)."""
    turn_fields = {f.name for f in dataclasses.fields(TurnMetrics)}
    turns = []
    for t in d["turns"]:
        t = {k: v for k, v in t.items() if k in turn_fields}
        if t.get("barge_in") is not None:
            t["barge_in"] = BargeIn(**t["barge_in"])
        if "rhythm_reasons" in t:
            t["rhythm_reasons"] = tuple(t["rhythm_reasons"])
        turns.append(TurnMetrics(**t))
    fields = {f.name for f in dataclasses.fields(CallMetrics)}
    speech = [(float(s), float(e)) for s, e in d.get("assistant_speech_ms", [])]
    kept = {k: v for k, v in d.items() if k in fields}
    return CallMetrics(**{**kept, "turns": turns, "assistant_speech_ms": speech})


def kept_call(out_dir: Path, call_id: str, sha: str) -> dict[str, Any] | None:
    """A finished call to reuse: metrics on disk for the same dialogue content."""
    done = load_done(out_dir, call_id)
    if done is None or done.get("dialogue_sha", sha) != sha:
        return None
    return done
