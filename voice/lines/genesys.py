"""The Genesys AudioHook line (``genesys+ws://``): CallSim plays Genesys Cloud, the bot is the server.

As Genesys opens a bidirectional AudioHook session (protocol version 2, what pipecat's
``GenesysAudioHookSerializer`` answers): ``open`` (``id`` the session, ``parameters`` with
``organizationId``, ``conversationId``, ``participant`` (empty ``ani``/``dnis``: CallSim has no numbers),
``media`` offering PCMU at 8000 Hz on the ``external`` channel, ``language`` zh-CN and ``inputVariables``
``{"call_id": ...}``); then binary messages of mu-law audio, 20 ms each; ``close`` (reason ``end``) at
hang-up.  Every text message is numbered (``seq``), names the last the server sent (``serverseq``) and
where the audio stream stands (``position``, an ISO 8601 duration).  CallSim streams audio from the start
rather than after the server's ``opened`` (the first frames are the caller's silence; pipecat handles the
``open`` before them), and closes the socket after ``close`` without waiting for ``closed``.

From the bot: ``opened`` (its media must be the PCMU offered), binary mu-law audio, ``event`` with a
``barge_in`` entity (stop playing: :class:`~voice.core.call.AssistantControl` ``clear``; pipecat sends it
for every interruption), ``disconnect`` (the bot hangs up: ``hangup``, with its reason), and ``pong``,
``closed``, ``resumed``, ``error`` and anything else, recorded.  A message naming another session is a
violation, as anything malformed.  A server's ``seq`` must be a positive integer, but its order is not
checked: pipecat numbers a reply when it makes it (``opened``, ``pong``) and may send a later-made one
(a ``barge_in``) first.  AudioHook has no marks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from websockets.exceptions import ConnectionClosed

from voice.core.audio import FRAME_MS, Pcm
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.lines.carrier import (
    SHOWN,
    at_path,
    closed_by_bot,
    compact,
    derived_id,
    json_event,
    passed_on,
    violation,
)
from voice.lines.effects import MulawChannel
from voice.lines.line import CallStart
from voice.lines.ws_shell import Message, WebsocketLine

VERSION = "2"
GENESYS_RATE = 8000
MEDIA = {"type": "audio", "format": "PCMU", "channels": ["external"], "rate": GENESYS_RATE}
# One message from the bot: 2 s of mu-law (16,000 bytes) with room, as Twilio's cap; a control message is
# a few hundred bytes.  Larger is the bot's protocol error (close 1009).
MAX_MESSAGE_BYTES = 32 * 1024


class GenesysCodec:
    """Genesys Cloud's side of an AudioHook session as messages.  Pure but for the session's counters."""

    max_message_bytes = MAX_MESSAGE_BYTES

    def __init__(self) -> None:
        self.session: str | None = None
        self.opened = False
        self._seq = 0  # CallSim's last seq
        self._serverseq = 0  # the bot's last seq
        self._frames = 0  # 20 ms caller frames sent
        self._up = MulawChannel()
        self._down = MulawChannel()

    def _message(self, kind: str, parameters: dict[str, Any]) -> str:
        assert self.session is not None, "start() first"
        self._seq += 1
        return compact({
            "version": VERSION, "id": self.session, "type": kind, "seq": self._seq,
            "serverseq": self._serverseq, "position": f"PT{self._frames * FRAME_MS / 1000:.2f}S",
            "parameters": parameters,
        })  # fmt: skip

    def start(self, start: CallStart) -> Sequence[Message]:
        self.session = derived_id("session", start.call_id)
        call = start.call_id
        parameters = {
            "organizationId": derived_id("organization", call),
            "conversationId": derived_id("conversation", call),
            "participant": {"id": derived_id("participant", call), "ani": "", "aniName": "", "dnis": ""},
            "media": [MEDIA],
            "language": "zh-CN",
            "inputVariables": {"call_id": call},
        }
        return [self._message("open", parameters)]

    def audio(self, pcm: Pcm) -> Message:
        self._frames += 1
        return self._up.encode(pcm)

    def played(self, marks: tuple[str, ...]) -> Sequence[Message]:
        return ()  # AudioHook has no marks

    def hangup(self, reason: str) -> Sequence[Message]:
        return [self._message("close", {"reason": "end"})]

    def decode(self, message: Message) -> Sequence[LineInput]:
        if isinstance(message, bytes):
            return (AssistantAudio(self._down.decode(message)),) if message else ()
        parsed = json_event(message, "type", "Genesys AudioHook")
        if isinstance(parsed, LineClosed):
            return (parsed,)
        kind, obj = parsed
        if obj.get("id", self.session) != self.session:
            return (violation(f"{kind} for session {str(obj['id'])[:SHOWN]!r}, not {self.session!r}"),)
        seq = obj.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            return (violation(f"{kind} without a positive integer seq: {str(seq)[:SHOWN]}"),)
        self._serverseq = max(self._serverseq, seq)  # the order is not checked (see the module's doc)
        parameters = obj.get("parameters")
        if kind == "opened":
            media = at_path(obj, "parameters", "media")
            if not isinstance(media, list) or not media or not isinstance(media[0], dict):
                return (violation("opened without parameters.media"),)
            got = {k: media[0].get(k) for k in MEDIA}
            if got != MEDIA:
                return (violation(f"opened with media {str(got)[:SHOWN]} (CallSim offers {MEDIA})"),)
            self.opened = True
            return (passed_on(kind, obj, key="type"),)
        if kind == "event":
            entities = at_path(obj, "parameters", "entities")
            if isinstance(entities, list) and any(
                isinstance(e, dict) and e.get("type") == "barge_in" for e in entities
            ):
                return (AssistantControl("clear", {"via": "barge_in"}),)
        if kind == "disconnect":
            reason = parameters.get("reason", "") if isinstance(parameters, dict) else ""
            return (AssistantControl("hangup", {"reason": f"disconnect: {str(reason)[:SHOWN]}"}),)
        return (passed_on(kind, obj, key="type"),)

    def closed(self, exc: ConnectionClosed) -> Sequence[LineInput]:
        return closed_by_bot(exc)


class GenesysLine(WebsocketLine[GenesysCodec]):
    """CallSim's side of a Genesys AudioHook session: :class:`GenesysCodec` on the shell."""

    def new_codec(self) -> GenesysCodec:
        return GenesysCodec()
