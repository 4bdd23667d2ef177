"""A raw-PCM test assistant behind each carrier: CallSim's carrier line ↔ pipecat's serializer ↔ the raw
protocol, on localhost, both ways."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
import pytest

from server.assistants.carrier_serving import carrier_of
from server.assistants.serving import serve_pcm
from voice.core.audio import from_bytes, to_bytes
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.lines.factory import LINES
from voice.lines.line import CallStart

TONE = (np.sin(np.arange(320) * 2 * np.pi * 500 / 16000) * 8000).astype(np.int16)


def test_the_path_names_the_carrier() -> None:
    assert carrier_of("/telnyx?dialogue=%7B%7D") == "telnyx" and carrier_of("/pipecat/x") == "pipecat"
    assert carrier_of("/pcm") is None and carrier_of("/") is None and carrier_of("/sip") is None


@pytest.mark.parametrize("carrier", ["twilio", "telnyx", "plivo", "exotel", "vonage", "genesys", "pipecat"])
async def test_a_raw_assistant_behind_a_carrier_hears_and_is_heard(carrier: str) -> None:
    heard: list[Any] = []

    async def assistant(ws: Any) -> None:  # a raw-protocol assistant: answers 10 frames heard, then stops
        heard.append(json.loads(await ws.recv()))
        frames = 0
        async for message in ws:
            if isinstance(message, bytes):
                heard.append(from_bytes(message))
                frames += 1
                if frames == 10:
                    for _ in range(5):
                        await ws.send(to_bytes(TONE))
                    await ws.send(json.dumps({"event": "log", "note": "sent"}))
                    await ws.send(json.dumps({"event": "clear"}))
                    await ws.send(json.dumps({"event": "hangup", "reason": "done"}))
            else:
                heard.append(json.loads(message))

    server, url = await serve_pcm(assistant)
    async with server:
        line = LINES[carrier].line(url.replace("/pcm", f"/{carrier}?dialogue=%7B%22reference%22%3A%201%7D"))
        await line.open(CallStart("c1", {}))
        got: list[LineInput] = []
        async with asyncio.timeout(10):
            for _ in range(40):
                await line.send(TONE)
                await asyncio.sleep(0.02)
            while not isinstance(item := await line.recv(), LineClosed):
                got.append(item)
                if isinstance(item, AssistantControl) and item.event == "hangup":
                    break  # (Genesys: the bot's disconnect; the caller then closes)
        await line.close()
    assert heard[0] == {
        "event": "start",
        "sample_rate": 16000,
        "encoding": "pcm_s16le",
        "dialogue": {"reference": 1},
    }
    frames = [h for h in heard[1:] if isinstance(h, np.ndarray)]
    assert (
        all(len(f) == 320 for f in frames) and len(frames) >= 10
    )  # 20 ms at 16 kHz, whatever the carrier's rate
    level = np.abs(np.concatenate(frames[2:10]).astype(int)).max()
    assert 6000 < level < 10000  # the tone came through the carrier's codec
    audio = np.concatenate([g.pcm for g in got if isinstance(g, AssistantAudio)])
    assert len(audio) >= 4 * 320 and 6000 < np.abs(audio.astype(int)).max() < 10000
    controls = [(g.event, dict(g.payload)) for g in got if isinstance(g, AssistantControl)]
    assert "clear" in [e for e, _ in controls]
    assert controls[-1][0] == "hangup"  # the close (Genesys: its disconnect) is the bot's hang-up
    if carrier != "genesys":  # AudioHook carries only its own messages
        assert ("log", {"note": "sent"}) in controls
