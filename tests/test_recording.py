import dataclasses
import json
import os

import numpy as np
import pytest

from voice.core import events as ev
from voice.core.event_json import event_from_json, event_to_json, expand_rx_run
from voice.errors import LineError, RecordingError
from voice.files import write_wav
from voice.recording import EventStream, Recording, load_recording, save_recording, streamed_events


def test_save_and_load_round_trip(tmp_path):
    rec = Recording(
        "call-1",
        np.arange(640, dtype=np.int16),
        -np.arange(640, dtype=np.int16),
        [ev.CallStarted(0, "d", 1, True, "您好"), ev.CallerSpoke(320, 0, "first", 320, 330, 600)],
        {"dialogue_id": "d", "scenario": "takeout"},
    )
    wav, log = save_recording(tmp_path, rec)
    assert wav.name == "call-1.wav" and log.name == "call-1.events.jsonl"
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    assert lines[1] == {"t": 320, "ms": 20.0, "kind": "caller_turn", "turn": 0, "mode": "first",
                        "audio_start": 320, "speech_start": 330, "speech_end": 600}  # fmt: skip
    assert lines[-1]["kind"] == "meta"
    for p in (wav, log, tmp_path / "call-1"):
        back = load_recording(p)
        assert np.array_equal(back.caller, rec.caller) and np.array_equal(back.assistant, rec.assistant)
        assert back.events == rec.events and back.meta["scenario"] == "takeout"


def test_a_flac_recording_loads_and_measures_as_its_wav_and_replaces_it(tmp_path):
    from voice.metrics.measure import measure

    rng = np.random.default_rng(1)
    caller, assistant = (rng.integers(-20000, 20000, 32000).astype(np.int16) for _ in range(2))
    events = [ev.CallStarted(0, "d", 1, True, "您好"), ev.CallerSpoke(320, 0, "first", 320, 330, 600)]
    rec = Recording("c", caller, assistant, events, {"dialogue_id": "d"})
    wav, _ = save_recording(tmp_path / "w", rec)
    flac, _ = save_recording(tmp_path / "f", rec, audio="flac")
    assert flac.name == "c.flac" and flac.stat().st_size < wav.stat().st_size
    back = load_recording(flac)
    assert np.array_equal(back.caller, caller) and np.array_equal(back.assistant, assistant)  # lossless
    assert measure(back) == measure(load_recording(wav))
    save_recording(tmp_path / "f", rec)  # made again as WAV: one audio file, the new one
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == ["c.events.jsonl", "c.wav"]
    with pytest.raises(RecordingError, match="choose wav or flac"):
        save_recording(tmp_path, rec, audio="mp3")


def test_recordings_made_before_typed_events_load_with_their_references_in_the_plan(tmp_path):
    """0.1 kept references in ``meta``; they now belong to the plan events, where ``measure`` reads them."""
    (tmp_path / "old.events.jsonl").write_text(
        '{"t": 0, "ms": 0.0, "kind": "call_start", "dialogue": "d", "turns": 1, "greeting": true}\n'
        '{"t": 0, "ms": 0.0, "kind": "turn_plan", "turn": 0, "dialogue_turn": 1, "text": "喂", "think": 10,'
        ' "backchannel": {"text": "嗯", "at": 8000}}\n'
        '{"kind": "meta", "call_id": "old", "references": ["好的"], "greeting_reference": "您好"}\n',
        encoding="utf-8",
    )
    save_recording(tmp_path, Recording("tmp", np.zeros(4, np.int16), np.zeros(4, np.int16), []))
    (tmp_path / "tmp.wav").rename(tmp_path / "old.wav")
    start, plan = load_recording(tmp_path / "old").events
    assert isinstance(start, ev.CallStarted) and start.greeting_reference == "您好"
    assert isinstance(plan, ev.TurnPlanned) and plan.reference == "好的"
    assert plan.backchannel == ev.BackchannelCue("嗯", 8000)


def test_incomplete_recordings_are_refused_with_the_file_named(tmp_path):
    rec = Recording("x", np.zeros(10, np.int16), np.zeros(10, np.int16), [], {})
    wav, log = save_recording(tmp_path, rec)
    log.write_text('{"t": 0, "kind": "line_closed", "reason": "x"}\n', encoding="utf-8")  # meta line missing
    with pytest.raises(RecordingError, match="incomplete"):
        load_recording(wav)
    log.write_text("{oops\n", encoding="utf-8")
    with pytest.raises(RecordingError, match=r"x.events.jsonl:1"):
        load_recording(wav)
    log.write_text('{"kind": "meta"}\n{"t": 5, "kind": "rx", "samples": "320"}\n', encoding="utf-8")
    with pytest.raises(RecordingError, match=r"x.events.jsonl:2: .*rx: field 'samples'"):
        load_recording(wav)
    log.unlink()
    with pytest.raises(RecordingError, match="needs both"):
        load_recording(wav)


def decoded(obj):
    return expand_rx_run(obj) if obj["kind"] == "rx_run" else [event_from_json(obj)]


