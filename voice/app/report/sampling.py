"""Which calls a big run's report shows in full: a report that embeds every call grows with the run (a
6-call report is ~850 KB, mostly audio), so past :data:`FULL_CALLS` calls a target's section shows its
timelines and audio for an even sample and for the worst calls by each headline figure, and links the other
calls' files.  Summaries, breakdowns and the call index always cover every call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from voice.metrics.call_metrics import CallMetrics
from voice.metrics.reduce import percentile

FULL_CALLS = 60  # a target with at most this many calls shows every call in full
SAMPLE = 20  # calls spread evenly over the run
WORST = 5  # and this many worst calls by each figure below

# (why it is shown, the figure, True: higher is worse)
WORST_BY: tuple[tuple[str, Callable[[CallMetrics], float | None], bool], ...] = (
    ("failed", lambda c: 1.0 if c.failed else None, True),
    ("slowest latency p90", lambda c: percentile(c.latencies_ms, 90), True),
    ("lowest rhythm", lambda c: c.rhythm, False),
    ("most false starts", lambda c: float(c.false_starts) if c.false_starts else None, True),
    ("longest silence", lambda c: c.longest_silence_ms, True),
)


def shown_in_full(calls: Sequence[CallMetrics]) -> dict[str, str]:
    """The call ids to show in full, each with why (``sample`` or a figure it is among the worst by)."""
    if len(calls) <= FULL_CALLS:
        return {c.call_id: "" for c in calls}
    chosen: dict[str, str] = {}
    step = len(calls) / SAMPLE
    for k in range(SAMPLE):
        chosen.setdefault(calls[int(k * step)].call_id, "sample")
    for why, figure, higher_is_worse in WORST_BY:
        scored = [(v, c.call_id) for c in calls if (v := figure(c)) is not None]
        scored.sort(key=lambda x: (-x[0] if higher_is_worse else x[0], x[1]))
        for _, call_id in scored[:WORST]:  # a sampled call keeps the stronger reason
            chosen[call_id] = why if chosen.get(call_id) in (None, "sample") else chosen[call_id]
    return chosen
