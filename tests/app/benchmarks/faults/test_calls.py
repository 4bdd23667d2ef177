"""The batch faults' shared parts: their dialogue is valid, and what a run left is read back."""

import json

from voice.app.benchmarks.faults.calls import dialogue, done_calls, dumps, write_lines
from voice.dialogues import load_dialogues


def test_the_faults_dialogue_passes_validation(tmp_path):
    path = write_lines(
        tmp_path / "d.jsonl", [dumps(dialogue("call-1")), dumps(dialogue("call-2", "喂，在吗？"))]
    )
    assert [d.id for d in load_dialogues(path)] == ["call-1", "call-2"]


def test_done_calls_reads_readable_metrics_files_only(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.metrics.json").write_text(json.dumps({"outcome": "completed"}))
    (tmp_path / "t" / "b.metrics.json").write_text('{"outc')
    assert done_calls(tmp_path) == {"a": {"outcome": "completed"}}
