"""``callsim score`` through the real command line: the table, the scores files and the gate's exit code."""

import json

from tests.runs import bench
from voice.cli import main
from voice.dialogues import bundled_dialogues_path, load_dialogues


async def test_score_prints_the_table_and_gates(tmp_path, capsys):
    d = {x.id: x for x in load_dialogues(bundled_dialogues_path())}
    await bench(tmp_path, [d["delivery-regular-01"]])
    assert main(["score", str(tmp_path), "--transcriber", "memory"]) == 0
    out = capsys.readouterr().out
    assert out.count("semantic understanding") == 2  # one table per target
    summary = json.loads((tmp_path / "pcm-ws-a.test-pcm" / "scores.json").read_text())
    assert summary["transcriber"] == {"name": "memory (scripted)"}  # every scored run says who transcribed it
    floor = ["--fail-under", "semantic_understanding=5.1"]
    assert main(["score", str(tmp_path), "--transcriber", "memory", *floor]) == 4
    assert "gate broke" in capsys.readouterr().err
