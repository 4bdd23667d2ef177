"""The Silero VAD's verdicts, window by window: when the caller last voiced, where their speech ended to
the sample, and whether they may just have started again.

pipecat's analyzer only says "started" and "stopped", each ``start_secs`` / ``stop_secs`` late.  The
built-in assistant's turn logic needs the verdicts underneath: the barge-in confirmation reads how long the
caller has been silent by Silero's confidence (:meth:`VoicingSileroVAD.silent_secs`), the running turn model
reads the silence since the last audible sample of speech (:meth:`~VoicingSileroVAD.quiet_secs`) and holds a
turn's end while a sound that may be the caller going on waits for Silero's verdict
(:meth:`~VoicingSileroVAD.onset_pending`): Silero scores the first window or two of a word after a pause as
silence, so without the hold a 0.27 s comma pause read as 0.3 s and ended the turn mid-sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pipecat.audio.vad.silero import SileroVADAnalyzer

from voice.core.audio import ACTIVE_THRESHOLD, active_bounds

__all__ = ["ONSET_WINDOWS", "VoicingSileroVAD"]

_AUDIBLE = ACTIVE_THRESHOLD // 4  # a sample this loud, in a window Silero calls voice, is speech
ONSET_WINDOWS = 3  # audible windows Silero does not (yet) call voice that may be a word's onset (96 ms)


class VoicingSileroVAD(SileroVADAnalyzer):
    """pipecat's Silero analyzer that also remembers when it last heard voice, in samples analysed.

    Each of ``on_window`` (``listener(voiced, samples)``) hears every scored window: the reply's hold
    (:class:`server.hold.ReplyHold`), the piece-cutting STT (:class:`server.piecewise_stt.PieceSTTService`).
    """

    def __init__(self, *, on_window: Sequence[Callable[[bool, int], None]] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.analysed = 0  # samples scored so far
        self.last_voiced = 0  # one past the last sample of the last window scored as voice
        self.last_heard = 0  # one past the last audible sample of a window scored as voice
        self.unvoiced_audible = 0  # windows in a row, up to now, audible but not scored as voice
        self.on_window = tuple(on_window)

    def voice_confidence(self, buffer: bytes) -> float:
        confidence = float(super().voice_confidence(buffer))
        samples = len(buffer) // 2
        start, self.analysed = self.analysed, self.analysed + samples
        voiced = confidence >= self.params.confidence
        bounds = active_bounds(np.frombuffer(buffer[: samples * 2], np.int16), _AUDIBLE)
        if voiced:
            self.last_voiced = self.analysed
            self.unvoiced_audible = 0
            if bounds is not None:
                self.last_heard = start + bounds[1]
        else:
            self.unvoiced_audible = self.unvoiced_audible + 1 if bounds is not None else 0
        for listener in self.on_window:
            listener(voiced, samples)
        return confidence

    def silent_secs(self) -> float:
        """How long the caller has been silent, by the VAD's confidence (0 while speaking)."""
        return (self.analysed - self.last_voiced) / (self.sample_rate or 16000)

    def quiet_secs(self) -> float:
        """Since the caller's last audible sample in a window Silero calls voice: where the speech ended,
        to the sample (Silero scores a window or two of silence after the last word as voice)."""
        return (self.analysed - max(self.last_heard, 0)) / (self.sample_rate or 16000)

    def onset_pending(self) -> bool:
        """The latest windows are audible and Silero has not called them voice, for at most
        ``ONSET_WINDOWS``: maybe the caller's next word, whose first windows Silero scores as silence.
        Longer than that it is noise (a line's hum never holds a turn for good)."""
        return 0 < self.unvoiced_audible <= ONSET_WINDOWS
