"""What the batch faults share: a minimal dialogue, a ``callsim bench`` run measured, what it left behind.

The calls go to the echo assistant (cheap, no models) in the espeak voice, one at a time: a call takes a
few seconds, so a fault of several runs stays within seconds too.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from voice.app.benchmarks.faults.fault import Measured, callsim_command, run_measured

ESPEAK = ("--tts", "espeak", "--no-transcribe", "--no-report")
BENCH_TIMEOUT_S = 180.0


def dialogue(call_id: str, text: str = "喂，你好，我是快递员。") -> dict[str, Any]:
    """A minimal valid dialogue: one caller turn, said at once (the echo assistant has no greeting)."""
    return {
        "id": call_id,
        "scenario": "delivery",
        "preset": {"type": "none", "text": ""},
        "owner_goal": "不被打扰",
        "caller_goal": "把快递送到",
        "relation": "alignment",
        "turns": [{"role": "caller", "text": text}],
    }


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def bench(dialogues: Path, out: Path, target: str, *extra: str, **measure: Any) -> Measured:
    """``callsim bench`` on ``dialogues`` into ``out``: one call at a time, espeak voice, no report."""
    cmd = callsim_command(
        "bench", "--dialogues", str(dialogues), "--target", target, "--out", str(out), "--all",
        "--concurrency", "1", *ESPEAK, *extra,
    )  # fmt: skip
    return run_measured(cmd, timeout=measure.pop("timeout", BENCH_TIMEOUT_S), **measure)


def traceback_in(m: Measured) -> bool:
    return "Traceback" in m.stderr or "Traceback" in m.stdout


def last_line(m: Measured) -> str:
    lines = [line for line in m.stderr.splitlines() if line.strip()]
    return lines[-1][:160] if lines else f"exit {m.returncode}"


def done_calls(folder: Path) -> dict[str, dict[str, Any]]:
    """The calls of a target folder with a readable metrics file, by call id."""
    out: dict[str, dict[str, Any]] = {}
    for p in folder.glob("*/*.metrics.json"):
        with contextlib.suppress(ValueError, OSError):
            out[p.name.removesuffix(".metrics.json")] = json.loads(p.read_text(encoding="utf-8"))
    return out


@contextlib.contextmanager
def echo() -> Iterator[str]:
    """The echo assistant as a ``pcm+ws://`` target."""
    from voice.app.run.launch import echo_assistant

    with echo_assistant(200) as (url, _):
        yield f"pcm+{url}"
