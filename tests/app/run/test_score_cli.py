"""``callsim score`` through the real command line: the table, the scores files and the gate's exit code."""

import json

from tests.runs import bench
from voice.app.cli import main
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


async def test_score_with_an_llm_judge_prints_its_verdicts_on_the_calls(tmp_path, capsys, llm, monkeypatch):
    from tests.app.run.test_score import llm_judge_answer

    monkeypatch.setenv("CALLSIM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    d = {x.id: x for x in load_dialogues(bundled_dialogues_path())}
    await bench(tmp_path, [d["delivery-regular-01"]])
    llm.respond(llm_judge_answer)
    args = [
        "score",
        str(tmp_path),
        "--transcriber",
        "memory",
        "--judge",
        "openai:fake",
        "--llm-base-url",
        llm.url,
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.count("caller's goal met (judge): yes 0, partly 0, no 1, not judged 0; met rate 0%") == 2
    assert out.count("preset respected (judge): yes 1, no 0, not applicable 0, not judged 0") == 2
    goal = json.loads((tmp_path / "pcm-ws-a.test-pcm" / "delivery-regular-01.scores.json").read_text())[
        "goal"
    ]
    assert goal["caller_goal_met"] == "no" and goal["reason"] == "the caller's goal: no"


async def test_score_reads_annotations_kept_apart_from_the_dialogues_and_still_scores_the_run(
    tmp_path, capsys
):
    from tests.records import good
    from voice.dialogues import parse_dialogue

    dialogues = tmp_path / "d.jsonl"
    dialogues.write_text(json.dumps(good(), ensure_ascii=False) + "\n", encoding="utf-8")
    await bench(tmp_path / "run", [parse_dialogue(good(), dialogues, 1)])  # run without annotations
    notes = tmp_path / "a.jsonl"
    row = {"dialogue": "takeout-regular-01", "draft": True, "turns": [{"turn": 0, "key_points": [["门口"]]}]}
    notes.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    args = ["score", str(tmp_path / "run"), "--dialogues", str(dialogues), "--transcriber", "memory"]
    assert main([*args, "--annotations", str(notes)]) == 0
    out, err = capsys.readouterr()
    assert f"annotations: {notes}: 1 entry is an unreviewed draft (takeout-regular-01)" in out
    assert "the scores against them are provisional" in out
    assert "judge checklist/5: blind separation " in out  # the judge named with its blind figures
    rows = {line.split("  ")[0]: line for line in out.splitlines()}
    # no context points annotated, but the preset and the call give context use its grounds on every turn
    assert rows["context use"].count("5.00 (4)") == 2 and "not judged" not in rows["context use"]
    # key points on turn 0 only: of the rest, turn 2 asks a question (grounds), turns 1 and 3 give none
    assert "2 not judged: 2 with no grounds to judge" in rows["semantic understanding"]
    assert "takeout-regular-01: scored" in err and "skipped" not in err  # annotated since: not "edited"
    scored = tmp_path / "run" / "pcm-ws-a.test-pcm" / "takeout-regular-01.scores.json"
    first = json.loads(scored.read_text())["versions"]["reference"][0]["scores"]["semantic_understanding"]
    assert "of 1 key points" in first["reason"]  # the file's key point was checked
    notes.write_text(json.dumps({**row, "dialogue": "nope"}) + "\n", encoding="utf-8")
    assert main([*args, "--annotations", str(notes)]) == 2
    assert f"{notes}:1: dialogue: no dialogue 'nope'" in capsys.readouterr().err
