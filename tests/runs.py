"""A small bench run on virtual time, in memory: two reference assistants, one quick and one slow."""

from tests.fakes import reference
from voice.app.run.dataset import BenchConfig, TargetResult, run_bench
from voice.core.clock import VirtualClock
from voice.dialogues import Dialogue, parse_dialogue
from voice.lines.memory import MemoryLine
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS

A, B = "pcm+ws://a.test/pcm", "pcm+ws://b.test/pcm"


def mini(
    i, scenario="delivery", preset="none", relation="alignment", barge=False, pause=False, backchannel=False
) -> Dialogue:
    """Greeting, two caller turns with optional cues (barge-in, mid-turn pause, backchannel)."""
    caller1 = {"role": "caller", "text": "快递到了，放哪里？"}
    if pause:
        caller1["pause_inside"] = {"after": "快递到了，", "ms": 900}
    caller2 = {"role": "caller", "text": "好的，我放门口了。"}
    if barge:
        caller2["barge_in_ms"] = 300
    if backchannel:
        caller2["backchannel"] = {"text": "嗯", "at_ms": 200}
    return parse_dialogue(
        {
            "id": f"m-{i}",
            "scenario": scenario,
            "preset": {"type": preset, "text": "" if preset == "none" else "放门口。"},
            "owner_goal": "收快递",
            "caller_goal": "送快递",
            "relation": relation,
            "turns": [
                {"role": "assistant", "text": "您好。"},
                caller1,
                {"role": "assistant", "text": "放驿站吧。"},
                caller2,
                {"role": "assistant", "text": "谢谢。"},
            ],
        },
        "mem",
        i,
    )


def memory_lines(reply_ms, heard: tuple[str, ...] = ()):
    """Lines to the reference; with ``heard`` it logs those texts as its ASR of each caller turn.

    250 ms of silence ends a turn, so that even the quick one can answer 300 ms after the caller's speech.
    """
    return lambda: MemoryLine(
        reference(reply_ms=reply_ms, reply_len_ms=900, endpoint_ms=250, heard_texts=heard)
    )


async def bench(tmp_path, dialogues, heard: tuple[str, ...] = (), tts=None, **kw) -> list[TargetResult]:
    """Both assistants called on every dialogue; ``heard``: what A logs hearing (B logs nothing); ``tts``:
    the caller's voice (default: a fresh :class:`MemoryTTS`)."""
    config = BenchConfig(out=tmp_path, targets=(A, B), tts="memory", transcribe=True, **kw)
    return await run_bench(
        dialogues,
        config,
        tts or MemoryTTS(),
        MemoryASR([], default="好的"),
        new_clock=VirtualClock,
        line_factories={A: memory_lines(300, heard), B: memory_lines(900)},
    )
