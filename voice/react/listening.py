"""The reactive caller hears a reply while it plays: pieces cut at its pauses, transcribed as they close.

Transcribing a whole reply after it has ended put the whole of Whisper's time on the caller's critical path
(issue 26).  :class:`voice.core.speech_pieces.Pieces` (the cutter the built-in assistant hears the caller with
too) watches the heard channel as it grows and cuts it at every pause, so each piece can be transcribed in
the background while the reply goes on; :func:`spans_for` here tells which pieces make up a reply's span
and what is left, so that at the reply's end only its last piece remains to hear.

Pure and I/O-free: the session (:mod:`voice.react.session`) runs the transcriptions.
"""

from __future__ import annotations

from collections.abc import Sequence

from voice.core.speech_pieces import Span


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
