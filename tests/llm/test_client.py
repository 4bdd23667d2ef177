"""The LLM client against a real local HTTP server that plays the model (tests/llm_fake.py)."""

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from tests.llm_fake import FakeLLM
from voice.errors import EngineError, EngineOutputError, EngineUnavailable
from voice.llm.client import ChatRequest, LLMClient, Message, parse_json
from voice.llm.settings import LLMSettings

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer", "enum": [1, 2, 3]}},
    "required": ["answer"],
    "additionalProperties": False,
}
ASK = ChatRequest(
    (Message("system", "You count."), Message("user", "一加一等于几？用 JSON 回答。")),
    schema=SCHEMA,
    prompt_version="t1",
)


pytestmark = pytest.mark.usefixtures("no_openai_env")


def client(fake_or_url, tmp_path, sleeps=None, **settings):
    url = fake_or_url if isinstance(fake_or_url, str) else fake_or_url.url
    settings = {"base_url": url, "cache_dir": tmp_path / "llm", **settings}
    return LLMClient(
        LLMSettings("fake-model", **settings), sleep=(sleeps.append if sleeps is not None else None)
    )


def test_the_request_asks_for_schema_output_at_temperature_0(llm, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm.answer({"answer": 2})
    result = LLMClient(LLMSettings("fake-model", cache_dir=tmp_path)).chat(ASK)
    assert (result.data, result.cached, result.requests, result.mode) == ({"answer": 2}, False, 1, "schema")
    (seen,) = llm.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer sk-test"
    assert seen.body["model"] == "fake-model" and seen.body["temperature"] == 0
    assert seen.body["messages"] == [{"role": m.role, "content": m.content} for m in ASK.messages]
    assert seen.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
    }


def test_a_local_server_needs_no_key(llm, tmp_path):
    llm.answer({"answer": 1})
    assert client(llm, tmp_path).chat(ASK).data == {"answer": 1}
    assert llm.requests[0].headers["authorization"] == "Bearer not-needed"


def test_a_server_without_json_schema_is_asked_in_json_mode_and_that_is_remembered(llm, tmp_path):
    llm.fail(400, "This response_format type is unavailable now").answer({"answer": 1}).answer({"answer": 2})
    llm_client = client(llm, tmp_path)
    first = llm_client.chat(ASK)
    assert (first.data, first.mode, first.requests) == ({"answer": 1}, "object", 2)
    fallback = llm.requests[1].body
    assert fallback["response_format"] == {"type": "json_object"}
    assert (
        fallback["messages"][-1]["role"] == "system"
        and '"enum": [1, 2, 3]' in fallback["messages"][-1]["content"]
    )
    other = ChatRequest((Message("user", "再来一次，JSON"),), schema=SCHEMA)
    assert llm_client.chat(other).mode == "object"
    assert llm.requests[2].body["response_format"] == {"type": "json_object"}  # no second refusal


def test_a_server_that_refuses_every_json_mode_gets_a_plain_request_then_a_clear_error(llm, tmp_path):
    llm.fail(400, "no schema").fail(400, "no json mode").answer('{"answer": 3}')
    result = client(llm, tmp_path).chat(ASK)
    assert result.mode == "prompt" and "response_format" not in llm.requests[2].body
    llm.fail(422, "bad").fail(422, "bad").fail(422, "context too long")
    with pytest.raises(EngineError, match="context too long"):
        client(llm, tmp_path, cache="off").chat(ASK)


@pytest.mark.parametrize("status", [500, 502, 503, 429, 408])
def test_a_passing_failure_is_retried_after_a_backoff(llm, tmp_path, status):
    sleeps: list[float] = []
    llm.fail(status).answer({"answer": 2})
    result = client(llm, tmp_path, sleeps).chat(ASK)
    assert result.data == {"answer": 2} and result.requests == 2 and sleeps == [1.0]


def test_backoff_doubles_up_to_its_cap_and_honours_retry_after(llm, tmp_path):
    sleeps: list[float] = []
    llm.fail(429, headers={"retry-after": "7"}).fail(503).fail(503).fail(503).fail(503)
    with pytest.raises(EngineError, match=r"still failing after 5 attempts: HTTP 503") as err:
        client(llm, tmp_path, sleeps, attempts=5, backoff_s=0.5, backoff_max_s=1.5).chat(ASK)
    assert not isinstance(err.value, EngineUnavailable)
    assert sleeps == [7.0, 1.0, 1.5, 1.5]
    assert len(llm.requests) == 5


def test_a_request_that_times_out_is_retried(llm, tmp_path):
    sleeps: list[float] = []
    llm.answer({"answer": 1}, delay_s=1.0).answer({"answer": 3})
    result = client(llm, tmp_path, sleeps, timeout_s=0.2).chat(ASK)
    assert result.data == {"answer": 3} and sleeps == [1.0]


