"""The built-in assistant hears the caller in pieces, each transcribed as soon as it closes.

The segmented STT (:class:`server.processors.CallSimSTTService`) transcribed a VAD segment once the VAD
said "stopped", so all of Whisper's time on it came after the caller's last word.  :class:`PieceSTTService`
cuts the segment at every pause of ``piece_pause_secs`` (the Silero VAD's own windows, voiced or not, fed
to the :class:`~voice.core.speech_pieces.PauseCutter` the reactive caller hears replies with) and queues each
piece
the moment it closes; at the end of a turn only the last piece is left to transcribe, and it began ~0.1 s
after the last word, while the turn logic was still listening for more (:mod:`server.turn_end`).

Each piece is numbered.  A :class:`PieceQueuedFrame` says a piece is on its way; it then ends in a
``TranscriptionFrame`` whose ``result`` holds ``piece``, or a
:class:`~server.processors.SegmentWithoutWordsFrame` with the same number.  When a turn ends, a
:class:`CallerTurnFrame` lists the pieces with words that make it, so the policy answers with exactly those
however the frames overtook each other on the way (:mod:`server.policy.processor`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from pipecat.frames.frames import InputAudioRawFrame, SystemFrame, VADUserStoppedSpeakingFrame
from pipecat.processors.frame_processor import FrameDirection

from server.processors import CallSimSTTService, SegmentLabels
from voice.core.speech_pieces import PauseCutter

__all__ = ["CallerTurnFrame", "PieceQueuedFrame", "PieceSTTService"]


@dataclass
class PieceQueuedFrame(SystemFrame):
    """A piece of the caller's speech went to the ASR; its transcript (or no words) follows."""

    piece: int = 0


@dataclass
class CallerTurnFrame(SystemFrame):
    """The caller's turn has ended: these pieces, with words, in order, make it (sent just before
    pipecat's ``UserStoppedSpeakingFrame``)."""

    pieces: tuple[int, ...] = ()


class PieceSTTService(CallSimSTTService):
    """The segmented STT, cutting each VAD segment into pieces at its pauses and transcribing each at once.

    :meth:`observe_window` is the Silero analyzer's listener (``VoicingSileroVAD(on_window=...)``): every
    scored window, voiced or not.  A piece is queued once the audio up to its last speech sample plus
    ``tail_secs`` has arrived (Whisper drops a word cut off abruptly; the base class pads each piece with
    ``trailing_silence_secs`` of silence too).  Only pieces of a VAD segment are cut: speech the VAD never
    called speech (a click, a breath) stays in the pre-roll as before.  At the VAD's stop, whatever speech
    is left in the segment is the last piece; if none is (the usual case: the piece closed before the VAD
    stopped), nothing more is transcribed.
    """

    def __init__(
        self, *args: Any, piece_pause_secs: float = 0.12, tail_secs: float = 0.05, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._piece_pause_secs = piece_pause_secs
        self._tail_secs = tail_secs
        self._cutter: PauseCutter | None = None
        self._analysed = 0  # samples the VAD has scored (its windows are contiguous from the call's start)
        self._received = 0  # samples this service has taken in
        self._closed: deque[tuple[int, int]] = deque()  # pieces closed, not yet cut from the buffer
        self._ids: deque[int] = deque()  # the numbers of the pieces queued, in queue order
        self._next_piece = 0

    def _cutter_for_rate(self) -> PauseCutter:
        if self._cutter is None:
            self._cutter = PauseCutter(max(1, round(self._piece_pause_secs * self.sample_rate)))
        return self._cutter

    def observe_window(self, voiced: bool, samples: int) -> None:
        """One VAD window of ``samples`` samples, voiced or not (the analyzer's on_window)."""
        start, self._analysed = self._analysed, self._analysed + samples
        piece = self._cutter_for_rate().observe(self._analysed, (start, self._analysed) if voiced else None)
        if piece is not None:
            self._closed.append(piece)

    async def process_audio_frame(self, frame: InputAudioRawFrame, direction: FrameDirection) -> None:
        """Buffer as the segmented STT does, then cut and queue every piece that has closed."""
        await super().process_audio_frame(frame, direction)
        self._received += len(frame.audio) // 2
        while self._closed and self._received >= self._closed[0][1] + self._tail():
            _start, end = self._closed.popleft()
            if not self._user_speaking:  # not a VAD segment's: stays in the pre-roll
                continue
            keep = (self._received - (end + self._tail())) * 2  # bytes after the cut
            cut = max(0, len(self._audio_buffer) - keep)
            head = bytes(self._audio_buffer[:cut])
            del self._audio_buffer[:cut]
            if head:
                await self._queue_piece(head)

    def _tail(self) -> int:
        return int(self._tail_secs * self.sample_rate)

    async def _handle_user_stopped_speaking(self, frame: VADUserStoppedSpeakingFrame) -> None:
        self._user_speaking = False
        self._closed.clear()
        rest = bytes(self._audio_buffer)
        self._audio_buffer.clear()
        if self._cutter_for_rate().close() is not None and rest and self.is_usable:  # speech not cut yet
            await self._queue_piece(rest)

    async def _queue_piece(self, pcm: bytes) -> None:
        number, self._next_piece = self._next_piece, self._next_piece + 1
        self._ids.append(number)
        await self.push_frame(PieceQueuedFrame(piece=number))
        await self._segment_queue.put(pcm + self._trailing_silence())

    def _labels(self) -> SegmentLabels:
        return {"piece": self._ids.popleft()} if self._ids else {}
