"""A call on disk: a stereo WAV (caller left, assistant as heard right) and a JSONL event log.

Both are written atomically, so a killed run never leaves a half-written recording that looks complete.
Every metric can be recomputed from these two files (``callsim measure``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.core.audio import SAMPLE_RATE, Pcm, samples_to_ms
from voice.core.call import CallEvent
from voice.errors import RecordingError
from voice.files import atomic_write_bytes, read_wav, write_wav


@dataclass(frozen=True)
class Recording:
    call_id: str
    caller: Pcm
    assistant: Pcm
    events: list[CallEvent]
    meta: dict[str, Any] = field(default_factory=dict)
    sample_rate: int = SAMPLE_RATE


def recording_paths(folder: Path, call_id: str) -> tuple[Path, Path]:
    """Where a call's WAV and event log live."""
    return folder / f"{call_id}.wav", folder / f"{call_id}.events.jsonl"


def event_to_json(event: CallEvent, rate: int = SAMPLE_RATE) -> dict[str, Any]:
    return {"t": event.t, "ms": round(samples_to_ms(event.t, rate), 3), "kind": event.kind, **event.data}


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
            kind = obj.pop("kind")
            if kind == "meta":
                meta = obj
                continue
            t = int(obj.pop("t"))
            obj.pop("ms", None)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RecordingError(f"{log}:{lineno}: malformed event: {exc}") from exc
        events.append(CallEvent(t, kind, obj))
    if not meta:
        raise RecordingError(f"{log}: no meta line; the recording is incomplete")
    return Recording(name, channels[0], channels[1], events, meta, rate)
