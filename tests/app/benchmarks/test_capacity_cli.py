"""The capacity bench's command: its options per transport and its table."""

from __future__ import annotations

from voice.app.benchmarks.capacity import WEBRTC_RAMP, Level
from voice.app.benchmarks.capacity_cli import _format, _parse


def level(**changes: object) -> Level:
    base = dict(calls=4, procs=2, completed=4, failed=0, outcomes={"completed": 4}, frames=5000,
                late_p50_ms=0.1, late_p99_ms=1.2, late_max_ms=3.0, mean_call_s=25.0, wall_s=30.0,
                caller_cpu_pct=40.0, echo_cpu_pct=20.0, machine_busy_pct=35.0, other_pct=1.0,
                runq_wait_pct=0.5, wakeups_per_s=50.0, holds=True, transport="webrtc",
                connect_p50_ms=180.0, connect_max_ms=420.0, cpu_per_call_pct=15.0)  # fmt: skip
    base.update(changes)
    return Level(**base)  # type: ignore[arg-type]


def test_the_transport_is_an_option_and_webrtc_ramps_in_small_steps() -> None:
    assert _parse([]).transport == "pcm"
    args = _parse(["--transport", "webrtc"])
    assert args.transport == "webrtc" and args.calls is None  # main() then takes WEBRTC_RAMP
    assert WEBRTC_RAMP[0] < 10 and list(WEBRTC_RAMP) == sorted(WEBRTC_RAMP)


def test_the_table_names_the_transport_and_gives_set_up_time_and_cpu_per_call() -> None:
    args = _parse(["--transport", "webrtc"])
    text = _format([level(), level(calls=8, holds=False, late_p99_ms=9.5)], args, best=4)
    assert text.startswith("capacity: real-time calls over webrtc against the echo assistant")
    assert "set-up ms" in text and "per call%" in text
    row = next(line for line in text.splitlines() if line.lstrip().startswith("4 "))
    assert " 180 " in row and " 15.0 " in row and row.rstrip().endswith("yes")
    assert text.rstrip().endswith("max N that holds: 4")
