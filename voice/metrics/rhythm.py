"""The dialogue-rhythm score: each assistant turn gets 1-5 from its timing metrics alone.

CallBench scores "dialogue rhythm" as one of seven dimensions; text cannot measure it, timing can.  The
thresholds are grounded in published references, summarised with their sources in ``docs/metrics.md``:

- Human turn-taking gaps cluster around 200 ms across languages (Stivers et al. 2009); GPT-4o voice
  averages 320 ms; a cascaded cloud bot is ~1 s; voice-agent vendors report production p50 of about
  1.4-1.7 s.  So a gap up to 500 ms is human-like (5), up to 1 s good (4), up to 2 s the industry norm (3),
  up to 4 s poor (2), beyond that or no answer at all, broken (1).
- Starting before the caller has finished is talk-over: at most 2, and 1 if it overlaps 500 ms or more.
- Yielding to a barge-in is rewarded: the turn's score is capped by how fast the assistant fell silent
  (≤ 300 ms: 5, ≤ 600: 4, ≤ 1000: 3, ≤ 1500: 2, later or never: 1).
- Taking the turn inside the caller's mid-turn pause costs 2 points; a false start (speech that begins and
  ends while the caller's turn goes on, e.g. a blip in a pause) costs 1 when it was not already a takeover;
  stopping at a backchannel costs 1.

A call's rhythm is the mean of its turn scores; a run's is the mean over all scored turns.
"""

from __future__ import annotations

from dataclasses import dataclass

from voice.metrics.call_metrics import TurnMetrics

# (upper bound of the gap in ms, score), checked in order
GAP_SCORES: tuple[tuple[float, int], ...] = ((500.0, 5), (1000.0, 4), (2000.0, 3), (4000.0, 2))
STOP_SCORES: tuple[tuple[float, int], ...] = ((300.0, 5), (600.0, 4), (1000.0, 3), (1500.0, 2))
EARLY_OVERLAP_MS = 500.0
PAUSE_TAKEOVER_PENALTY = 2
FALSE_START_PENALTY = 1
BACKCHANNEL_STOP_PENALTY = 1


@dataclass(frozen=True)
class RhythmScore:
    score: int  # 1-5
    reasons: tuple[str, ...]  # why points were lost, in words, for reports


def _banded(value: float, bands: tuple[tuple[float, int], ...]) -> int:
    return next((score for bound, score in bands if value <= bound), 1)


def score_turn(t: TurnMetrics) -> RhythmScore:
    """Score the assistant's handling of one caller turn."""
    reasons: list[str] = []
    if t.latency_ms is None:
        return RhythmScore(1, ("no reply",))
    if t.latency_ms < 0:
        score = 1 if t.overlap_ms >= EARLY_OVERLAP_MS else 2
        reasons.append(f"started {-t.latency_ms:.0f} ms before the caller finished")
    else:
        score = _banded(t.latency_ms, GAP_SCORES)
        if score < 5:
            reasons.append(f"gap {t.latency_ms:.0f} ms")
    if t.barge_in is not None and t.barge_in.active:
        stop = t.barge_in.stop_latency_ms
        cap = 1 if stop is None else _banded(stop, STOP_SCORES)
        if cap < score:
            reasons.append(
                "never stopped after the barge-in"
                if stop is None
                else f"stopped {stop:.0f} ms after the barge-in"
            )
            score = cap
    if t.pause_takeover:
        score -= PAUSE_TAKEOVER_PENALTY
        reasons.append("took the turn in the caller's pause")
    elif t.false_starts:
        score -= FALSE_START_PENALTY
        reasons.append(
            f"{t.false_starts} false start{'s' if t.false_starts > 1 else ''} while the caller spoke"
        )
    if t.backchannel_carried_on is False:
        score -= BACKCHANNEL_STOP_PENALTY
        reasons.append("stopped at a backchannel")
    return RhythmScore(max(1, min(5, score)), tuple(reasons))
