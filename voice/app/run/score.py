"""Scoring a finished run on CallBench's seven dimensions, from what the caller heard: ``callsim score``.

For each call of a target folder: its recording and metrics are read back, the heard turns are built with
their timing tags (:func:`voice.metrics.scoring.transcript.build_scoring_input`), a judge scores them, and
dialogue rhythm is copied in from the measured timing score.  Each call's scores are written atomically to
``<call>.scores.json``, last, so a killed scoring resumes; a call already scored by the same judge with the
same transcriber is kept; a call CallSim failed on (:mod:`voice.metrics.simulator`) is not scored, as it
says nothing of the assistant.  The target's summary (per dimension: mean over scored turns, how many were not
scored; by scenario, preset type and relation) goes to ``scores.json``.

The judge's verdict on each call (caller's goal met, preset respected: :mod:`voice.metrics.scoring.verdicts`)
is judged on what was heard, from the same look at the call as its turns, and stored as the call's ``goal``;
the summary's ``goal`` block counts the verdicts.  A call scored before verdicts existed is scored again.

For the built-in assistant, which logs what it meant to say, the same judge also scores those texts on the
same turns ("text"), so the report can show what the phone line cost per judged dimension (not dialogue
rhythm: measured from timing, it is the same in both, so its difference would always be 0); the dataset's own
reference replies are scored as the ceiling, for a call whose turns have any (a reactive caller's own words
have none, and a ceiling of ``[no reply]`` would be no ceiling).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from voice.app.run.resume import dialogue_sha, metrics_path
from voice.core import events as ev
from voice.core.audio import ms_to_samples
from voice.dialogues import Dialogue
from voice.errors import RecordingError
from voice.metrics.bootstrap import bootstrap_difference, interval_text
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.model.call_record import metrics_from_json
from voice.metrics.model.jsonio import Fields, write_json
from voice.metrics.model.run_results import JudgeCoverage, load_target, read_results
from voice.metrics.model.score_files import (
    LABELS,
    CallScores,
    DimensionCell,
    DimensionRow,
    ScoresSummary,
    TextVsHeard,
    TranscriberFacts,
)
from voice.metrics.model.summary import BREAKDOWNS, OPTIONAL_BREAKDOWNS
from voice.metrics.scoring.calibration import judge_label
from voice.metrics.scoring.coverage import NOT_COVERED, mark_not_covered
from voice.metrics.scoring.transcript import build_scoring_input
from voice.metrics.scoring.verdicts import goal_lines, summarize_goals
from voice.metrics.scoring.vocabulary import (
    DIMENSIONS,
    JUDGED,
    DimensionScore,
    GoalVerdict,
    Judge,
    ScoringInput,
    TurnScore,
)
from voice.metrics.simulator import SIMULATOR_OUTCOMES
from voice.recording import Recording, load_recording
from voice.speech.asr import ASREngine
from voice.text.table import text_table

VERSIONS = ("heard", "text", "reference")  # what was scored: the audio, the bot's own text, the dataset's


def with_rhythm(scores: list[TurnScore], call: ScoringInput) -> list[TurnScore]:
    """Dialogue rhythm is the measured timing score of each turn, not a judge's opinion."""
    rhythm = {t.turn: t for t in call.turns}
    out = []
    for s in scores:
        heard = rhythm.get(s.turn)
        value = heard.rhythm if heard is not None else None
        dim = (
            DimensionScore(value, "the measured timing score (voice/metrics/rhythm.py)")
            if value is not None
            else DimensionScore(None, "no timing score: the turn is not a turn of the call")
        )
        out.append(replace(s, scores={**s.scores, "dialogue_rhythm": dim}))
    return out


def intended_texts(rec: Recording, metrics: CallMetrics) -> dict[int, str] | None:
    """What an assistant that logs its replies (``log`` of kind ``reply``) meant to say after each turn."""
    replies = [
        (e.t, str(log.get("text", "")))
        for e in rec.events
        if (log := ev.assistant_log(e)) is not None and log.get("kind") == "reply"
    ]
    if not replies:
        return None
    starts = [ms_to_samples(t.caller_start_ms, rec.sample_rate) for t in metrics.turns]
    out: dict[int, str] = {}
    for i, t in enumerate(metrics.turns):
        hi = starts[i + 1] if i + 1 < len(starts) else len(rec.assistant) + 1
        out[t.turn] = " ".join(text for at, text in replies if starts[i] <= at < hi and text)
    return out


