"""Whether a 20 ms frame holds speech, and where in it: how a caller hears the assistant (and a person).

A call core (:mod:`voice.core.call`) asks one for every heard frame to find a reply's onset and end; the
live core asks another about the person's own audio; the speech cutter (:mod:`voice.core.speech_pieces`)
asks one to find pauses.  The energy gate is the default everywhere: exact to the sample, and cheap enough
for hundreds of calls in one process.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from voice.core.audio import Pcm, active_bounds


class SpeechDetector(Protocol):
    """Decides whether a heard frame holds speech, and where in it (sample bounds)."""

    def active(self, frame: Pcm) -> tuple[int, int] | None: ...


class EnergyDetector:
    """Speech = a frame above ``floor_dbfs`` RMS; bounds refined to the first/last loud sample."""

    def __init__(self, floor_dbfs: float = -50.0) -> None:
        self.floor_dbfs = floor_dbfs
        # the floor as a mean square, so a frame costs one dot product (no log, no temporary arrays)
        self._floor_square = (10.0 ** (floor_dbfs / 20.0) * 32768.0) ** 2

    def active(self, frame: Pcm) -> tuple[int, int] | None:
        if not len(frame):
            return None
        x = frame.astype(np.float64)
        if float(np.dot(x, x)) < self._floor_square * len(frame):
            return None
        return active_bounds(frame) or (0, len(frame))
