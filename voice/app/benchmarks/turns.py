"""The built-in assistant's turn-taking trade-off: patience in pauses and with backchannels against speed.

Each setting is a list of the built-in assistant's ``--set KEY=VALUE`` overrides
(``voice/contract/tuning.py``:
the turn model, the VAD's stop time, the ASR window...).  Every setting plays the same bundled dialogues as
real calls (``callsim bench --target builtin``, one call at a time so that no call waits for another's
Whisper), and the table puts side by side what the caller measured:

* latency p50 / p90: caller speech end → the reply heard, over answered turns;
* pause takeover: share of the mid-turn pauses the assistant spoke into (low is right);
* backchannel carry-on: share of the caller's backchannels the assistant talked on through (high is right);
* barge-in success and stop latency p50: the caller interrupting the assistant.

By default the dialogues are the bundled ones with a cue (a pause, a backchannel or a barge-in).  Each
setting's run folder is kept under ``--out`` (a rerun resumes it: calls already made are not made again).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voice.app.run.provenance import bench_provenance
from voice.contract.tuning import parse_tuning
from voice.dialogues import Dialogue, bundled_dialogues_path, load_dialogues
from voice.errors import ConfigError

SETTINGS: dict[str, tuple[str, ...]] = {
    "before: silence 0.4 s, 30 s window": (
        "turn_model=silence",
        "vad_stop_secs=0.4",
        "asr_audio_context_s=full",
        "asr_prompt=以下是普通话的句子。",
        "hold_after_secs=0",
    ),
    "silence 0.2 s": ("turn_model=silence",),
    "smart-turn": ("turn_model=smart-turn",),
    "lexical": ("turn_model=lexical",),
    "running, no hold": ("hold_after_secs=0",),
    "running, hold (default)": (),
}
"""The settings compared by default: what the built-in assistant did before (silence after a 0.4 s VAD stop,
Whisper's full window and plain prompt, a barge-in heard only once confirmed), then today's VAD and ASR with
each turn model (``lexical``: the whole segment's words after the VAD's stop; ``running``, the default:
pieces heard as they close, :mod:`server.turn_end`), and the default without and with the hold
(``server/hold.py``)."""


@dataclass(frozen=True)
class Row:
    """One setting's figures (None where nothing applied)."""

    setting: str
    calls: int
    turns: int
    latency_p50_ms: float | None
    latency_p90_ms: float | None
    pauses: int
    pause_takeover_rate: float | None
    backchannels: int
    backchannel_carry_on_rate: float | None
    barge_ins: int
    barge_in_success_rate: float | None
    stop_latency_p50_ms: float | None
    false_starts: int = 0  # assistant speech begun and ended inside a caller turn (cut short by the caller)


def with_cues(dialogues: Sequence[Dialogue]) -> list[Dialogue]:
    """The dialogues with a mid-turn pause, a backchannel or a barge-in."""

    def has_cue(d: Dialogue) -> bool:
        return any(t.pause_inside or t.backchannel or t.barge_in_ms for t in d.caller_turns)

    return [d for d in dialogues if has_cue(d)]


def row_from_target(setting: str, target: Mapping[str, Any]) -> Row:
    """A row from a target's ``results.json`` (its summary, and its calls for the counts)."""
    s, calls = target["summary"], target["calls"]
    turns = [t for c in calls for t in c["turns"]]
    barge = s["barge_in"]
    return Row(
        setting=setting,
        calls=len(calls),
        turns=len(turns),
        latency_p50_ms=s["latency_ms"]["p50"],
        latency_p90_ms=s["latency_ms"]["p90"],
        pauses=sum(1 for t in turns if t.get("pause_takeover") is not None),
        pause_takeover_rate=s["pause_takeover_rate"],
        backchannels=sum(1 for t in turns if t.get("backchannel_carried_on") is not None),
        backchannel_carry_on_rate=s["backchannel_carry_on_rate"],
        barge_ins=barge["n"],
        barge_in_success_rate=barge["success_rate"],
        stop_latency_p50_ms=barge["stop_latency_p50_ms"],
        false_starts=sum(int(t.get("false_starts", 0)) for t in turns),
    )


def format_table(rows: Sequence[Row]) -> str:
    """The rows as a fixed-width table."""

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f}"

    def rate(v: float | None, n: int) -> str:
        return "-" if v is None else f"{100 * v:.0f}% ({n})"

    head = (
        *("setting", "calls", "latency p50", "p90"),
        *("pause takeover", "backchannel on", "barge-in", "stop p50", "false starts"),
    )
    body = [
        (
            r.setting,
            str(r.calls),
            ms(r.latency_p50_ms),
            ms(r.latency_p90_ms),
            rate(r.pause_takeover_rate, r.pauses),
            rate(r.backchannel_carry_on_rate, r.backchannels),
            rate(r.barge_in_success_rate, r.barge_ins),
            ms(r.stop_latency_p50_ms),
            f"{r.false_starts} in {r.turns} turns",
        )
        for r in rows
    ]
    widths = [max(len(x[i]) for x in (head, *body)) for i in range(len(head))]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()  # noqa: E731
    return "\n".join([line(head), line(tuple("-" * w for w in widths)), *map(line, body)])


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def run_setting(name: str, overrides: Sequence[str], ids: Sequence[str], args: argparse.Namespace) -> Row:
    """Play the dialogues against the built-in assistant with ``overrides``; its row."""
    from voice.app.cli import main as callsim

    out = args.out / _slug(name)
    argv = [
        "bench", "--target", "builtin", "--dialogues", str(args.dialogues), "--ids", ",".join(ids),
        "--repeats", str(args.repeats), "--seed", str(args.seed), "--concurrency", "1", "--out", str(out),
        "--no-transcribe", "--no-report", *[a for kv in overrides for a in ("--assistant-set", kv)],
    ]  # fmt: skip
    code = callsim(argv)
    if code not in (0, 3):  # 3: some calls failed, which the figures show
        raise SystemExit(f"bench_turns: {name}: callsim bench exited {code}")
    run = json.loads((out / "results.json").read_text(encoding="utf-8"))
    [target] = run["targets"]
    doc = json.loads((out / target["folder"] / "results.json").read_text(encoding="utf-8"))
    return row_from_target(name, doc)


