"""What the rules policy may trust of what it heard: backchannels, and transcripts Whisper was unsure of.

Two faults of the built-in assistant's demo came from taking every transcript at its word:

- a caller turn that is only a backchannel ("嗯，", "好", "对对") got a reply ("嗯，您请说。"), talking over
  a caller who had only signalled that they were listening.  :func:`is_backchannel` recognises one, and the
  policy stays silent unless it had just asked a yes/no question (:func:`awaits_answer`), where "嗯" is the
  answer;
- a misheard turn was read back to the caller ("好的，怎么没看到人，您车排尾号386别生得着，我会转告机主。").
  Whisper says how sure it was of each segment (:class:`voice.speech.asr.Confidence`: the mean token
  log-probability, the no-speech probability, the compression ratio); the processor hands the policy the
  worst figures of the turn's segments (:func:`worst`), and :func:`doubt` says whether they are too low to
  repeat the words.  A doubtful turn whose words match nothing the policy listens for (:func:`understood`)
  is not guessed at: the caller is asked to say it again.

The thresholds come from Whisper base on the bundled caller lines and their comma-cut pieces in the caller's
voice (406 transcripts, the built-in's settings): of the transcripts below -0.8 mean log-probability, 85 %
were more than 40 % wrong (CER), against 26 % of those above; the whole lines that fell below were mostly
goodbyes, which the policy recognises by keyword and answers without repeating anything.  Whisper's own
decoder gives up on a segment below -1.0, or above a compression ratio of 2.4 (a repetition loop).  Pure
Python, like the policy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final, Literal, TypedDict

from server.policy import keywords as kw

MIN_AVG_LOGPROB: Final = -0.8  # below: the words are likely misheard (see the module docstring)
MAX_COMPRESSION_RATIO: Final = 2.4  # above: Whisper looped (its own threshold); the text was collapsed
MAX_NO_SPEECH_PROB: Final = 0.6  # above, with a low log-probability: Whisper's own "this was not speech"
_NO_SPEECH_LOGPROB: Final = -0.5

# Sounds and one-syllable words a listener says to show they are following, not to take the floor.  A turn
# made only of these (repeated or mixed: "嗯嗯", "对对对", "嗯，好") is a backchannel; "好的", "可以", "明白",
# "谢谢" are acknowledgements, which the policy still answers.
BACKCHANNEL: Final = re.compile(r"[嗯哦噢喔啊呃额唔哎诶欸呢好对是行哈呀]+")
# A reply that asks a yes/no question: a lone "嗯" or "好" after it answers it.  A request to repeat is no
# such question: the caller who says "嗯" to it is about to repeat.
_YES_NO: Final = re.compile(r"(?:吗|好不好|行不行|可不可以|是不是|对不对|对吧|是吧)[？?]$")
_REPEAT_REQUESTS: Final = ("再说一遍", "再说一下")

# What the policy listens for in a turn beyond the caller's identity: a question, a request, a report, a
# complaint.  Scenario words ("外卖", "尾号") only say who is calling, not what they want.
_INTENTS: Final = (
    kw.IN_PERSON, kw.REJECT_PLACE, kw.SPEAK_NOW, kw.HURRY, kw.PROPOSAL, kw.ACTION, kw.ADDRESS, kw.PRIVATE,
    kw.WHERE, kw.ARRIVAL, kw.FIND, kw.PAYMENT, kw.LOST, kw.CALLBACK, kw.MESSAGE, kw.URGENT, kw.WHO, kw.WHEN,
    kw.STATUS, kw.GOODBYE, kw.THANKS,
)  # fmt: skip


def is_backchannel(p: str) -> bool:
    """Whether a caller turn (``kw.plain`` text) is only a backchannel."""
    return bool(BACKCHANNEL.fullmatch(p))


def awaits_answer(last_reply: str) -> bool:
    """Whether the assistant's last line asked a yes/no question, so that a lone "嗯" or "对" answers it."""
    return bool(_YES_NO.search(last_reply)) and not any(r in last_reply for r in _REPEAT_REQUESTS)


