"""``scripts/bench_sip_answers``: every way the phone network can answer, dialled by ``callsim bench``.

For each behaviour of :class:`~voice.app.benchmarks.sip_phone.ScriptedPhone` (or those given), a scripted far
end
listens on 127.0.0.1, ``callsim bench --target sip:bot@127.0.0.1:PORT --limit 1`` calls it as a user would,
and the table says what CallSim recorded in results.json: the outcome, whether it counts as failed, the
detail, what the line counted (line_stats), and how long the call took to end.  Nothing is asserted here
(the tests do); this shows what a user would see.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NotRequired, TypedDict

from voice.app.benchmarks.sip_phone import BEHAVIOURS, ScriptedPhone
from voice.app.run.provenance import bench_provenance
from voice.core.clock import monotonic_s

BENCH_TIMEOUT_S = 240.0
COUNTED = ("sip_malformed", "sip_strays", "sip_reoffers", "rtp_wrong_source", "rtp_overflow", "rtp_received")


class Answer(TypedDict):
    """One far end's row, as printed with ``--json``: what CallSim recorded of the call, or why nothing."""

    behaviour: str
    outcome: str  # the call's, or HUNG / no results when the bench itself did not finish
    detail: str
    failed: NotRequired[bool]
    counted: NotRequired[dict[str, int]]  # the line's non-zero counters of COUNTED
    seconds: NotRequired[float]  # dialling → callsim bench ended


async def dial(behaviour: str, out: Path) -> Answer:
    """One ``callsim bench`` call to a far end playing ``behaviour``: what results.json and the log say."""
    async with ScriptedPhone(behaviour) as phone:
        t0 = monotonic_s()
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "voice.app.cli", "bench", "--target", phone.uri, "--limit", "1", "--out",
            str(out), "--fresh", "--no-transcribe", "--no-speed-index", "--no-report", "--max-failed", "100%",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            async with asyncio.timeout(BENCH_TIMEOUT_S):
                _, err = await process.communicate()
        except TimeoutError:
            process.kill()
            return {"behaviour": behaviour, "outcome": "HUNG", "detail": f"no end in {BENCH_TIMEOUT_S:g} s"}
        took = monotonic_s() - t0
    results = next(out.glob("*/results.json"), None)
    if results is None:
        return {"behaviour": behaviour, "outcome": "no results", "detail": err.decode()[-300:]}
    call = json.loads(results.read_text())["calls"][0]
    stats = _line_stats(results.parent, call["call_id"])
    counted = {k: stats[k] for k in COUNTED if stats.get(k)}
    return {"behaviour": behaviour, "outcome": call["outcome"], "failed": call["failed"],
            "detail": call.get("detail", ""), "counted": counted, "seconds": round(took, 1)}  # fmt: skip


def _line_stats(folder: Path, call_id: str) -> dict[str, int]:
    """The counters of the call's ``line_stats``, from its event log's first record (none if it never
    connected); what else the line described (its transport, the SIP statuses) is not counted here."""
    log = folder / f"{call_id}.events.jsonl"
    if not log.exists():
        return {}
    for line in log.read_text().splitlines():
        record = json.loads(line)
        if record.get("kind") == "meta":
            stats = record.get("line_stats") or {}
            return {k: v for k, v in stats.items() if isinstance(v, int)}
    return {}


def table(rows: Sequence[Answer]) -> str:
    lines = [f"{'far end':<15} {'outcome':<17} {'failed':<6} {'s':>5}  detail; counted by the line"]
    for r in rows:
        counted = ", ".join(f"{k} {v}" for k, v in r.get("counted", {}).items())
        detail = (r.get("detail") or "")[:90] + (f"; {counted}" if counted else "")
        lines.append(f"{r['behaviour']:<15} {r['outcome']:<17} {r.get('failed', '-')!s:<6} "
                     f"{r.get('seconds', '-')!s:>5}  {detail}")  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/bench_sip_answers", description=__doc__.split("\n")[0])
    ap.add_argument("behaviours", nargs="*", default=list(BEHAVIOURS), help=", ".join(BEHAVIOURS))
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    a = ap.parse_args(argv)
    if unknown := [b for b in a.behaviours if b not in BEHAVIOURS]:
        ap.error(f"unknown behaviour {', '.join(unknown)} (choose from {', '.join(BEHAVIOURS)})")
    provenance = bench_provenance("scripts/bench_sip_answers", argv, json_out=a.json)
    rows: list[Answer] = []
    with tempfile.TemporaryDirectory(prefix="callsim-sip-answers-") as tmp:
        for behaviour in a.behaviours:
            rows.append(asyncio.run(dial(behaviour, Path(tmp) / behaviour)))
            print(f"{behaviour}: {rows[-1]['outcome']}", file=sys.stderr)
    print(json.dumps({"rows": rows, "provenance": provenance}, ensure_ascii=False, indent=2) if a.json
          else table(rows))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