def parse_setting(text: str) -> tuple[str, tuple[str, ...]]:
    """``NAME=KEY=VALUE,KEY=VALUE`` (or ``NAME=`` for the defaults) → the name and its overrides, checked
    here (a misspelt key is refused before the first setting's calls, not after them) and written back in
    their canonical form for ``callsim bench --assistant-set``."""
    name, sep, rest = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=KEY=VALUE,KEY=VALUE")
    try:
        tuning = parse_tuning([kv for kv in rest.split(",") if kv.strip()], option=name.strip())
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name.strip(), tuning.pairs()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scripts/bench_turns", description=__doc__.split("\n\n")[0])
    p.add_argument("--dialogues", type=Path, default=bundled_dialogues_path())
    p.add_argument("--ids", help="these dialogue ids, comma-separated (default: those with a cue)")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--setting",
        action="append",
        type=parse_setting,
        metavar="NAME=KEY=VALUE,...",
        help="a setting to compare, repeatable (default: the built-in comparison, see SETTINGS)",
    )
    p.add_argument("--out", type=Path, default=Path("recordings/bench_turns"), help="run folders (kept)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = p.parse_args(argv)
    provenance = bench_provenance("scripts/bench_turns", argv, json_out=args.json)
    dialogues = load_dialogues(args.dialogues)
    ids = args.ids.split(",") if args.ids else [d.id for d in with_cues(dialogues)]
    settings = dict(args.setting) if args.setting else SETTINGS
    rows = [run_setting(name, overrides, ids, args) for name, overrides in settings.items()]
    if args.json:
        doc = {"provenance": provenance, "rows": [r.__dict__ for r in rows]}
        print(json.dumps(doc, ensure_ascii=False, indent=1))
    else:
        print(f"\n{len(ids)} dialogue(s) × {args.repeats} repeat(s) per setting, one call at a time")
        print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
