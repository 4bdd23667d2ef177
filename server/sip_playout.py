"""What the assistant says, waiting to go out as RTP: one 20 ms frame per 20 ms, whatever its own pace.

A raw-PCM assistant sends its audio in chunks of any length, often far ahead of real time (a TTS that
synthesizes faster than it speaks); a phone's RTP stream is one packet every 20 ms, never more, never
stopping.  :class:`PlayoutQueue` sits between the two: chunks and playout marks go in as they arrive, and
each :meth:`PlayoutQueue.take` gives the next frame (silence when nothing is queued) and the marks whose
audio has now all been sent.  ``clear`` (the assistant's barge-in) drops everything at once.  Pure: the
gateway's call (:mod:`server.sip_bridge`) calls :meth:`~PlayoutQueue.take` on its clock's schedule.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, Pcm

MAX_QUEUED_S = 60  # an assistant this far ahead of the line is flooding it (as the call core's limit)


class PlayoutQueue:
    """The assistant's audio and marks in arrival order, taken out a frame at a time."""

    def __init__(self, max_samples: int = MAX_QUEUED_S * SAMPLE_RATE) -> None:
        self.max_samples = max_samples
        self._items: deque[Pcm | str] = deque()  # audio chunks, and mark names between them
        self._offset = 0  # samples of the first chunk already taken
        self.queued_samples = 0

    @property
    def empty(self) -> bool:
        """Nothing left to play (no audio; marks left over are released by the next :meth:`take`)."""
        return self.queued_samples == 0

    def push(self, pcm: Pcm) -> bool:
        """Queue a chunk; False (and nothing queued) if it would put more than ``max_samples`` ahead."""
        if self.queued_samples + len(pcm) > self.max_samples:
            return False
        if len(pcm):
            self._items.append(pcm)
            self.queued_samples += len(pcm)
        return True

    def mark(self, name: str) -> None:
        """The assistant wants to know when the audio queued so far has been sent."""
        self._items.append(name)

    def clear(self, keep: int = 0) -> tuple[str, ...]:
        """Drop everything queued but the first ``keep`` samples (what a continuous stream has already
        played by now: see :meth:`server.sip_bridge.SipCall`); the marks dropped, to be answered at once."""
        kept: list[Pcm | str] = []
        while keep > 0 and self._items:
            head = self._items.popleft()
            if isinstance(head, str):
                kept.append(head)
                continue
            chunk = head[self._offset : self._offset + keep]
            self._offset = 0
            kept.append(chunk)
            keep -= len(chunk)
        marks = tuple(item for item in self._items if isinstance(item, str))
        self._items = deque(kept)
        self._offset = 0
        self.queued_samples = sum(len(item) for item in kept if not isinstance(item, str))
        return marks

    def take(self) -> tuple[Pcm, tuple[str, ...]]:
        """The next frame (padded with silence) and the marks whose audio it completes."""
        frame = np.zeros(FRAME_SAMPLES, dtype=np.int16)
        filled = 0
        marks = list(self._leading_marks())
        while filled < FRAME_SAMPLES and self._items:
            head = self._items[0]
            assert not isinstance(head, str)
            n = min(FRAME_SAMPLES - filled, len(head) - self._offset)
            frame[filled : filled + n] = head[self._offset : self._offset + n]
            filled += n
            self._offset += n
            self.queued_samples -= n
            if self._offset == len(head):
                self._items.popleft()
                self._offset = 0
            marks += self._leading_marks()
        return frame, tuple(marks)

    def _leading_marks(self) -> list[str]:
        marks = []
        while self._items and isinstance(self._items[0], str):
            marks.append(str(self._items.popleft()))
        return marks