def _as_text(call: ScoringInput, texts: Mapping[int, str | None], *, timed: bool) -> ScoringInput:
    """The same call with each reply replaced by a text (its own log, or the dataset's reference).

    ``timed``: the text was said in this call, so the turn keeps its measured rhythm (the reference was
    never said: it has no timing to score)."""
    turns = [
        replace(t, heard=texts.get(t.turn) or "[no reply]", tags=(), rhythm=t.rhythm if timed else None)
        for t in call.turns
    ]
    return replace(call, turns=turns, transcriber="text")


def score_call(
    rec: Recording,
    metrics: CallMetrics,
    dialogue: Dialogue,
    judge: Judge,
    transcriber: ASREngine | None,
    *,
    heard_by: str = "",
) -> tuple[ScoringInput, dict[str, list[TurnScore]], GoalVerdict]:
    """Every version of one call scored by ``judge`` (rhythm added from the timing), and its verdict on
    the call as heard (the other versions' turns were never a call a caller lived through)."""
    call = build_scoring_input(rec, metrics, dialogue, transcriber, heard_by=heard_by)
    judged = judge.judge_call(call)
    versions = {"heard": with_rhythm(judged.turns, call)}
    intended = intended_texts(rec, metrics)
    if intended is not None:
        versions["text"] = with_rhythm(judge.judge_call(_as_text(call, intended, timed=True)).turns, call)
    references: dict[int, str | None] = {t.turn: t.reference for t in call.turns}
    if any(references.values()):
        versions["reference"] = judge.judge_call(_as_text(call, references, timed=False)).turns
    if not getattr(judge, "reads_annotations", False):  # an LLM judge's "not scored" is its own
        return call, versions, judged.goal
    return call, {v: _covered(dialogue, call, scores) for v, scores in versions.items()}, judged.goal


def _covered(dialogue: Dialogue, call: ScoringInput, scores: list[TurnScore]) -> list[TurnScore]:
    """Each unscored dimension the annotations leave uncovered marked so (never silently "not scored"):
    for a judge that scores from the annotations (``reads_annotations``) only."""
    marked = mark_not_covered(dialogue, call.turns, {s.turn: s.scores for s in scores})
    return [replace(s, scores=marked[s.turn]) for s in scores]


def scores_path(folder: Path, call_id: str) -> Path:
    return folder / f"{call_id}.scores.json"


def scored_by(folder: Path) -> str | None:
    """The judge a target folder was scored by (its ``scores.json``), or None if it was not scored."""
    try:
        judge = json.loads((folder / "scores.json").read_text(encoding="utf-8")).get("judge")
    except (OSError, ValueError):
        return None
    return judge if isinstance(judge, str) else None


