"""One exception root for CallSim, so callers can catch everything the package raises with one clause.

Third-party errors (websockets, faster-whisper, TensorFlow, edge-tts, PortAudio, openai) are translated into
these at the edge where they occur (``raise X from exc``), so nothing above the edge depends on them.

    CallSimError
    ├── DialogueError          a dialogue file is malformed (every problem as file:line: field: reason)
    ├── EngineError            an engine (TTS, ASR, VAD, an LLM server) failed
    │   ├── EngineUnavailable  an engine cannot run here (no network for edge-tts, missing weights, no binary,
    │   │                      an LLM server that cannot be reached or refuses the key)
    │   ├── EngineOutputError  an engine answered, but not in the form asked for (an LLM's malformed JSON)
    │   ├── AssistantCrashed   the built-in assistant's process exited during a call (the call is redone)
    │   └── CallerSpeechFailed the caller's line could not be voiced (TTS error or silence): CallSim's own
    │                          failure, not the assistant's (the call is redone)
    ├── LineError              the line to an assistant failed (connect, protocol, closed mid-call)
    │   └── CallRefused        the far end refused a SIP call (busy, declined, ...): its outcome, the bot's
    ├── RecordingError         a recording or result file is unreadable or inconsistent
    ├── StorageError           the output folder cannot be written (disk full, read-only): the batch stops
    └── ConfigError            bad settings or command-line values
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


class CallSimError(Exception):
    """Root of every error CallSim raises on purpose."""


FILE = "<file>"  # the field of a problem of a dialogue file as a whole


@dataclass(frozen=True)
class DialogueProblem:
    """One validation problem, located to a file line and a field path.

    Line 0 is no line: a problem of the whole file (field ``<file>``: it cannot be read, holds no dialogue,
    is JSON written over many lines) reads ``file: reason``, one of an object that is not a file's line
    ``source: field: reason``."""

    path: str
    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        if self.line > 0:
            return f"{self.path}:{self.line}: {self.field}: {self.reason}"
        return f"{self.path}: " + ("" if self.field == FILE else f"{self.field}: ") + self.reason


class DialogueError(CallSimError):
    """A dialogue file failed validation; ``problems`` lists all of them, not just the first."""

    def __init__(self, problems: list[DialogueProblem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems) or "invalid dialogue data")


class EngineError(CallSimError):
    """A speech engine failed while running."""


class EngineUnavailable(EngineError):
    """A speech engine cannot run on this machine (network, weights or a binary missing)."""


class EngineOutputError(EngineError):
    """An engine answered, but not in the form asked for, even after retries (an LLM's malformed JSON).

    ``problems``: what was wrong with each answer, in order.
    """

    def __init__(self, message: str, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems


class AssistantCrashed(EngineError):
    """The assistant CallSim started (the built-in) exited during a call: the call is recorded as
    ``assistant_crashed`` and made again on resume (it says nothing about the assistant's turn-taking)."""


class CallerSpeechFailed(EngineError):
    """A caller line could not be voiced: the TTS engine failed on it or produced silence.

    Raised where the caller's speech is synthesized (:func:`voice.speech.caller_plan.speak`), so a run can
    tell CallSim's own failure from the assistant's: the call is recorded as ``caller_speech_failed``, left
    out of every figure of the assistant, and made again on resume.
    """


class LineError(CallSimError):
    """The line to the assistant failed: could not connect, protocol violation, or closed mid-call."""


class CallRefused(LineError):
    """The far end refused the call (a SIP final answer: busy, declined, not found, no answer, auth refused).

    ``outcome`` names the refusal in results.json (:mod:`voice.lines.sip_events`); it is the bot's answer,
    so the call is recorded as failed with that outcome rather than as ``connect_failed``.
    """

    def __init__(self, outcome: str, detail: str) -> None:
        super().__init__(detail)
        self.outcome = outcome


class RecordingError(CallSimError):
    """A recording, event log or results file is missing, unreadable or inconsistent."""


class StorageError(CallSimError):
    """A file of the run cannot be written: no space left, a read-only or forbidden folder, a size limit.

    Not a call's failure: every later call would fail the same way, so the batch stops (the calls finished
    so far are kept, and a rerun resumes once there is room).
    """


class ConfigError(CallSimError):
    """Invalid settings or command-line values."""


def explain(exc: BaseException) -> str:
    """An exception in words for a recorded reason: never empty (``TimeoutError()`` says nothing).

    A message that ends in a colon (``cannot connect to URL: `` from an empty cause) is completed with its
    cause; an exception without a message is named by its type.
    """
    text = str(exc).strip()
    if not text and isinstance(exc, TimeoutError):
        return "timed out"  # (its cause, if any, is the cancelled wait: no news)
    cause = exc.__cause__
    if cause is not None and (not text or text.endswith(":")):
        return f"{text} {explain(cause)}".strip()
    return text or type(exc).__name__


def nearest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``word`` if any is close enough to be a typo of it (the "did you mean" of an
    error message: an unknown option, key or value)."""
    import difflib

    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return close[0] if close else None
