"""Calls that fail outside the call core: never connected, an exception in any step, the assistant crashed.

A batch never dies of one call: whatever goes wrong while a call is made becomes that call's recorded
failure (its outcome and, in ``detail``, the reason in words), and the batch goes on.  Only two things stop
it, because every later call would fail the same way: the disk refusing to write
(:class:`~voice.errors.StorageError`) and the built-in assistant's process exiting
(:class:`~voice.errors.AssistantCrashed`).  Even then the calls in flight are finished and recorded.

A call that fails on CallSim's side gets an outcome of its own (:mod:`voice.metrics.simulator`), so that it
counts in none of the assistant's figures: ``assistant_crashed``, and ``caller_speech_failed`` for a caller
line the TTS engine could not voice (:class:`~voice.errors.CallerSpeechFailed`, wherever in the call's steps
it is raised).

What a resume does with each (:mod:`voice.app.run.resume`): a ``connect_failed`` call is not saved, so it is
made
again; an ``assistant_crashed`` or ``caller_speech_failed`` one is saved (a crashed call's recording too, for
a look) but always made again, since it says nothing about the assistant; a ``call_error`` is kept like any
failed call (``--retry-failed`` makes it again).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable

from voice.errors import AssistantCrashed, CallerSpeechFailed, explain
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.simulator import ASSISTANT_CRASHED, CALLER_SPEECH_FAILED, SIMULATOR_OUTCOMES

CONNECT_FAILED = "connect_failed"  # never connected: no recording, not saved
CALL_ERROR = "call_error"  # an exception in one of the call's steps (its ``detail`` says which and why)
# Outcomes a resume always makes again, whatever ``--retry-failed`` says: CallSim's own failures
# (``assistant_crashed``, ``caller_speech_failed``), which measured nothing of the bot.
REDONE_ON_RESUME = frozenset(SIMULATOR_OUTCOMES)
# Every outcome of a call that failed before or outside the call core (the call core's own are its own).
FAILED_HERE = frozenset({CONNECT_FAILED, CALL_ERROR, *SIMULATOR_OUTCOMES})

# The built-in assistant's own hang-up when it is stopped (SIGTERM): a shutdown, never a normal hang-up.
SHUTDOWN_HANGUP = "shutting down"


def failed_call(call_id: str, dialogue_id: str, planned: int, outcome: str, detail: str) -> CallMetrics:
    """A failed call with nothing measured: how it failed (``outcome``) and why, in words (``detail``)."""
    return CallMetrics(
        call_id, dialogue_id, outcome, True, 0.0, None, caller_turns_planned=planned, detail=detail
    )


def error_outcome(exc: BaseException) -> str:
    """The outcome of a call an exception ended: ``caller_speech_failed`` if the caller's line could not be
    voiced (the error or any it was raised from), else ``call_error``."""
    seen: BaseException | None = exc
    for _ in range(32):  # a chain is short; a cycle of contexts must not loop for ever
        if seen is None:
            break
        if isinstance(seen, CallerSpeechFailed):
            return CALLER_SPEECH_FAILED
        seen = seen.__cause__ or seen.__context__
    return CALL_ERROR


def connect_detail(exc: BaseException) -> str:
    """Why a line could not be opened, never empty (a connect timeout's ``TimeoutError()`` says nothing)."""
    text = explain(exc)
    return text if text.startswith("cannot connect") else f"cannot connect: {text}"


def error_detail(step: str, exc: BaseException) -> str:
    """``step: ExceptionType: message``: which step of the call broke, and how."""
    text = explain(exc)
    kind = type(exc).__name__
    return f"{step}: {text}" if text == kind or text == "timed out" else f"{step}: {kind}: {text}"


def crashed_call(metrics: CallMetrics, why: str) -> CallMetrics:
    """A call the assistant's crash cut short (``metrics`` as measured, if it was): ``assistant_crashed``."""
    ended = f"{metrics.outcome}: {metrics.detail}" if metrics.detail else metrics.outcome
    return dataclasses.replace(
        metrics, outcome=ASSISTANT_CRASHED, failed=True, detail=f"{why} (the call ended as {ended})"
    )


def looks_like_shutdown(metrics: CallMetrics) -> bool:
    """A call that ended the way a dying assistant ends it: failed, line closed, or a shutdown hang-up."""
    return (
        metrics.failed
        or metrics.outcome == "line_closed"
        or (metrics.outcome == "assistant_hangup" and SHUTDOWN_HANGUP in metrics.detail)
    )


async def crash_reason(
    crashed: Callable[[], str | None] | None, suspect: bool, polls: int, poll_s: float
) -> str | None:
    """Why the watched assistant process is gone, or None if it runs (or is not watched).

    A ``suspect`` call (:func:`looks_like_shutdown`) gives the exit ``polls`` × ``poll_s`` to show: the
    socket closes as the process dies, a moment before its exit code can be read.
    """
    if crashed is None:
        return None
    for _ in range(polls if suspect else 1):
        if (reason := crashed()) is not None:
            return reason
        if suspect:
            await asyncio.sleep(poll_s)
    return None


def crash_error(reason: str) -> AssistantCrashed:
    """The run's stop reason once the built-in assistant is gone."""
    return AssistantCrashed(reason)
