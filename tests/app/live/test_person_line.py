"""A person as the assistant: the caller's audio goes to their speaker, their microphone is the reply."""

from __future__ import annotations

import numpy as np

from tests.fakes import tone
from voice.app.live.person_line import PersonLine
from voice.app.live.ports import MemoryMicrophone, MemorySpeaker
from voice.core.audio import FRAME_SAMPLES
from voice.core.call import AssistantAudio, LineClosed
from voice.lines.line import CallStart


async def test_the_caller_is_played_and_the_microphone_is_the_assistants_audio():
    speaker = MemorySpeaker()
    line = PersonLine(MemoryMicrophone(tone(40)), speaker)
    await line.open(CallStart("c"))
    await line.send(tone(20))
    first, second = await line.recv(), await line.recv()
    assert isinstance(first, AssistantAudio) and isinstance(second, AssistantAudio)
    assert np.array_equal(np.concatenate([first.pcm, second.pcm]), tone(40))
    assert np.array_equal(speaker.played, tone(20))
    await line.hangup("completed")
    assert line.hung_up == "completed"


async def test_a_microphone_that_ran_out_leaves_the_line_silent_until_it_closes():
    import asyncio

    line = PersonLine(MemoryMicrophone(np.zeros(FRAME_SAMPLES, np.int16)), MemorySpeaker())
    await line.open(CallStart("c"))
    await line.recv()
    pending = asyncio.ensure_future(line.recv())
    await asyncio.sleep(0.01)
    assert not pending.done()  # no more audio, and no busy loop
    await line.close()
    assert isinstance(await pending, LineClosed)
