"""The line interface between the call driver and an assistant, whatever carries the audio."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from voice.core.audio import Pcm
from voice.core.call import LineInput


@dataclass(frozen=True)
class CallStart:
    """What the line tells the assistant when the call connects."""

    call_id: str
    dialogue: Mapping[str, object] = field(default_factory=dict)  # the assistant's view only


class Line(Protocol):
    """A connection to one assistant for one call.

    ``recv`` never raises for what the assistant does: a closed socket or a protocol violation comes back
    as :class:`~voice.core.call.LineClosed` with a reason, so the call ends with a recorded cause.
    ``open`` raises :class:`~voice.errors.LineError` when the assistant cannot be reached.
    """

    async def open(self, start: CallStart) -> None: ...

    async def send(self, pcm: Pcm) -> None: ...

    async def recv(self) -> LineInput: ...

    async def played(self, marks: tuple[str, ...]) -> None:
        """These marks (:class:`~voice.core.call.PlayoutMark` names) from this line have now played out.

        The driver calls it (only with at least one mark) just before sending the frame that follows them.
        A line whose far side never asks for marks never delivers any, so it can ignore this.
        """
        ...

    async def hangup(self, reason: str) -> None: ...

    async def close(self) -> None: ...
