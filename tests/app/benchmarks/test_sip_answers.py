"""``scripts/bench_sip_answers``: one behaviour dialled by the real ``callsim bench``, and the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voice.app.benchmarks.sip_answers import _line_stats, dial, main, table


def test_the_table_names_each_far_end_with_what_was_recorded() -> None:
    busy = {"behaviour": "busy", "outcome": "busy", "failed": True, "detail": "answered 486", "seconds": 4.2}
    flood = {"behaviour": "rtp_flood", "outcome": "protocol_error", "failed": True, "detail": "flood",
             "counted": {"rtp_overflow": 501}, "seconds": 6.0}  # fmt: skip
    rows = [busy, flood]
    text = table(rows)
    assert "busy" in text and "answered 486" in text and "rtp_overflow 501" in text


def test_line_stats_come_from_the_event_logs_meta(tmp_path: Path) -> None:
    log = tmp_path / "c1.events.jsonl"
    log.write_text(json.dumps({"kind": "meta", "line_stats": {"sip_malformed": 3}}) + "\n")
    assert _line_stats(tmp_path, "c1") == {"sip_malformed": 3} and _line_stats(tmp_path, "c2") == {}


def test_an_unknown_behaviour_is_a_usage_error() -> None:
    with pytest.raises(SystemExit):
        main(["rude"])


@pytest.mark.e2e
async def test_callsim_bench_records_a_decline(tmp_path: Path) -> None:
    row = await dial("declined", tmp_path / "declined")
    assert row["outcome"] == "declined" and row["failed"] is True and "603" in row["detail"]
