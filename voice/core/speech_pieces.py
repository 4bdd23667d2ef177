"""Speech cut into pieces at its pauses, so each piece can be transcribed while the talk goes on.

Transcribing a whole utterance once it has ended puts all of the ASR's time on the listener's critical
path.  Cutting the speech at every pause of ``pause`` samples and transcribing each piece as it closes
leaves only the last piece to hear when the talk ends.  Both listeners of a call do this, from this one
module: the reactive caller hearing a reply (:mod:`voice.react.listening`, energy frames of the heard
channel) and the built-in assistant hearing the caller (:mod:`server.piecewise_stt`, the Silero VAD's
windows).

:class:`PauseCutter` is the cut itself, fed stretches of the stream already judged (speech, and where, or
silence); :class:`Pieces` feeds it 20 ms frames judged by a :class:`~voice.core.call.SpeechDetector`.
Pure and I/O-free: positions are sample counts of the stream, the caller of :meth:`observe` runs the
transcriptions.
"""

from __future__ import annotations

from voice.core.audio import FRAME_SAMPLES, Pcm
from voice.core.call import EnergyDetector, SpeechDetector

Span = tuple[int, int]  # [start, end) in samples of the stream


class PauseCutter:
    """A stream's speech, cut into pieces at pauses of at least ``pause`` samples.

    Fed consecutive stretches (:meth:`observe`), each either silent or holding speech between two sample
    positions; a piece closes once ``pause`` samples have passed since its last speech sample, and runs
    from its first speech sample to one past its last.  ``gaps`` keeps every pause that did not close a
    piece nor end the stream so far (a speaker's own rhythm: how long they pause and go on).
    """

    def __init__(self, pause: int) -> None:
        if pause < 1:
            raise ValueError(f"a pause is at least one sample, got {pause}")
        self.pause = pause
        self.closed: list[Span] = []
        self.position = 0  # one past the last sample observed
        self._start: int | None = None  # first speech sample of the open piece
        self._last = 0  # one past the last speech sample heard

    @property
    def last_speech(self) -> int:
        """One past the last speech sample heard so far."""
        return self._last

    @property
    def open_since(self) -> int | None:
        """The first speech sample of the piece still open (None: no speech since the last piece closed)."""
        return self._start

    def floor(self, at: int) -> None:
        """Start the open piece no earlier than sample ``at``: what came before belongs to something else."""
        if self._start is not None and self._start < at:
            self._start = at

    def close(self) -> Span | None:
        """Close the open piece now (the stream's speech has ended by another judge's word), if any."""
        if self._start is None:
            return None
        piece = (self._start, self._last)
        self._start = None
        self.closed.append(piece)
        return piece

    def observe(self, end: int, speech: Span | None) -> Span | None:
        """The stream up to sample ``end`` has been judged: ``speech`` the first and one-past-last speech
        samples in the new stretch (None: all silent).  Returns the piece this closed, if any."""
        self.position = max(self.position, end)
        if speech is not None:
            if self._start is None:
                self._start = speech[0]
            self._last = max(self._last, speech[1])
            return None
        if self._start is not None and end - self._last >= self.pause:
            piece = (self._start, self._last)
            self._start = None
            self.closed.append(piece)
            return piece
        return None


class Pieces:
    """A heard channel's speech, cut into pieces at pauses of at least ``pause`` samples, 20 ms frames at
    a time judged by ``detector`` (energy by default, as the call core judges speech).

    :meth:`feed` looks at the whole frames added since the last call (a view of the growing channel is
    fine) and returns the pieces they closed.
    """

    def __init__(self, pause: int, detector: SpeechDetector | None = None) -> None:
        if pause < FRAME_SAMPLES:
            raise ValueError(f"a pause is at least one frame ({FRAME_SAMPLES} samples), got {pause}")
        self.cutter = PauseCutter(pause)
        self.detector = detector or EnergyDetector()

    @property
    def pause(self) -> int:
        return self.cutter.pause

    @property
    def closed(self) -> list[Span]:
        return self.cutter.closed

    @property
    def last_speech(self) -> int:
        """One past the last speech sample heard so far."""
        return self.cutter.last_speech

    def floor(self, at: int) -> None:
        """Start the open piece no earlier than sample ``at`` (a reply's onset): what came before it is not
        the reply (the assistant talking over the caller's turn, an echo of it), and a piece cut there is
        one the reply's hearing can use whole."""
        self.cutter.floor(at)

    def feed(self, heard: Pcm) -> list[Span]:
        """The pieces closed by the frames of ``heard`` not looked at yet."""
        out: list[Span] = []
        while self.cutter.position + FRAME_SAMPLES <= len(heard):
            s = self.cutter.position
            bounds = self.detector.active(heard[s : s + FRAME_SAMPLES])
            speech = None if bounds is None else (s + bounds[0], s + bounds[1])
            # a frame is judged whole: a pause counts from its end, as the frames before it did
            piece = self.cutter.observe(s + FRAME_SAMPLES, speech)
            if piece is not None:
                out.append(piece)
        return out
