"""A big run's report shows an even sample and the worst calls in full, and links the rest."""

from __future__ import annotations

import re

from voice.app.report import sampling
from voice.app.report.build import build_report
from voice.app.report.sampling import shown_in_full
from voice.metrics.call_metrics import CallMetrics, TurnMetrics


def calls(n: int) -> list[CallMetrics]:
    """Call i: failed if 77; latency p90 i % 50 ms (seven turns of it); rhythm 3 + (i % 7) / 7 (i % 7 of
    its turns 4, the others 3); no false starts; the longest silence 100 ms."""

    def turn(t: int, i: int) -> TurnMetrics:
        lat = float(i % 50)
        return TurnMetrics(
            t, "after_reply", "", 0.0, 1000.0, 1000.0 + lat, lat, 0.0, rhythm=4 if t < i % 7 else 3
        )

    return [
        CallMetrics(f"c{i:03d}", "d", "completed", i == 77, 9000.0, None, [turn(t, i) for t in range(7)], 7,
                    longest_silence_ms=100.0)
        for i in range(n)
    ]  # fmt: skip


def test_a_small_run_shows_every_call_in_full() -> None:
    assert list(shown_in_full(calls(sampling.FULL_CALLS))) == [
        f"c{i:03d}" for i in range(sampling.FULL_CALLS)
    ]


def test_a_big_run_shows_an_even_sample_and_the_worst_calls_with_why() -> None:
    chosen = shown_in_full(calls(1000))
    assert chosen["c050"] == "sample" and chosen["c100"] == "sample"  # every 50th of 1,000 for 20
    assert chosen["c000"] == "lowest rhythm"  # sampled too, but the stronger reason is shown
    assert chosen["c077"] == "failed"
    assert {k for k, why in chosen.items() if why == "slowest latency p90"} <= {
        f"c{i:03d}" for i in range(1000) if i % 50 == 49
    }
    assert len(chosen) <= sampling.SAMPLE + sampling.WORST * len(sampling.WORST_BY)
    assert shown_in_full(calls(1000)) == chosen  # deterministic: the same report twice


async def test_the_calls_not_shown_in_full_are_linked_to_their_files(run_dir, monkeypatch) -> None:
    monkeypatch.setattr(sampling, "FULL_CALLS", 1)
    monkeypatch.setattr(sampling, "SAMPLE", 1)
    monkeypatch.setattr(sampling, "WORST", 0)
    html = build_report(run_dir, audio="none")[0].read_text()
    assert html.count('<svg class="timeline"') == 2  # one call in full per target
    stubs = re.findall(r'<p class="call" id="call-\d-m-\d">.*?</p>', html)
    assert len(stubs) == 4 and all(">wav</a>" in s and ">jsonl</a>" in s for s in stubs)
    assert "3 calls; in full below, 1" in html