def understood(p: str) -> bool:
    """Whether a caller turn (``kw.plain`` text) says something the policy listens for."""
    return any(table.search(p) for table in _INTENTS)


class Heard(TypedDict, total=False):
    """A turn's figures, each when known: the policy protocol's ``voice.contract.policy.Heard``, spelled
    here again because the policy imports nothing of CallSim's (the two are one type to a type checker)."""

    avg_logprob: float
    no_speech_prob: float
    compression_ratio: float


Figure = Literal["avg_logprob", "no_speech_prob", "compression_ratio"]


def _values(given: Iterable[Heard], key: Figure) -> list[float]:
    """The segments' ``key`` figures, where they are numbers."""
    return [float(v) for c in given if isinstance(v := c.get(key), (int, float))]


def worst(confidences: Iterable[Heard | None]) -> Heard | None:
    """The worst of several segments' figures (a turn's transcripts), or None if none has any."""
    given = [c for c in confidences if c]
    if not given:
        return None
    out: Heard = {}
    if logprobs := _values(given, "avg_logprob"):
        out["avg_logprob"] = min(logprobs)
    if silences := _values(given, "no_speech_prob"):
        out["no_speech_prob"] = max(silences)
    if ratios := _values(given, "compression_ratio"):
        out["compression_ratio"] = max(ratios)
    return out or None


def pooled(pieces: Iterable[tuple[Heard | None, float]]) -> Heard | None:
    """The figures of a turn heard in pieces (``(figures, audio seconds)`` each): its words' mean
    log-probability and no-speech probability weighted by the pieces' audio, the worst compression ratio.

    Not the worst piece's: a turn cut at every pause has pieces of a syllable or two ("喂，"), on which
    Whisper is unsure there is speech at all (no_speech_prob 0.68 on a 0.4 s "喂" that it heard right),
    and the worst of them made a turn heard well doubtful.  Whole turns were what the thresholds were
    measured on; the pieces' figures pooled by length are the turn's.
    """
    given = [(c, max(0.0, float(secs))) for c, secs in pieces if c]
    total = sum(secs for _, secs in given)
    if not given or total <= 0:
        return worst(c for c, _ in given)
    out: Heard = {}
    if (logprob := _weighted(given, "avg_logprob")) is not None:
        out["avg_logprob"] = logprob
    if (silence := _weighted(given, "no_speech_prob")) is not None:
        out["no_speech_prob"] = silence
    if ratios := _values((c for c, _ in given), "compression_ratio"):
        out["compression_ratio"] = max(ratios)
    return out or None


def _weighted(given: list[tuple[Heard, float]], key: Figure) -> float | None:
    """The pieces' ``key`` figures weighted by their seconds (where they are numbers), or None: none is."""
    weighted = [(float(v), secs) for c, secs in given if isinstance(v := c.get(key), (int, float))]
    if not weighted:
        return None
    return sum(v * w for v, w in weighted) / max(1e-9, sum(w for _, w in weighted))


def doubt(heard: Heard | None) -> str | None:
    """Why the ASR's figures for a turn (``worst`` of its segments) say it may be misheard, or None."""
    if not heard:
        return None
    logprob = _figure(heard, "avg_logprob", 0.0)
    if logprob < MIN_AVG_LOGPROB:
        return f"avg_logprob {logprob:.2f} < {MIN_AVG_LOGPROB}"
    if (ratio := _figure(heard, "compression_ratio", 0.0)) > MAX_COMPRESSION_RATIO:
        return f"compression_ratio {ratio:.2f} > {MAX_COMPRESSION_RATIO}"
    silence = _figure(heard, "no_speech_prob", 0.0)
    if silence > MAX_NO_SPEECH_PROB and logprob < _NO_SPEECH_LOGPROB:
        return f"no_speech_prob {silence:.2f} > {MAX_NO_SPEECH_PROB}"
    return None


def _figure(heard: Heard, key: Figure, default: float) -> float:
    value = heard.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default
