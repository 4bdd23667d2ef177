"""A call on disk: a stereo WAV (caller left, assistant as heard right) and a JSONL event log.

Both are written atomically, so a killed run never leaves a half-written recording that looks complete.
Every metric can be recomputed from these two files (``callsim measure``): the event log holds every fact
of the call (:mod:`voice.core.events`); the last line, ``meta``, holds labels only (scenario, target, seed,
what the line did, pacing), never a fact that measurement needs.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.core.audio import SAMPLE_RATE, Pcm
from voice.core.events import CallEvent, CallStarted, TurnPlanned, event_from_json, event_to_json
from voice.errors import RecordingError
from voice.files import atomic_write_bytes, read_wav, write_wav


@dataclass(frozen=True)
class Recording:
    call_id: str
    caller: Pcm
    assistant: Pcm
    events: list[CallEvent]
    meta: dict[str, Any] = field(default_factory=dict)  # labels only
    sample_rate: int = SAMPLE_RATE


def recording_paths(folder: Path, call_id: str) -> tuple[Path, Path]:
    """Where a call's WAV and event log live."""
    return folder / f"{call_id}.wav", folder / f"{call_id}.events.jsonl"


def save_recording(folder: Path, rec: Recording) -> tuple[Path, Path]:
    """Write the WAV, then the event log (whose last line, ``meta``, marks the recording complete)."""
    wav, log = recording_paths(folder, rec.call_id)
    write_wav(wav, [rec.caller, rec.assistant], rec.sample_rate)
    lines = [
        json.dumps(event_to_json(e, rec.sample_rate), ensure_ascii=False, default=str) for e in rec.events
    ]
    meta = {"kind": "meta", "call_id": rec.call_id, "sample_rate": rec.sample_rate, **rec.meta}
    lines.append(json.dumps(meta, ensure_ascii=False, default=str))
    atomic_write_bytes(log, ("\n".join(lines) + "\n").encode())
    return wav, log


def load_recording(path: Path) -> Recording:
    """Load a recording from its WAV, its event log, or their common stem."""
    name = path.name
    for suffix in (".events.jsonl", ".wav"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    folder = path.parent
    wav, log = recording_paths(folder, name)
    if not wav.exists() or not log.exists():
        raise RecordingError(f"{path}: a recording needs both {wav.name} and {log.name} in {folder}")
    channels, rate = read_wav(wav)
    if len(channels) != 2:
        raise RecordingError(f"{wav}: expected 2 channels (caller, assistant), found {len(channels)}")
    events: list[CallEvent] = []
    meta: dict[str, Any] = {}
    for lineno, line in enumerate(log.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise RecordingError("not a JSON object")
            if obj.get("kind") == "meta":
                meta = {k: v for k, v in obj.items() if k != "kind"}
                continue
            events.append(event_from_json(obj))
        except (json.JSONDecodeError, RecordingError) as exc:
            raise RecordingError(f"{log}:{lineno}: malformed event: {exc}") from exc
    if not meta:
        raise RecordingError(f"{log}: no meta line; the recording is incomplete")
    return Recording(name, channels[0], channels[1], _from_old_meta(events, meta), meta, rate)


def _from_old_meta(events: Sequence[CallEvent], meta: Mapping[str, Any]) -> list[CallEvent]:
    """Recordings made before 0.2 kept the references in ``meta``: move them into the plan events."""
    refs, greeting = meta.get("references"), meta.get("greeting_reference")
    if not isinstance(refs, list) and not isinstance(greeting, str):
        return list(events)
    refs = refs if isinstance(refs, list) else []
    out: list[CallEvent] = []
    for e in events:
        if isinstance(e, TurnPlanned) and e.reference is None and 0 <= e.turn < len(refs):
            ref = refs[e.turn]
            e = dataclasses.replace(e, reference=ref if isinstance(ref, str) else None)
        elif isinstance(e, CallStarted) and e.greeting_reference is None and isinstance(greeting, str):
            e = dataclasses.replace(e, greeting_reference=greeting)
        out.append(e)
    return out
