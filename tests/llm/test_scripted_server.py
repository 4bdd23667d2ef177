"""The stand-in chat model (``voice/llm/scripted_server.py``): a real OpenAI-compatible server playing a
script."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from voice.llm.scripted_server import StandInLLM


def post(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    request = urllib.request.Request(
        f"{url}/chat/completions", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def content(raw: bytes) -> str:
    return json.loads(raw)["choices"][0]["message"]["content"]


def test_it_answers_the_script_in_order_then_the_responder_and_keeps_every_request() -> None:
    with StandInLLM() as model:
        model.answer("一").answer({"action": "say"}).fail(429, "slow down")
        model.respond(lambda body: f"heard {len(body['messages'])}")
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        assert content(post(model.url, body)[1]) == "一"
        assert json.loads(content(post(model.url, body)[1])) == {"action": "say"}
        status, raw = post(model.url, body)
        assert status == 429 and json.loads(raw)["error"]["message"] == "slow down"
        assert content(post(model.url, body)[1]) == "heard 1"
        assert [r.body["model"] for r in model.requests] == ["m"] * 4 and model.max_in_flight == 1


def test_without_script_or_responder_it_fails_and_a_streamed_request_gets_events() -> None:
    with StandInLLM() as model:
        assert post(model.url, {"messages": []})[0] == 500
        model.answer("你好，在吗？")
        status, raw = post(model.url, {"messages": [], "stream": True})
    events = [line.removeprefix("data: ") for line in raw.decode().split("\n\n") if line]
    assert status == 200 and events[-1] == "[DONE]"
    pieces = [json.loads(e)["choices"][0]["delta"].get("content", "") for e in events[:-1]]
    assert pieces[:2] == ["你好，", "在吗？"] and "".join(pieces) == "你好，在吗？"


def test_a_free_port_is_taken_on_loopback() -> None:
    model = StandInLLM(port=0)
    assert model.url.startswith("http://127.0.0.1:") and not model.url.endswith(":0/v1")
    with model:
        pass
