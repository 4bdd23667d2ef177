"""Whole calls over the Twilio line, through the real runner, driver and call core, against plain websocket
bots: one that behaves, and bots that break the protocol.  A bad bot ends its own call with a recorded
reason; the run goes on with the next call.  Real time, localhost, in-memory caller voice."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from voice.app.run.runner import RunSettings, run_dialogues
from voice.core import events as ev
from voice.core.audio import resample, rms_dbfs
from voice.core.caller import CallerTiming
from voice.dialogues import parse_dialogue
from voice.lines.codec import mulaw_decode, mulaw_encode
from voice.lines.effects import LineEffects
from voice.lines.factory import make_line_factory
from voice.lines.targets import parse_target
from voice.recording import load_recording
from voice.speech.tts.memory import MemoryTTS

REPLY = resample(MemoryTTS(f0_hz=220).synthesize("好的，放门口吧。"), 16000, 8000)


def dialogue(id_: str) -> Any:
    return parse_dialogue(
        {
            "id": id_,
            "scenario": "takeout",
            "preset": {"type": "none", "text": ""},
            "owner_goal": "拿到外卖",
            "caller_goal": "送外卖",
            "relation": "alignment",
            "turns": [
                {"role": "caller", "text": "外卖到了。", "pause_before_ms": 300},
                {"role": "assistant", "text": "好的，放门口吧。"},
            ],
        }
    )


async def bot(ws: ServerConnection) -> None:
    """Answers the caller's turn (speech, then 400 ms of quiet) with a reply, its mark, then misbehaves as
    the dialogue id asks."""
    await ws.recv()  # connected
    start = json.loads(await ws.recv())["start"]
    sid, how = start["streamSid"], start["customParameters"]["call_id"]
    heard, quiet = False, 0
    try:
        async for message in ws:
            event = json.loads(message)
            if event["event"] != "media":
                continue
            loud = rms_dbfs(mulaw_decode(base64.b64decode(event["media"]["payload"]))) > -30
            heard, quiet = heard or loud, 0 if loud else quiet + 1
            if how == "closes-early" and heard:
                await ws.close(code=1011, reason="crashed")
                return
            if not (heard and quiet == 20):
                continue
            if how == "malformed":
                await ws.send("{this is not json")
            elif how == "bad-payload":
                await ws.send(json.dumps({"event": "media", "streamSid": sid, "media": {"payload": "%%%"}}))
            elif how == "flood":
                chunk = base64.b64encode(bytes(8000)).decode()
                for _ in range(70):
                    await ws.send(
                        json.dumps({"event": "media", "streamSid": sid, "media": {"payload": chunk}})
                    )
            if how == "unknown-events":
                await ws.send(json.dumps({"event": "transcript", "text": "外卖到了"}))
            for i in range(0, len(REPLY), 160):  # faster than real time, 20 ms per message
                payload = base64.b64encode(mulaw_encode(REPLY[i : i + 160])).decode()
                await ws.send(json.dumps({"event": "media", "streamSid": sid, "media": {"payload": payload}}))
            await ws.send(json.dumps({"event": "mark", "streamSid": sid, "mark": {"name": "reply-end"}}))
    except ConnectionClosed:
        pass


@pytest.mark.timeout(120)
async def test_bad_bots_end_their_own_calls_and_the_run_goes_on(tmp_path: Path) -> None:
    ids = ["good", "malformed", "unknown-events", "bad-payload", "flood", "closes-early", "good-again"]
    server = await serve(bot, "127.0.0.1", 0, max_size=None)
    port = server.sockets[0].getsockname()[1]
    target = parse_target(f"twilio+ws://127.0.0.1:{port}/media")
    settings = RunSettings(
        out_dir=tmp_path, target=str(target), tts_name="memory", timing=CallerTiming(seed=1)
    )
    async with server:
        results = await run_dialogues(
            [dialogue(i) for i in ids], settings, make_line_factory(target), MemoryTTS(), None
        )
    by_id = {m.dialogue_id: m for m in results}
    for good in ("good", "unknown-events", "good-again"):
        assert by_id[good].outcome == "completed" and not by_id[good].failed, by_id[good]
        assert by_id[good].turns[0].latency_ms is not None
    for bad, why in [("malformed", "malformed JSON"), ("bad-payload", "not base64"), ("flood", "flood")]:
        m = by_id[bad]
        assert (m.outcome, m.failed) == ("protocol_error", True)
        events = load_recording(tmp_path / f"{bad}.wav").events
        end = next(e for e in events if isinstance(e, ev.CallEnded))
        assert why in end.detail
    closed = by_id["closes-early"]
    assert closed.outcome == "line_closed" and closed.failed
    # The good call's event log shows the bot's mark and when it played: with the reply's last sample.
    events = load_recording(tmp_path / "good.wav").events
    reply = [e for e in events if isinstance(e, ev.AudioReceived)]
    reply_end = reply[-1].start + reply[-1].samples
    (mark,) = [e for e in events if isinstance(e, ev.MarkReceived)]
    (played,) = [e for e in events if isinstance(e, ev.MarkPlayed)]
    assert (mark.name, mark.due) == ("reply-end", reply_end)
    assert (played.name, played.at) == ("reply-end", reply_end)
    assert reply_end <= played.t < reply_end + 320  # reported in the frame that played that sample
    for bad in ("malformed", "bad-payload", "flood"):  # a protocol error ends the call before its mark
        assert not any(e.kind.startswith("mark") for e in load_recording(tmp_path / f"{bad}.wav").events)
    unknown = load_recording(tmp_path / "unknown-events.wav").events
    assert any(isinstance(e, ev.ControlReceived) and e.event == "unknown" for e in unknown)


@pytest.mark.timeout(60)
async def test_a_call_through_network_effects(tmp_path: Path) -> None:
    server = await serve(bot, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    target = parse_target(f"twilio+ws://127.0.0.1:{port}/media")
    effects = LineEffects(jitter_ms=30, loss_rate=0.02, noise_snr_db=25, caller_gain_db=-3)
    settings = RunSettings(
        out_dir=tmp_path, target=str(target), tts_name="memory", timing=CallerTiming(seed=1)
    )
    async with server:
        (m,) = await run_dialogues(
            [dialogue("good")],
            settings,
            make_line_factory(target, effects=effects, seed=5),
            MemoryTTS(),
            None,
        )
    assert m.outcome == "completed" and m.turns[0].latency_ms is not None
    rec = load_recording(tmp_path / "good.wav")
    assert np.abs(rec.assistant).max() > 1000
    assert any(isinstance(e, ev.MarkPlayed) and e.name == "reply-end" for e in rec.events)


async def test_nobody_answering_is_a_connect_failure_and_the_run_goes_on(tmp_path: Path) -> None:
    server = await serve(bot, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    await asyncio.sleep(0)
    target = parse_target(f"twilio+ws://127.0.0.1:{port}/media")
    settings = RunSettings(out_dir=tmp_path, target=str(target), tts_name="memory")
    results = await run_dialogues(
        [dialogue("a"), dialogue("b")], settings, make_line_factory(target), MemoryTTS(), None
    )
    assert [m.outcome for m in results] == ["connect_failed", "connect_failed"]
