import json

import numpy as np
import pytest

from voice.core.call import CallEvent
from voice.errors import RecordingError
from voice.run.recording import Recording, load_recording, save_recording


def test_save_and_load_round_trip(tmp_path):
    rec = Recording(
        "call-1",
        np.arange(640, dtype=np.int16),
        -np.arange(640, dtype=np.int16),
        [CallEvent(0, "call_start", {"dialogue": "d"}), CallEvent(320, "caller_turn", {"turn": 0})],
        {"dialogue_id": "d", "references": ["你好"]},
    )
    wav, log = save_recording(tmp_path, rec)
    assert wav.name == "call-1.wav" and log.name == "call-1.events.jsonl"
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    assert lines[1] == {"t": 320, "ms": 20.0, "kind": "caller_turn", "turn": 0}
    assert lines[-1]["kind"] == "meta"
    for p in (wav, log, tmp_path / "call-1"):
        back = load_recording(p)
        assert np.array_equal(back.caller, rec.caller) and np.array_equal(back.assistant, rec.assistant)
        assert back.events == rec.events and back.meta["references"] == ["你好"]


def test_incomplete_recordings_are_refused_with_the_file_named(tmp_path):
    rec = Recording("x", np.zeros(10, np.int16), np.zeros(10, np.int16), [], {})
    wav, log = save_recording(tmp_path, rec)
    log.write_text('{"t": 0, "kind": "call_start"}\n', encoding="utf-8")  # meta line missing
    with pytest.raises(RecordingError, match="incomplete"):
        load_recording(wav)
    log.write_text("{oops\n", encoding="utf-8")
    with pytest.raises(RecordingError, match=r"x.events.jsonl:1"):
        load_recording(wav)
    log.unlink()
    with pytest.raises(RecordingError, match="needs both"):
        load_recording(wav)
