"""A call's timeline: lanes from the recording, marks from the call's metrics (false starts among them)."""

import json
from dataclasses import replace

from voice.app.report.timeline import Timeline, false_start_segments, timeline_from_recording, timeline_svg
from voice.metrics.call_metrics import BargeIn, TurnMetrics
from voice.metrics.model.call_record import metrics_from_json
from voice.recording import load_recording


def turn_of(**kw):
    """Turn 0 of a call, spoken from 1 s to 3 s (no reply unless ``kw`` gives one)."""
    return TurnMetrics(
        **{"turn": 0, "mode": "", "text": "", "caller_start_ms": 1000.0, "caller_end_ms": 3000.0}
        | {"reply_onset_ms": None, "latency_ms": None, "overlap_ms": 0.0}
        | kw
    )


def test_false_starts_are_the_segments_measurement_counted():
    speech = [(500.0, 900.0), (1200.0, 1500.0), (2100.0, 2600.0), (3100.0, 3900.0)]
    turn = turn_of(false_starts=2)
    # the greeting (before the turn) and the reply (still going at the caller's end) are not false starts
    assert false_start_segments(speech, turn) == [(1200.0, 1500.0), (2100.0, 2600.0)]
    assert false_start_segments(speech, replace(turn, false_starts=0)) == []
    # after a barge-in, only speech begun once the assistant yielded (onset + stop latency) counts
    barged = replace(turn, barge_in=BargeIn(at_ms=1000.0, active=True, stop_latency_ms=500.0, success=False))
    assert false_start_segments(speech, replace(barged, false_starts=1)) == [(2100.0, 2600.0)]
    never = replace(turn, barge_in=BargeIn(at_ms=1000.0, active=True, stop_latency_ms=None, success=False))
    assert false_start_segments(speech, never) == []


def test_the_svg_marks_each_false_start_on_the_assistant_lane():
    tl = Timeline(5000.0, [(1000.0, 3000.0, 0)], [], [], [(1200.0, 1500.0), (3100.0, 3900.0)])
    turn = turn_of(false_starts=1, rhythm=4)
    svg = timeline_svg(tl, [replace(turn, latency_ms=100.0, reply_onset_ms=3100.0)])
    assert svg.count('class="falsestart"') == 1 and ">false start<title>" in svg
    assert "assistant speech 1.20–1.50 s began and ended while the caller was still speaking" in svg
    assert 'class="falsestart"' not in timeline_svg(tl, [replace(turn, false_starts=0)])


def test_each_timelines_arrow_marker_has_an_id_of_its_own():
    tl = Timeline(5000.0, [(1000.0, 3000.0, 0)], [], [], [(3100.0, 3900.0)])
    turn = turn_of(latency_ms=100.0)
    svgs = [
        timeline_svg(tl, [replace(turn, reply_onset_ms=3100.0)], uid=u) for u in ("call-0-m-1", "call-1-m-1")
    ]
    for svg, uid in zip(svgs, ("call-0-m-1", "call-1-m-1"), strict=True):  # one page holds every timeline
        assert f'<marker id="arr-{uid}"' in svg and f'marker-end="url(#arr-{uid})"' in svg


async def test_lanes_come_from_the_recording_and_the_measured_speech(run_dir):
    folder = run_dir / "pcm-ws-a.test-pcm"
    call = json.loads((folder / "m-1.metrics.json").read_text())
    tl = timeline_from_recording(load_recording(folder / "m-1"), call["assistant_speech_ms"])
    assert len(tl.pauses) == 1 and len(tl.caller) == 3  # turn 1 split at its pause, then turn 2
    assert tl.assistant == [(round(s, 1), round(e, 1)) for s, e in call["assistant_speech_ms"]]
    marked = [false_start_segments(tl.assistant, t) for t in metrics_from_json(call).turns]
    assert [len(m) for m in marked] == [t["false_starts"] for t in call["turns"]] == [1, 0]
