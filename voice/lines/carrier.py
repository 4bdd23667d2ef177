"""What the carriers' codecs share: parsing a bot's JSON, its ids, its marks, its hang-up by closing.

Each carrier CallSim plays (Telnyx, Plivo, Exotel, Vonage, Genesys AudioHook; pipecat's own protobuf
websocket) is a pure :class:`~voice.lines.ws_shell.LineCodec` of its own module, on the one websocket
line shell.  They differ in field names and encodings, not in what they must refuse or how they keep a
bot's marks, so those pieces live here once:

* :func:`json_event`: a text message that must be a JSON object naming its kind in a string field;
  anything else (binary where the carrier sends JSON, bad JSON, absurd nesting) is a
  ``LineClosed("protocol_error: ...")``, never an exception.
* :func:`base64_field`, :func:`check_id`: a base64 payload and the bot naming another stream.
* :func:`passed_on`: an event the carrier does not define is recorded, not obeyed (``log``, CallSim's
  extension, is recorded as the bot's log), with its fields bounded.
* :class:`PlayoutAcks`: the carrier's "tell me when this has played" (Telnyx and Exotel ``mark``, Plivo
  ``checkpoint``, Vonage ``notify``), and the acknowledgement some carriers send once a clear has taken
  effect (Plivo ``clearedAudio``, Vonage ``websocket:cleared``): each is a
  :class:`~voice.core.call.PlayoutMark` for the call core, which owns the playout and reports it played
  when its audio has been heard (or a clear dropped it); the codec answers it then, in the carrier's words.
* :func:`closed_by_bot`: on a carrier a bot hangs up by closing its websocket (or through the carrier's
  REST API, which CallSim cannot see): a normal close is the bot's hang-up.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import uuid
from collections import deque
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from websockets.exceptions import ConnectionClosed

from voice.core.call import AssistantControl, LineClosed, LineInput, PlayoutMark

SHOWN = 200  # characters of a bad message kept in a reason
MAX_PENDING_MARKS = 1000  # marks (and clear acknowledgements) waiting for their audio to play


def violation(why: str) -> LineClosed:
    """A protocol violation: the line ends with this reason."""
    return LineClosed(f"protocol_error: {why}")


def json_event(message: str | bytes, key: str, carrier: str) -> tuple[str, dict[str, Any]] | LineClosed:
    """A text message → (its kind, the object); ``key`` names the kind (``event``, Vonage's ``action``)."""
    if isinstance(message, bytes):
        return violation(f"binary message of {len(message)} bytes ({carrier} control messages are JSON text)")
    try:
        obj: Any = json.loads(message)
    except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
        return violation(f"malformed JSON: {str(exc)[:SHOWN]}")
    if not isinstance(obj, dict) or not isinstance(obj.get(key), str):
        return violation(f"not a JSON object with a string {key!r}: {message[:SHOWN]!r}")
    return obj[key], obj


def at_path(obj: dict[str, Any], *path: str) -> Any:
    """``obj[a][b]...``, or None where the path is missing or not an object."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)  # type: ignore[assignment]
    return obj


def base64_field(obj: dict[str, Any], *path: str) -> bytes | LineClosed:
    """The bytes of a base64 string at ``path``; a missing, non-string or non-base64 value is a violation."""
    name = ".".join(path)
    value = at_path(obj, *path)
    if not isinstance(value, str):
        return violation(f"{obj.get('event', 'message')} without a string {name}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        return violation(f"{name} is not base64 ({exc})")


def check_id(obj: dict[str, Any], key: str, expected: str, kind: str) -> LineClosed | None:
    """A bot's message naming another stream than this call's is a violation; naming none is tolerated."""
    if key in obj and obj[key] != expected:
        return violation(f"{kind} for stream {str(obj[key])[:SHOWN]!r}, not {expected!r}")
    return None


def passed_on(kind: str, obj: dict[str, Any], key: str = "event") -> AssistantControl:
    """An event the carrier does not define: recorded and ignored (``log`` is CallSim's extension)."""
    fields = {k: v for k, v in obj.items() if k != key}
    if len(json.dumps(fields, default=str)) > 4 * SHOWN:
        fields = {"truncated": json.dumps(fields, default=str)[: 4 * SHOWN]}
    if kind == "log" and key == "event":
        return AssistantControl("log", fields)
    # the core keeps the first 1000 records of it and counts the rest (voice.core.eventlog)
    return AssistantControl("unknown", {key: kind[:SHOWN], **fields})


def derived_id(kind: str, call_id: str) -> str:
    """A stable id (a UUID's shape) for a call: reruns send the same ids, two calls never share one."""
    return str(uuid.UUID(hashlib.sha256(f"{kind}:{call_id}".encode()).hexdigest()[:32]))


def derived_hex(prefix: str, call_id: str, n: int = 32) -> str:
    """A stable ``prefix`` + ``n`` hex digits id for a call (Exotel's and Plivo's account-style ids)."""
    return prefix + hashlib.sha256(f"{prefix}:{call_id}".encode()).hexdigest()[:n]


A = TypeVar("A")


class PlayoutAcks(Generic[A]):
    """What the carrier must answer once the audio before it has played, in the order it was asked.

    :meth:`ask` queues the answer and returns the :class:`PlayoutMark` for the core (named ``name``, which
    only the event log shows); :meth:`played` takes the answers of the marks the core has played, which
    come back in the order they were asked (the core plays its marks first in, first out).
    """

    def __init__(self) -> None:
        self._pending: deque[A] = deque()
        self.answered: list[A] = []

    def ask(self, name: str, answer: A) -> LineInput:
        if len(self._pending) >= MAX_PENDING_MARKS:
            return violation(f"flood: over {MAX_PENDING_MARKS} marks pending")
        self._pending.append(answer)
        return PlayoutMark(name)

    def played(self, n: int) -> list[A]:
        out = [self._pending.popleft() for _ in range(min(n, len(self._pending)))]
        self.answered += out
        return out


def clear_or_mark(event: str, obj: dict[str, Any], marks: PlayoutAcks[str]) -> LineInput | None:
    """Twilio's ``clear`` and ``{"mark": {"name": ...}}``, which Telnyx and Exotel take over as they are:
    the core's ``clear``, or a mark answered by name once played; ``None`` for any other event."""
    if event == "clear":
        return AssistantControl("clear")
    if event != "mark":
        return None
    mark = obj.get("mark")
    name = mark.get("name") if isinstance(mark, dict) else None
    if not isinstance(name, str):
        return violation("mark without a string mark.name")
    return marks.ask(name, name)


def closed_by_bot(exc: ConnectionClosed) -> Sequence[LineInput]:
    """A normal close (1000/1001) is the bot's hang-up: returned before the line's ``LineClosed``, so the
    caller hears what is still queued and the call ends as an assistant hang-up."""
    rcvd = exc.rcvd
    if rcvd is None or rcvd.code not in (1000, 1001):
        return ()
    why = f"the bot closed the stream (code {rcvd.code})"
    return (AssistantControl("hangup", {"reason": why, "detail": rcvd.reason}),)


def compact(message: dict[str, Any]) -> str:
    """A message as JSON text, as the carriers send it."""
    return json.dumps(message, ensure_ascii=False)
