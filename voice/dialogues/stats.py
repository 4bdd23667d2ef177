"""Coverage of a dialogue set: how many calls per scenario x preset and per relation, and how many cues.

A benchmark set is only as good as its spread: every scenario under every kind of preset, every
owner/caller relation, and enough barge-ins, backchannels and pauses to exercise turn-taking.  These counts
are what ``callsim data stats`` prints and what the bundled sample's quotas are checked against.  They are
a report on loaded records, so they live apart from :mod:`voice.dialogues.schema`, which defines and reads
them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from voice.dialogues.schema import Dialogue
from voice.dialogues.validation import PRESET_TYPES, RELATIONS, SCENARIOS


@dataclass(frozen=True)
class DatasetStats:
    """Coverage of a dialogue set; every enum value is present (possibly 0) so gaps show up."""

    dialogues: int
    by_scenario: Mapping[str, int]
    by_preset: Mapping[str, int]
    by_relation: Mapping[str, int]
    scenario_preset: Mapping[tuple[str, str], int]
    caller_turns: int
    assistant_turns: int
    barge_ins: int
    backchannels: int
    pauses_inside: int
    pauses_before: int


def dialogue_stats(dialogues: Iterable[Dialogue]) -> DatasetStats:
    """Coverage counts of a dialogue set (used to check quotas and printed by the CLI)."""
    items = list(dialogues)
    callers = [t for d in items for t in d.caller_turns]
    return DatasetStats(
        dialogues=len(items),
        by_scenario={s: sum(d.scenario == s for d in items) for s in SCENARIOS},
        by_preset={p: sum(d.preset.type == p for d in items) for p in PRESET_TYPES},
        by_relation={r: sum(d.relation == r for d in items) for r in RELATIONS},
        scenario_preset=dict(Counter((d.scenario, d.preset.type) for d in items)),
        caller_turns=len(callers),
        assistant_turns=sum(len(d.assistant_turns) for d in items),
        barge_ins=sum(t.barge_in_ms is not None for t in callers),
        backchannels=sum(t.backchannel is not None for t in callers),
        pauses_inside=sum(t.pause_inside is not None for t in callers),
        pauses_before=sum(t.pause_before_ms is not None for t in callers),
    )


def format_stats(stats: DatasetStats) -> str:
    """A plain-text report: the scenario x preset matrix with totals, then relations and cue counts."""
    cues = {
        "caller turns": stats.caller_turns,
        "assistant turns": stats.assistant_turns,
        "barge-ins": stats.barge_ins,
        "backchannels": stats.backchannels,
        "pauses inside": stats.pauses_inside,
        "pauses before": stats.pauses_before,
    }
    w = max(len(label) for label in (*SCENARIOS, *RELATIONS, *cues)) + 2
    lines = [
        f"dialogues: {stats.dialogues}",
        "",
        "scenario".ljust(w) + "".join(f"{c:>10}" for c in PRESET_TYPES),
    ]
    lines[-1] += f"{'total':>10}"
    for s in SCENARIOS:
        row = [*(stats.scenario_preset.get((s, p), 0) for p in PRESET_TYPES), stats.by_scenario.get(s, 0)]
        lines.append(s.ljust(w) + "".join(f"{n:>10}" for n in row))
    row = [*(stats.by_preset.get(p, 0) for p in PRESET_TYPES), stats.dialogues]
    lines += ["total".ljust(w) + "".join(f"{n:>10}" for n in row), "", "relation"]
    lines += [f"  {r}".ljust(w) + f"{stats.by_relation.get(r, 0):>10}" for r in RELATIONS]
    lines += ["", "turns and cues"] + [f"  {label}".ljust(w) + f"{n:>10}" for label, n in cues.items()]
    return "\n".join(lines)
