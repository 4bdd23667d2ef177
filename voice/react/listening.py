"""The reactive caller hears a reply while it plays: pieces cut at its pauses, transcribed as they close.

Transcribing a whole reply after it has ended put the whole of Whisper's time on the caller's critical path
(issue 26).  :class:`Pieces` watches the heard channel as it grows and cuts it at every pause of
``pause`` samples (the same energy detector as the call core), so each piece can be transcribed in the
background while the reply goes on; :func:`spans_for` then tells which pieces make up a reply's span and
what is left, so that at the reply's end only its last piece remains to hear.

Pure and I/O-free: the session (:mod:`voice.react.session`) runs the transcriptions.
"""

from __future__ import annotations

from collections.abc import Sequence

from voice.core.audio import FRAME_SAMPLES, Pcm
from voice.core.call import EnergyDetector, SpeechDetector

Span = tuple[int, int]  # [start, end) in samples of the heard channel


class Pieces:
    """The heard channel's speech, cut into pieces at pauses of at least ``pause`` samples.

    :meth:`feed` looks at the whole frames added since the last call (a view of the growing channel is
    fine) and returns the pieces they closed, each from its first to one past its last speech sample.
    """

    def __init__(self, pause: int, detector: SpeechDetector | None = None) -> None:
        if pause < FRAME_SAMPLES:
            raise ValueError(f"a pause is at least one frame ({FRAME_SAMPLES} samples), got {pause}")
        self.pause = pause
        self.detector = detector or EnergyDetector()
        self.closed: list[Span] = []
        self._pos = 0  # the next sample to look at
        self._start: int | None = None  # first speech sample of the open piece
        self._last = 0  # one past the last speech sample heard

    @property
    def last_speech(self) -> int:
        """One past the last speech sample heard so far."""
        return self._last

    def floor(self, at: int) -> None:
        """Start the open piece no earlier than sample ``at`` (a reply's onset): what came before it is not
        the reply (the assistant talking over the caller's turn, an echo of it), and a piece cut there is
        one the reply's hearing can use whole."""
        if self._start is not None and self._start < at:
            self._start = at

    def feed(self, heard: Pcm) -> list[Span]:
        """The pieces closed by the frames of ``heard`` not looked at yet."""
        out: list[Span] = []
        while self._pos + FRAME_SAMPLES <= len(heard):
            s = self._pos
            bounds = self.detector.active(heard[s : s + FRAME_SAMPLES])
            if bounds is not None:
                if self._start is None:
                    self._start = s + bounds[0]
                self._last = s + bounds[1]
            elif self._start is not None and s + FRAME_SAMPLES - self._last >= self.pause:
                out.append((self._start, self._last))
                self._start = None
            self._pos += FRAME_SAMPLES
        self.closed += out
        return out


def spans_for(pieces: Sequence[Span], start: int, end: int) -> list[Span]:
    """The spans whose transcripts, joined in order, make the transcript of ``[start, end)``.

    The closed pieces inside it, plus what lies before the first (a reply that began inside a piece, e.g.
    over the caller's own turn) and after the last (the reply's last piece, not closed yet).  Silence
    between pieces is left out.  With no piece inside, the span itself.
    """
    inside = [p for p in pieces if start <= p[0] and p[1] <= end and p[1] > p[0]]
    if not inside:
        return [(start, end)] if end > start else []
    spans: list[Span] = []
    if inside[0][0] > start:
        spans.append((start, inside[0][0]))
    spans += inside
    if end > inside[-1][1]:
        spans.append((inside[-1][1], end))
    return spans


def join_texts(texts: Sequence[str]) -> str:
    """Pieces' transcripts as one (Mandarin: no spaces between; empty pieces dropped)."""
    return "".join(t.strip() for t in texts if t.strip())