def load_scores(folder: Path, call_id: str, judge: str, *, need_goal: bool = False) -> CallScores | None:
    """A call's scores on disk by the same judge (else None: it is scored again).

    ``need_goal``: a file written before calls had a verdict (no ``goal`` key) does not count either."""
    try:
        doc = Fields(json.loads(scores_path(folder, call_id).read_text(encoding="utf-8")), "scores")
        if doc.raw("judge") != judge or (need_goal and "goal" not in doc):
            return None
        return CallScores.from_json(doc, call_id)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def score_target(
    folder: Path,
    dialogues: Mapping[str, Dialogue],
    judge: Judge,
    transcriber: ASREngine | None,
    *,
    on_call: Callable[[str, str], None] = lambda _id, _state: None,
    transcriber_facts: TranscriberFacts | None = None,
    ran: Mapping[str, str] | None = None,
) -> tuple[list[CallScores], ScoresSummary]:
    """Score every call of one target folder (resumable); write each call's scores, then ``scores.json``.

    A call made from another version of its dialogue is skipped; ``ran`` gives each dialogue's content hash
    as run when ``dialogues`` differ from it only by annotations merged in since (``--annotations``).
    Returns the calls' scores and the summary written."""
    results = load_target(folder)
    heard_by = results.settings.text("transcriber") or "the run's transcriber"
    out: list[CallScores] = []
    for call in results.calls:
        call_id, outcome = call.metrics.call_id, call.metrics.outcome
        if outcome in SIMULATOR_OUTCOMES:  # nothing of the assistant to score
            on_call(call_id, f"skipped: {outcome}, CallSim's failure, not the assistant's")
            continue
        kept = load_scores(folder, call_id, judge.name, need_goal=True)
        if kept is not None:
            out.append(kept)
            on_call(call_id, "kept")
            continue
        dialogue = dialogues.get(call.metrics.dialogue_id)
        sha = (ran or {}).get(dialogue.id) or dialogue_sha(dialogue) if dialogue is not None else ""
        if dialogue is None or call.labels.get("dialogue_sha", sha) != sha:
            on_call(call_id, "skipped: its dialogue is not in the dialogue file (or was edited)")
            continue
        try:
            rec = load_recording(folder / call_id)
            metrics = metrics_from_json(json.loads(metrics_path(folder, call_id).read_text("utf-8")))
        except (RecordingError, OSError, ValueError) as exc:
            on_call(call_id, f"skipped: {exc}")
            continue
        scoring, versions, goal = score_call(rec, metrics, dialogue, judge, transcriber, heard_by=heard_by)
        scores = CallScores(call_id, {k: v for k, v in call.labels.items() if k in LABELS}, versions, goal)
        write_json(scores_path(folder, call_id), scores.to_json(judge.name, scoring.transcriber))
        out.append(scores)
        on_call(call_id, "scored")
    summary = replace(summarize_scores(out, judge.name), transcriber=transcriber_facts or None)
    write_json(folder / "scores.json", summary.to_json())
    doc = read_results(folder)  # the file as written, every key kept: the coverage is added to it
    doc["judge_coverage"] = judge_coverage(summary).to_json()
    write_json(folder / "results.json", doc)
    return out, summary


def judge_coverage(summary: ScoresSummary) -> JudgeCoverage:
    """What the judge judged of the calls as heard, per dimension (results.json's ``judge_coverage``):
    turns ``judged``, ``not_judged``, and of those the ``no_grounds`` ones (neither the annotations nor the
    dialogue gave it anything to judge by; the rest could not be judged: cut off, no reply)."""
    heard = summary.dimensions.get("heard", {})
    return JudgeCoverage(
        summary.judge,
        summary.calls,
        {dim: (c.scored, c.not_scored, c.not_covered) for dim, c in heard.items()},
    )


def _values(calls: Sequence[CallScores], version: str, dim: str) -> list[list[float]]:
    """Per call, the scored values of one dimension (the unit a bootstrap resamples)."""
    return [
        [float(v) for s in c.versions.get(version, []) if (v := _score(s, dim)) is not None] for c in calls
    ]


def _score(s: TurnScore, dim: str) -> int | None:
    return s.scores[dim].score if dim in s.scores else None


def dimension_row(calls: Sequence[CallScores], version: str = "heard") -> DimensionRow:
    """Per dimension: the mean over scored turns, how many turns were scored and not scored."""
    row: DimensionRow = {}
    for dim in DIMENSIONS:
        turns = [s for c in calls for s in c.versions.get(version, []) if dim in s.scores]
        values = [float(v) for s in turns if (v := s.scores[dim].score) is not None]
        row[dim] = DimensionCell(
            mean=round(sum(values) / len(values), 3) if values else None,
            scored=len(values),
            not_scored=len(turns) - len(values),
            not_covered=sum(s.scores[dim].reason.startswith(NOT_COVERED) for s in turns),
        )
    return row


def summarize_scores(calls: Sequence[CallScores], judge: str) -> ScoresSummary:
    """The target's scores: per version and dimension; by breakdown label; text vs heard with a 95 % CI (the
    judged dimensions: rhythm is the same timing score in both); the judge's call verdicts (``goal``)."""
    dimensions = {v: dimension_row(calls, v) for v in VERSIONS if any(v in c.versions for c in calls)}
    breakdowns: dict[str, dict[str, DimensionRow]] = {}
    optional = [(k, n) for k, n in OPTIONAL_BREAKDOWNS if k in ("voice", "voice_sex")]
    for key, name in [*BREAKDOWNS, *(p for p in optional if any(p[0] in c.labels for c in calls))]:
        groups: dict[str, list[CallScores]] = {}
        for c in calls:
            groups.setdefault(c.label(key), []).append(c)
        breakdowns[name] = {g: dimension_row(group) for g, group in groups.items()}
    text_vs_heard = None
    both = [c for c in calls if "text" in c.versions]
    if both:
        text_vs_heard = {}
        for dim in JUDGED:
            text, heard = _values(both, "text", dim), _values(both, "heard", dim)
            d = bootstrap_difference(text, heard, "mean", paired=True)
            n = min(d.n_a, d.n_b)  # calls scored both ways: an interval from 2 on (``n=1`` shown otherwise)
            text_vs_heard[dim] = TextVsHeard(d.diff, (d.lo, d.hi), n)
    goals = summarize_goals([c.goal for c in calls])
    return ScoresSummary(judge, len(calls), dimensions, breakdowns, text_vs_heard, goals)