def test_audio_arrivals_are_saved_as_runs_with_the_same_information(tmp_path):
    rec, events = _streamed_call(tmp_path)
    irregular = [  # jitter: arrivals and sizes that are not regular must survive the packing too
        ev.AudioReceived(e.t + (i % 3), 320 + 160 * (i % 2), e.arrival + 7 * (i % 5), e.start + i)
        if isinstance(e, ev.AudioReceived) else e
        for i, e in enumerate(events)
    ]  # fmt: skip
    log = save_recording(tmp_path, dataclasses.replace(rec, events=irregular))[1]
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    runs = [x for x in lines if x["kind"] == "rx_run"]
    assert sum(r["n"] for r in runs) == 200 and all(r["n"] <= 50 for r in runs)
    assert not any(x["kind"] == "rx" for x in lines)
    assert load_recording(log).events == irregular
    per_record = sum(len(json.dumps(event_to_json(e, 16000))) + 1 for e in irregular[1:201])
    assert sum(len(json.dumps(r)) + 1 for r in runs) < per_record / 3


def _streamed_call(tmp_path):
    events = [
        ev.CallStarted(0, "d", 1, True),
        *[ev.AudioReceived(320 * i, 320, 320 * i, 320 * i) for i in range(200)],
        ev.ControlReceived(20_000, "log", {"kind": "caller", "text": "喂"}),
        ev.CallEnded(64_000, "completed", False),
    ]
    rec = Recording("call-1", np.zeros(640, np.int16), np.ones(640, np.int16), events, {"scenario": "x"})
    return rec, events


def test_a_streamed_log_is_the_file_a_whole_save_writes(tmp_path):
    rec, events = _streamed_call(tmp_path)
    whole = save_recording(tmp_path / "whole", rec)[1].read_bytes()
    stream = EventStream(tmp_path / "streamed", "call-1")
    for e in events:
        stream.write(e)
    kept = [e for e in events if not isinstance(e, ev.AudioReceived)]  # what memory holds when streaming
    log = save_recording(tmp_path / "streamed", dataclasses.replace(rec, events=kept), stream)[1]
    assert log.read_bytes() == whole and not stream.partial.exists()
    assert load_recording(log).events == events


def test_a_crash_mid_call_leaves_a_partial_log_of_whole_records_that_is_not_a_recording(tmp_path):
    rec, events = _streamed_call(tmp_path)
    stream = EventStream(tmp_path, "call-1")
    for e in events[:-1]:
        stream.write(e)  # written out at least once per second of call time, before any save
    lines = stream.partial.read_text(encoding="utf-8").splitlines()
    assert lines and all(json.loads(x)["kind"] != "meta" for x in lines)
    written = [e for x in lines for e in decoded(json.loads(x))]
    assert written == events[: len(written)]
    assert written[-1].t >= 16_000
    stream.close()  # what a crash leaves: every line whole, no meta
    write_wav(tmp_path / "call-1.wav", [rec.caller, rec.assistant])
    os.replace(stream.partial, tmp_path / "call-1.events.jsonl")
    with pytest.raises(RecordingError, match="no meta line"):
        load_recording(tmp_path / "call-1")


def test_a_stream_of_a_call_that_never_connected_leaves_nothing(tmp_path):
    stream = EventStream(tmp_path, "call-1")
    stream.write(ev.CallStarted(0, "d", 1, True))
    stream.discard()
    assert list(tmp_path.iterdir()) == []


def test_streamed_events_keep_no_log_of_a_call_never_connected_and_the_partial_one_of_a_break(tmp_path):
    with pytest.raises(LineError), streamed_events(tmp_path, "call-1") as stream:
        stream.write(ev.CallStarted(0, "d", 1, True))
        raise LineError("refused")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(KeyboardInterrupt), streamed_events(tmp_path, "call-2") as stream:
        stream.write(ev.CallStarted(0, "d", 1, True))
        raise KeyboardInterrupt
    assert [p.name for p in tmp_path.iterdir()] == ["call-2.events.jsonl.partial"]
    assert json.loads((tmp_path / "call-2.events.jsonl.partial").read_text())["kind"] == "call_start"
    with streamed_events(tmp_path, "call-3") as stream:  # a call that ran: the stream stays for saving
        stream.write(ev.CallStarted(0, "d", 1, True))
    rec = Recording("call-3", np.zeros(10, np.int16), np.zeros(10, np.int16), [], {"dialogue_id": "d"})
    save_recording(tmp_path, rec, stream)
    assert load_recording(tmp_path / "call-3.wav").events[0] == ev.CallStarted(0, "d", 1, True)


def test_a_damaged_event_log_or_a_folder_is_refused_saying_which_file_and_why(tmp_path):
    rec = Recording("x", np.zeros(10, np.int16), np.zeros(10, np.int16), [], {"dialogue_id": "d"})
    wav, log = save_recording(tmp_path, rec)
    whole = '{"t": 0, "kind": "line_closed", "reason": "挂断"}\n{"kind": "meta"}\n'.encode()
    log.write_bytes(whole[: whole.index("断".encode()) + 1])  # a copy stopped inside a character
    with pytest.raises(RecordingError, match=r"x\.events\.jsonl:1: not UTF-8 text at byte \d+ \(cut inside"):
        load_recording(wav)
    log.write_bytes(whole[:-5])  # inside the last line
    with pytest.raises(RecordingError, match=r"x\.events\.jsonl:2: malformed event \(the last line: was the"):
        load_recording(wav)
    log.write_text('{"kind": "meta"}\n{"t": "soon", "kind": "line_closed"}\n', encoding="utf-8")
    with pytest.raises(RecordingError, match=r"x\.events\.jsonl:2: malformed event"):  # not a TypeError
        load_recording(wav)
    with pytest.raises(
        RecordingError, match=r"a folder; name its recordings, e\.g\. .*\*\.events\.jsonl \(1 there\)"
    ):
        load_recording(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(RecordingError, match="it holds none"):
        load_recording(tmp_path / "empty")
