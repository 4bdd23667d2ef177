"""A call on disk: a stereo WAV (caller left, assistant as heard right) and a JSONL event log.

Both are written atomically, so a killed run never leaves a half-written recording that looks complete.
A run streams the event log as the call goes (:class:`EventStream`: ``<call>.events.jsonl.partial``,
whole lines only, renamed to ``<call>.events.jsonl`` once the WAV is saved), so a call's records are
not all held in memory and a crash leaves a readable partial log (every line a complete record, no
``meta``: :func:`load_recording` calls it incomplete).
Every metric can be recomputed from these two files (``callsim measure``): the event log holds every fact
of the call (:mod:`voice.core.events`); the last line, ``meta``, holds labels only (scenario, target, seed,
what the line did, pacing), never a fact that measurement needs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from voice.core.audio import SAMPLE_RATE, Pcm
from voice.core.event_json import RX_RUN, JsonObject, JsonValue, RxRuns, event_from_json, expand_rx_run
from voice.core.events import CallEvent, CallStarted, TurnPlanned
from voice.errors import LineError, RecordingError
from voice.files import AUDIO_FORMATS, atomic_write_bytes, read_audio, write_audio

PARTIAL_SUFFIX = ".partial"  # an event log still being written (or left by a crash)
FLUSH_BYTES = 64 * 1024  # a streamed log is written out once this much is waiting ...
FLUSH_SAMPLES = SAMPLE_RATE  # ... or once a record is this far (1 s of call time) past the last write


@dataclass(frozen=True)
class Recording:
    call_id: str
    caller: Pcm
    assistant: Pcm
    events: list[CallEvent]
    # labels only: the log's last line as written or read (the run's labels are open, so a JSON object;
    # what the driver adds to them is typed there: voice.app.run.driver.RunMeta)
    meta: JsonObject = field(default_factory=dict)
    sample_rate: int = SAMPLE_RATE


def recording_paths(folder: Path, call_id: str, audio: str | None = None) -> tuple[Path, Path]:
    """Where a call's audio and event log live: the audio as ``audio`` (``wav``, ``flac``) or, by default,
    whichever of them is on disk (``.wav`` if neither is)."""
    log = folder / f"{call_id}.events.jsonl"
    if audio is not None:
        return folder / f"{call_id}.{audio}", log
    for fmt in AUDIO_FORMATS:
        if (folder / f"{call_id}.{fmt}").exists():
            return folder / f"{call_id}.{fmt}", log
    return folder / f"{call_id}.wav", log


def save_recording(
    folder: Path, rec: Recording, stream: EventStream | None = None, audio: str = "wav"
) -> tuple[Path, Path]:
    """Write the audio (``audio``: ``wav`` or lossless ``flac``), then the event log (whose last line,
    ``meta``, marks the recording complete).

    ``stream``: the call's log was streamed (:class:`EventStream`), so ``rec.events`` may lack records
    that are on disk only; the streamed file is completed with ``meta`` and renamed instead.
    """
    if audio not in AUDIO_FORMATS:
        raise RecordingError(f"recording format {audio!r}: choose {' or '.join(AUDIO_FORMATS)}")
    wav, log = recording_paths(folder, rec.call_id, audio)
    for other in AUDIO_FORMATS:  # a call made again in the other format leaves one audio file
        if other != audio:
            recording_paths(folder, rec.call_id, other)[0].unlink(missing_ok=True)
    if stream is not None:
        try:
            write_audio(wav, [rec.caller, rec.assistant], rec.sample_rate)
            stream.finish(_meta_line(rec))
        finally:
            stream.close()  # a no-op once finished; else the partial log is left as it is
        return wav, log
    write_audio(wav, [rec.caller, rec.assistant], rec.sample_rate)
    runs = RxRuns(rec.sample_rate)
    objs = [obj for e in rec.events for obj in runs.add(e)] + runs.take()
    lines = [_json_line(obj) for obj in objs]
    lines.append(_meta_line(rec))
    atomic_write_bytes(log, b"".join(lines))
    return wav, log


def _json_line(obj: JsonObject) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, default=str) + "\n").encode()


def _meta_line(rec: Recording) -> bytes:
    return _json_line({"kind": "meta", "call_id": rec.call_id, "sample_rate": rec.sample_rate, **rec.meta})


class EventStream:
    """A call's event log, appended to ``<call>.events.jsonl.partial`` as the call runs.

    :meth:`write` is the core's event sink (:meth:`voice.core.eventlog.EventLog.stream_to`).  Records wait
    in a small buffer and go out as whole lines, at least once per second of call time; a failed write is
    cut back to the last whole line, so the partial file is always a valid log prefix.  :meth:`finish`
    appends ``meta``, syncs and renames the file to its final name (atomic, like every file of a run).
    The file is created (or a stale partial from a crash truncated) when the stream is made.
    """

    def __init__(self, folder: Path, call_id: str, rate: int = SAMPLE_RATE) -> None:
        self.path = recording_paths(folder, call_id)[1]
        self.partial = self.path.with_name(self.path.name + PARTIAL_SUFFIX)
        self.rate = rate
        folder.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(self.partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        self._waiting: list[bytes] = []
        self._waiting_bytes = 0
        self._written = 0  # bytes of whole lines in the file
        self._written_t = 0  # call time of the last write
        self._runs = RxRuns(rate)  # consecutive rx records wait here to become one line

    def write(self, event: CallEvent) -> None:
        """Append one record (written out within ``FLUSH_BYTES`` or one second of call time)."""
        for obj in self._runs.add(event):
            line = _json_line(obj)
            self._waiting.append(line)
            self._waiting_bytes += len(line)
        if self._waiting_bytes >= FLUSH_BYTES or event.t - self._written_t >= FLUSH_SAMPLES:
            self._written_t = event.t
            self.flush()

    def flush(self) -> None:
        """Write out what waits, as whole lines (a failed write leaves the file as it was); a run of audio
        records still growing waits for its end (less than a second of call time)."""
        if self._fd is None or not self._waiting:
            return
        data = memoryview(b"".join(self._waiting))
        self._waiting, self._waiting_bytes = [], 0
        try:
            done = 0
            while done < len(data):
                done += os.write(self._fd, data[done:])
        except OSError:
            os.ftruncate(self._fd, self._written)
            os.lseek(self._fd, self._written, os.SEEK_SET)
            raise
        self._written += len(data)

    def finish(self, meta_line: bytes) -> Path:
        """Complete the log with its ``meta`` line and give it its final name; returns that path."""
        if self._fd is None:
            raise RecordingError(f"{self.partial}: the event stream is already closed")
        self._waiting.extend(_json_line(obj) for obj in self._runs.take())  # the last run, then meta
        self._waiting.append(meta_line)
        self.flush()
        os.fsync(self._fd)
        self.close()
        os.replace(self.partial, self.path)
        return self.path

    def close(self) -> None:
        """Write out what waits and close the file, leaving the partial log (a call that did not finish)."""
        if self._fd is None:
            return
        try:
            self._waiting.extend(_json_line(obj) for obj in self._runs.take())
            self.flush()
        finally:
            os.close(self._fd)
            self._fd = None

    def discard(self) -> None:
        """Close and delete the partial log (a call that never connected leaves nothing behind)."""
        self._waiting = []
        self._runs.take()
        self.close()
        self.partial.unlink(missing_ok=True)


@contextlib.contextmanager
def streamed_events(folder: Path, call_id: str) -> Iterator[EventStream]:
    """A call's :class:`EventStream` for the length of the call, so that its records go to disk as they happen
    (a chatty bot cannot fill the memory with them).

    A call that never connected (a :class:`~voice.errors.LineError`) leaves no log; one that broke any other
    way keeps its partial log, whole lines only, for a post-mortem; a call that ran leaves the stream open
    for :func:`save_recording` to finish.
    """
    stream = EventStream(folder, call_id)
    try:
        yield stream
    except LineError:
        stream.discard()
        raise
    except BaseException:
        stream.close()
        raise


def load_recording(path: Path) -> Recording:
    """Load a recording from its audio (WAV or FLAC), its event log, or their common stem."""
    if path.is_dir():
        n = len(list(path.glob("*.events.jsonl")))
        held = f"{n} there" if n else "it holds none: a run keeps them in each target's folder"
        example = path / "*.events.jsonl"
        raise RecordingError(f"{path}: a folder; name its recordings, e.g. {example} ({held})")
    name = path.name
    for suffix in (".events.jsonl", *(f".{fmt}" for fmt in AUDIO_FORMATS)):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    folder = path.parent
    wav, log = recording_paths(folder, name)
    if not wav.exists() or not log.exists():
        raise RecordingError(f"{path}: a recording needs both {wav.name} and {log.name} in {folder}")
    channels, rate = read_audio(wav)
    if len(channels) != 2:
        raise RecordingError(f"{wav}: expected 2 channels (caller, assistant), found {len(channels)}")
    events: list[CallEvent] = []
    meta: dict[str, JsonValue] = {}
    lines = _event_lines(log)
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise RecordingError("not a JSON object")
            if obj.get("kind") == "meta":
                meta = {k: v for k, v in obj.items() if k != "kind"}
                continue
            if obj.get("kind") == RX_RUN:
                events.extend(expand_rx_run(obj))
                continue
            events.append(event_from_json(obj))
        except (ValueError, KeyError, TypeError, RecordingError) as exc:  # JSON, or an event's fields
            cut = " (the last line: was the file cut short?)" if lineno == len(lines) else ""
            raise RecordingError(f"{log}:{lineno}: malformed event{cut}: {exc}") from exc
    if not meta:
        raise RecordingError(f"{log}: no meta line; the recording is incomplete")
    return Recording(name, channels[0], channels[1], _from_old_meta(events, meta), meta, rate)


def _event_lines(log: Path) -> list[str]:
    """The event log's lines; a file cut inside a character (a copy stopped short) says so, by line."""
    data = log.read_bytes()
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        lineno = data.count(b"\n", 0, exc.start) + 1
        cut = " (cut inside a character: the file ends there)" if exc.end >= len(data) else ""
        raise RecordingError(f"{log}:{lineno}: not UTF-8 text at byte {exc.start}{cut}") from exc


def _from_old_meta(events: Sequence[CallEvent], meta: JsonObject) -> list[CallEvent]:
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
