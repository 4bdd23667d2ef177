"""Resuming a run folder: what a folder already holds, and whether it may be reused.

A target folder's ``run.json`` holds the settings fingerprint its calls were made with; a rerun with other
settings is refused.  A call is finished when its ``<call>.metrics.json`` exists (written atomically and
last), is readable, and was made from the same dialogue content; anything else is made again, and so is a
call CallSim failed on (:mod:`voice.metrics.simulator`): the built-in assistant's crash cut it short
(``assistant_crashed``), or a caller line could not be voiced (``caller_speech_failed``).  A malformed
metrics file (``{}``, truncated, edited by hand) is never an error: that call is made again, and the
resume's note says so.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from voice.app.run.failures import REDONE_ON_RESUME
from voice.dialogues import Dialogue
from voice.errors import ConfigError
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.model.call_record import CallRecord
from voice.metrics.model.jsonio import Fields, JsonObject, write_json
from voice.metrics.model.run_results import Settings, settings_diff
from voice.metrics.simulator import ASSISTANT_CRASHED
from voice.recording import recording_paths


def dialogue_sha(d: Dialogue) -> str:
    """A short content hash, so an edited dialogue is called again instead of reusing an old result."""
    fields = dataclasses.asdict(d)
    for pin in ("caller_voice", "caller_sex"):  # unpinned: the hash dialogues had before pins existed
        if fields.get(pin) is None:
            fields.pop(pin, None)
    text = json.dumps(fields, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_resumable(out_dir: Path, fingerprint: Settings) -> bool:
    """Refuse to mix calls made with different settings in one folder; True if the folder holds a run.

    The folder's settings are read as :class:`~voice.metrics.model.run_results.Settings` reads them, so a
    folder written before a population's settings left out ``tts`` resumes (nothing else changed)."""
    run_file = out_dir / "run.json"
    resuming = run_file.exists()
    if resuming:
        try:
            doc = Fields(json.loads(run_file.read_text(encoding="utf-8")), "run.json")
            written = doc.opt_obj("settings")
        except (OSError, ValueError, RecursionError) as exc:
            raise ConfigError(f"{run_file}: unreadable ({exc}); remove it or choose another --out") from exc
        previous = None if written is None else Settings.from_json(written)
        if previous != fingerprint:
            old = None if previous is None else previous.to_json()
            raise ConfigError(
                f"{out_dir} holds a run made with other settings ("
                + "; ".join(settings_diff(old, fingerprint.to_json()))
                + "): rerun with its settings to resume, --fresh to start it over, or choose another --out"
            )
    write_json(run_file, {"settings": fingerprint.to_json()})
    return resuming


def remove_partial_files(folder: Path) -> int:
    """Delete temporary files a killed writer left behind (``atomic_write_bytes`` names them ``.*.tmp``)."""
    stale = list(folder.glob(".*.tmp"))
    for p in stale:
        p.unlink(missing_ok=True)
    return len(stale)


def metrics_path(out_dir: Path, call_id: str) -> Path:
    return out_dir / f"{call_id}.metrics.json"


def load_done(out_dir: Path, call_id: str) -> JsonObject | None:
    """A completed call's metrics JSON, or None (absent or unreadable: the call is made again)."""
    path = metrics_path(out_dir, call_id)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


# Why a call of a resumed folder is made (again), in the order a resume lists them.
REDO_WHY = {
    "failed": "failed earlier, retried",
    "crashed": "the assistant crashed during it",
    "unvoiced": "its caller's speech failed (CallSim's failure)",
    "edited": "dialogue edited since",
    "unreadable": "unreadable metrics",
    "cut": "cut short, a recording without metrics",
    "missing": "not made yet",
}


def previous_call(
    out_dir: Path, call_id: str, sha: str, *, retry_failed: bool = False
) -> tuple[CallMetrics | None, str]:
    """The finished call to keep, or None and why it is made (again): a key of :data:`REDO_WHY`.

    A call is kept when its metrics file is readable and was made from the same dialogue content; a failed
    call too, unless ``retry_failed`` (or CallSim failed on it: always made again).
    """
    path = metrics_path(out_dir, call_id)
    if not path.exists():
        return None, "cut" if recording_paths(out_dir, call_id)[0].exists() else "missing"
    try:
        done = CallRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
    except Exception:  # whatever a damaged or hand-edited file holds, the call is simply made again
        return None, "unreadable"
    metrics = done.metrics
    if done.labels.get("dialogue_sha", sha) != sha:
        return None, "edited"
    if metrics.outcome in REDONE_ON_RESUME:
        return None, "crashed" if metrics.outcome == ASSISTANT_CRASHED else "unvoiced"
    if retry_failed and metrics.failed:
        return None, "failed"
    return metrics, ""


