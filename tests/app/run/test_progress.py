"""Progress: plain lines for logs, one redrawn bar with ETA on a terminal."""

import io

from voice.app.run.progress import Progress, format_duration
from voice.app.run.runner import CallStatus
from voice.core.clock import VirtualClock
from voice.metrics.call_metrics import CallMetrics


def done(call_id, failed=False):
    m = CallMetrics(
        call_id, call_id, "assistant_silent" if failed else "completed", failed, 5000.0, 300.0, [], 2
    )
    return CallStatus("builtin", call_id, "done", m)


def test_plain_mode_prints_one_line_per_finished_call_with_eta():
    out, clock = io.StringIO(), VirtualClock()
    p = Progress(4, stream=out, tty=False, clock=clock)
    p(CallStatus("builtin", "a", "kept"))
    p(CallStatus("builtin", "b", "calling"))
    clock.advance(10_000_000_000)
    p(done("b"))
    p(CallStatus("builtin", "c", "calling"))
    clock.advance(10_000_000_000)
    p(done("c", failed=True))
    lines = out.getvalue().splitlines()
    assert lines[0] == "[1/4] builtin/a: done earlier, kept"
    assert lines[1].startswith("[2/4] builtin/b: completed, 0/2 answered") and lines[1].endswith("(ETA 20s)")
    assert "(FAILED)" in lines[2] and lines[2].endswith("(ETA 10s)")  # 2 calls in 20 s, 1 to go
    assert "\r" not in out.getvalue() and len(lines) == 3


def test_terminal_mode_redraws_one_bar_and_keeps_failures_visible():
    out, clock = io.StringIO(), VirtualClock()
    p = Progress(2, stream=out, tty=True, clock=clock)
    p(CallStatus("builtin", "a", "calling"))
    assert "calling: a" in p.bar() and "ETA --" in p.bar()
    clock.advance(5_000_000_000)
    p(done("a", failed=True))
    p.close()
    text = out.getvalue()
    assert text.count("\r\x1b[2K") >= 2 and "[1/2] builtin/a: assistant_silent (FAILED)" in text
    assert "1 failed" in p.bar() and "50%" in p.bar() and text.endswith("\n")


def test_durations():
    assert [format_duration(s) for s in (4.4, 65, 3700)] == ["4s", "1m05s", "1h01m"]


def test_a_note_is_printed_once_and_not_counted_as_a_call():
    for tty in (False, True):
        out = io.StringIO()
        p = Progress(2, stream=out, tty=tty, clock=VirtualClock())
        p(CallStatus("builtin", "", "note", detail="resuming: kept 1 finished call(s)"))
        p(CallStatus("builtin", "a", "kept"))
        assert "builtin: resuming: kept 1 finished call(s)\n" in out.getvalue()
        assert p.finished == 1 and (
            "1/2  50%" in out.getvalue() if tty else "[1/2] builtin/a" in out.getvalue()
        )


def test_a_call_callsim_failed_on_is_said_to_be_callsims_failure():
    from voice.app.run.failures import failed_call
    from voice.app.run.progress import describe

    m = failed_call("k-1", "k", 2, "caller_speech_failed", "the caller's speech: silence for '嗯'")
    status = CallStatus("builtin", "k-1", "failed", m, m.detail)
    assert describe(status) == "caller_speech_failed (CALLSIM FAILED), the caller's speech: silence for '嗯'"