def format_scores(summary: ScoresSummary, title: str = "") -> str:
    """The seven-dimension table: heard (and text, reference, the line's cost when known), per dimension;
    under it the judge's call verdicts, when the summary has them."""
    versions = [v for v in VERSIONS if v in summary.dimensions]
    header = ("dimension", *(f"{v} mean (n)" for v in versions))
    if summary.text_vs_heard is not None:
        header = (*header, "heard - text [95% CI]")
    rows = []
    for dim in DIMENSIONS:
        row = [dim.replace("_", " ")]
        for v in versions:
            row.append(score_cell(summary.cell(v, dim), "({})"))
        if summary.text_vs_heard is not None:
            row.append(heard_minus_text(summary, dim))
        rows.append(tuple(row))
    label = judge_label(summary.judge)
    head = f"{title}  judge {label}; {summary.calls} calls\n" if title else ""
    goal = "".join(f"\n{line}" for line in goal_lines(summary.goal)) if summary.goal else ""
    return head + text_table(header, rows) + goal


def score_cell(cell: DimensionCell | None, count: str) -> str:
    """A table's cell: the mean and how many turns were scored (``count``: ``"({})"``, ``"(n={})"``), then
    how many were not judged and of those how many had no grounds to judge (the rest could not be: cut
    off, no reply); ``no grounds to judge`` when no turn had any.  No turn is dropped silently."""
    if cell is None:
        return "not scored"
    uncovered, unjudged = cell.not_covered, cell.not_scored
    if cell.mean is None:
        return NOT_COVERED if uncovered and uncovered == unjudged else "not scored"
    mean = f"{cell.mean:.2f} {count.format(cell.scored)}"
    if not unjudged:
        return mean
    why = f": {uncovered} with {NOT_COVERED}" if uncovered else ""
    return f"{mean}, {unjudged} not judged{why}"


def heard_minus_text(summary: ScoresSummary, dim: str) -> str:
    """``+0.40 [-0.10, +0.90]`` for a judged dimension; ``-2.00 (n=1)`` from one call (no interval); ``-``
    for dialogue rhythm (the same timing score both ways, so always 0) and where nothing was scored."""
    d = (summary.text_vs_heard or {}).get(dim)
    if dim not in JUDGED or d is None or d.heard_minus_text is None:
        return "-"
    lo, hi = d.ci95
    ci = interval_text(lo, hi, d.n_calls, lambda x: f"{x:+.2f}") if d.n_calls > 1 else f"(n={d.n_calls})"
    return f"{d.heard_minus_text:+.2f}" + ("" if ci == "-" else f" {ci}")


def parse_fail_under(specs: Sequence[str]) -> dict[str, float]:
    """``--fail-under DIM=X`` (repeatable): a dimension's mean (heard) must not fall below X."""
    out: dict[str, float] = {}
    for spec in specs:
        dim, sep, value = spec.partition("=")
        dim = dim.strip().replace(" ", "_")
        if not sep or dim not in DIMENSIONS:
            raise ValueError(f"--fail-under {spec!r}: expected DIM=X with DIM one of {', '.join(DIMENSIONS)}")
        out[dim] = float(value)
    return out


def broken_floors(summary: ScoresSummary, floors: Mapping[str, float]) -> list[str]:
    """Which ``--fail-under`` floors a target's heard scores break (a dimension never scored breaks it)."""
    broken = []
    for dim, floor in floors.items():
        cell = summary.cell("heard", dim)
        mean = None if cell is None else cell.mean
        if mean is None or mean < floor:
            broken.append(f"{dim} = {'not scored' if mean is None else f'{mean:.2f}'} < {floor:g}")
    return broken