def _ids(ids: list[str], most: int = 5) -> str:
    return ", ".join(ids[:most]) + (f" and {len(ids) - most} more" if len(ids) > most else "")


@dataclass
class ResumeTally:
    """What a resumed folder held: the calls kept (and which of those failed), and why others are made."""

    kept: int = 0
    kept_failed: list[str] = field(default_factory=list)
    redo: dict[str, list[str]] = field(default_factory=lambda: {why: [] for why in REDO_WHY})

    def add(self, call_id: str, kept: CallMetrics | None, why: str) -> None:
        if kept is not None:
            self.kept += 1
            if kept.failed:
                self.kept_failed.append(call_id)
        else:
            self.redo[why].append(call_id)

    def summary(self) -> str:
        """``kept 5 (1 failed: k-1; --retry-failed makes it again); making 2: 1 not made yet (k-4), …``"""
        text = f"kept {self.kept} finished call(s)"
        if self.kept_failed:
            text += f" ({len(self.kept_failed)} failed: {_ids(self.kept_failed)}; --retry-failed redoes them)"
        making = [(REDO_WHY[why], ids) for why, ids in self.redo.items() if ids]
        if making:
            total = sum(len(ids) for _, ids in making)
            text += f"; making {total}: " + "; ".join(f"{len(ids)} {w} ({_ids(ids)})" for w, ids in making)
        return text


# --- --fresh: a folder started over --------------------------------------------------------------------

FRESH_TRASH = ".fresh-"  # ``.<folder>.fresh-<token>``: a folder set aside, being deleted


def clear_leftovers(folder: Path) -> None:
    """Delete what a killed ``--fresh`` left set aside next to ``folder`` (it is no longer a run)."""
    for p in folder.parent.glob(f".{folder.name}{FRESH_TRASH}*"):
        shutil.rmtree(p, ignore_errors=True)


def start_over(folder: Path) -> int | None:
    """Remove a target folder's earlier run at once; the number of finished calls it held (None: no folder).

    The folder is renamed aside first (atomic), then deleted: a run killed at any point leaves either the
    whole earlier run or none of it, never a folder with some of its calls gone.
    """
    if not folder.exists():
        return None
    calls = sum(1 for _ in folder.glob("*.metrics.json"))
    aside = folder.with_name(f".{folder.name}{FRESH_TRASH}{secrets.token_hex(4)}")
    os.replace(folder, aside)
    shutil.rmtree(aside, ignore_errors=True)
    return calls


def open_folder(
    out: Path,
    fingerprint: Settings,
    calls: Sequence[tuple[str, str]],
    *,
    retry_failed: bool = False,
    fresh: bool = False,
) -> tuple[list[CallMetrics | None], str]:
    """Ready a target folder for a run and find the calls (``(call id, dialogue sha)``) it keeps.

    Returns each call's kept metrics (None: make it) and what to tell the user: what ``--fresh`` deleted,
    or what a resumed folder kept and why it makes the others; empty for a new folder.
    """
    clear_leftovers(out)
    removed = start_over(out) if fresh else None
    out.mkdir(parents=True, exist_ok=True)
    remove_partial_files(out)
    resuming = check_resumable(out, fingerprint)
    found = [previous_call(out, cid, sha, retry_failed=retry_failed) for cid, sha in calls]
    kept = [metrics for metrics, _ in found]
    if removed is not None:
        return kept, f"--fresh: started over, deleted the earlier run ({removed} finished call(s))"
    if not resuming:
        return kept, ""
    tally = ResumeTally()
    for (cid, _), (metrics, why) in zip(calls, found, strict=True):
        tally.add(cid, metrics, why)
    return kept, "resuming: " + tally.summary()