def test_an_unreachable_server_is_a_clear_engine_unavailable(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    sleeps: list[float] = []
    with pytest.raises(EngineUnavailable, match=rf"cannot reach the LLM server at {url} .*OPENAI_BASE_URL"):
        client(url, tmp_path, sleeps, attempts=3).chat(ASK)
    assert sleeps == [1.0, 2.0]


@pytest.mark.parametrize(
    ("status", "match"), [(401, "refused the API key"), (404, "has no model 'fake-model'")]
)
def test_a_refused_key_or_missing_model_is_not_retried(llm, tmp_path, status, match):
    sleeps: list[float] = []
    llm.fail(status)
    with pytest.raises(EngineUnavailable, match=match):
        client(llm, tmp_path, sleeps).chat(ASK)
    assert sleeps == [] and len(llm.requests) == 1


def test_a_malformed_answer_is_sent_back_with_the_problem_and_asked_again(llm, tmp_path):
    llm.answer("当然！答案是 2").answer({"answer": 2})
    result = client(llm, tmp_path).chat(ASK)
    assert result.data == {"answer": 2} and result.requests == 2
    retry = llm.requests[1].body["messages"]
    assert retry[-2] == {"role": "assistant", "content": "当然！答案是 2"}
    assert retry[-1]["role"] == "user" and "not JSON" in retry[-1]["content"]


def test_answers_that_never_fit_raise_engine_output_error_and_are_not_cached(llm, tmp_path):
    llm.answer({"answer": 9}).answer("{").answer({"answer": 2}, finish_reason="length")
    with pytest.raises(EngineOutputError, match=r"3 attempts; last: the answer was cut off"):
        client(llm, tmp_path).chat(ASK)
    assert not list((tmp_path / "llm").rglob("*.json"))
    llm.answer({"answer": 2})
    assert client(llm, tmp_path).chat(ASK).cached is False


def test_the_caller_check_rejects_an_answer_like_a_schema_would(llm, tmp_path):
    def odd(data):
        if data["answer"] % 2 == 0:
            raise ValueError("the answer must be odd")

    llm.answer({"answer": 2}).answer({"answer": 3})
    assert client(llm, tmp_path).chat(ASK, check=odd).data == {"answer": 3}
    assert "the answer must be odd" in llm.requests[1].body["messages"][-1]["content"]


def test_a_second_run_is_answered_from_the_disk_cache_exactly(llm, tmp_path):
    llm.answer('```json\n{"answer": 2}\n```')
    first = client(llm, tmp_path).chat(ASK)
    again = client(llm, tmp_path).chat(ASK)  # a new client: the cache is on disk
    assert len(llm.requests) == 1
    assert (again.text, again.data, again.cached, again.requests) == (first.text, first.data, True, 0)
    (path,) = (tmp_path / "llm").rglob("*.json")
    entry = json.loads(path.read_text(encoding="utf-8"))
    assert entry["request"]["prompt_version"] == "t1" and entry["request"]["messages"][1][
        "content"
    ].startswith("一加一")
    assert "sk-" not in path.read_text(encoding="utf-8")


def test_another_prompt_version_or_model_is_asked_anew(llm, tmp_path):
    llm.answer({"answer": 1}).answer({"answer": 2}).answer({"answer": 3})
    client(llm, tmp_path).chat(ASK)
    v2 = ChatRequest(ASK.messages, schema=SCHEMA, prompt_version="t2")
    assert client(llm, tmp_path).chat(v2).data == {"answer": 2}
    other = LLMClient(LLMSettings("other-model", base_url=llm.url, cache_dir=tmp_path / "llm"))
    assert other.chat(ASK).data == {"answer": 3}
    assert len(llm.requests) == 3


def test_cache_only_never_asks_and_cache_off_never_writes(llm, tmp_path):
    with pytest.raises(EngineUnavailable, match="read-only"):
        client(llm, tmp_path, cache="only").chat(ASK)
    assert llm.requests == []
    llm.answer({"answer": 1})
    client(llm, tmp_path, cache="off").chat(ASK)
    assert not (tmp_path / "llm").exists()


def test_plain_text_requests_have_no_response_format(llm, tmp_path):
    llm.answer("好的，我会转告机主。")
    result = client(llm, tmp_path).chat(ChatRequest((Message("user", "帮我留个言"),), temperature=0.7))
    assert (result.text, result.data, result.mode) == ("好的，我会转告机主。", None, "text")
    assert "response_format" not in llm.requests[0].body and llm.requests[0].body["temperature"] == 0.7


def test_concurrency_is_bounded_across_threads(tmp_path):
    with FakeLLM(hold_s=0.1) as llm:
        for i in range(6):
            llm.answer({"answer": 1 + i % 3})
        llm_client = client(llm, tmp_path, concurrency=2, cache="off")
        threads = [threading.Thread(target=llm_client.chat, args=(ASK,)) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(llm.requests) == 6 and llm.max_in_flight == 2


def test_asyncio_code_awaits_the_same_client(llm, tmp_path):
    llm.answer({"answer": 3})
    assert asyncio.run(client(llm, tmp_path).achat(ASK)).data == {"answer": 3}


def test_parse_json_strips_a_fence_and_a_think_block_only():
    assert parse_json('<think>先想想</think>\n```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json(' {"a": [1]} ') == {"a": [1]}
    with pytest.raises(Exception, match="not JSON"):
        parse_json('答案：{"a": 1}')


def test_importing_the_client_does_not_load_openai():
    code = "import sys, voice.llm.client; print('openai' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


def test_a_plain_text_answer_can_be_rejected_by_the_check_too(llm, tmp_path):
    def short(text):
        if len(text) > 10:
            raise ValueError("a phone reply must be short")

    llm.answer("您好，机主现在正在开会，暂时不方便接听您的电话。").answer("机主在开会。")
    result = client(llm, tmp_path).chat(ChatRequest((Message("user", "机主在吗"),)), check=short)
    assert result.text == "机主在开会。" and result.requests == 2
    assert (
        llm.requests[1].body["messages"][-1]["content"].endswith("a phone reply must be short. Answer again.")
    )


def test_prepare_builds_the_http_client_before_any_request(llm, tmp_path):
    c = client(llm, tmp_path)
    c.prepare()
    assert c._api is not None and llm.requests == []  # built, nothing asked
    c.close()
