"""A finished call's replies heard after it: one clip per caller turn, transcribed one by one."""

import numpy as np

from tests.fakes import plan, reference, run_core, turn
from voice.app.run.calls import hear_clip, reply_clips, transcribe_replies, with_heard_texts
from voice.core.call import CallCore
from voice.metrics.measure import measure
from voice.recording import Recording
from voice.speech.asr import MemoryASR


def recorded(bot_reply_ms: float = 600) -> Recording:
    core = CallCore(plan(turn(0), turn(1)))
    heard = run_core(core, reference(reply_ms=bot_reply_ms))
    return Recording(
        "c", np.zeros(sum(len(h) for h in heard), np.int16), np.concatenate(heard), core.events, {}
    )


def test_each_caller_turns_reply_is_one_clip_and_its_text_lands_on_that_turn():
    rec = recorded()
    metrics = measure(rec)
    clips = reply_clips(rec, metrics)
    assert len(clips) == len(metrics.turns) == 2 and all(c is not None and len(c) > 0 for c in clips)
    texts = [hear_clip(MemoryASR(["好的"]), clips[0]), hear_clip(MemoryASR(["再见"]), clips[1])]
    heard = with_heard_texts(metrics, texts)
    assert [t.heard_text for t in heard.turns] == ["好的", "再见"]
    assert transcribe_replies(rec, metrics, MemoryASR(["好的", "再见"])) == heard  # the same, in one go


def test_a_turn_with_no_reply_keeps_its_text_and_an_empty_clip_is_nothing_without_the_engine():
    silent = MemoryASR([])  # raises if asked anything
    assert hear_clip(silent, None) is None and hear_clip(silent, np.zeros(0, np.int16)) == ""
    metrics = measure(recorded())
    kept = with_heard_texts(metrics, [None, ""])
    assert kept.turns[0] == metrics.turns[0] and kept.turns[1].heard_text == ""
