"""One client for any OpenAI-compatible chat API (OpenAI, DeepSeek, Qwen, vLLM, Ollama, llama.cpp).

:meth:`LLMClient.chat` sends one chat completion and returns its answer, parsed and validated when a JSON
schema is given.  Around the official ``openai`` package (imported on first use, so the offline path never
loads it) it adds what a benchmark needs:

- **Structured output, with fallbacks.**  The schema goes out as ``response_format: json_schema`` (strict);
  a server that rejects that (HTTP 400/422, e.g. DeepSeek) is asked again in ``json_object`` mode, then with
  no ``response_format`` at all, the schema written into a last system message each time; the first mode
  that works is remembered.  Whatever the mode, the answer is parsed and validated against the schema
  (:mod:`voice.llm.schema`) and by the caller's own ``check``; a malformed answer is sent back with the
  problem and asked again (``output_attempts`` in all), then :class:`~voice.errors.EngineOutputError`.
  Parsing strips one surrounding Markdown code fence and a leading ``<think>…</think>`` block, nothing more.
- **Temperature 0** unless a request says otherwise.
- **Bounded concurrency**: at most ``concurrency`` requests in flight per client, across threads.
- **Retries with exponential backoff** (``backoff_s``, doubling, at most ``backoff_max_s``, at least a
  ``Retry-After`` the server sent) on 408, 409, 429, 5xx, timeouts and connection errors, ``attempts`` in
  all.  Other 4xx are not retried.  Errors leave as :mod:`voice.errors`: a server that cannot be reached,
  refuses the key or lacks the model is :class:`~voice.errors.EngineUnavailable`; anything else
  :class:`~voice.errors.EngineError`.
- **A disk cache** (:mod:`voice.llm.cache`) keyed by prompt version, model and request: a rerun sends
  nothing, and a replay returns exactly the answer first given.  Only valid answers are stored.

The client blocks, like the speech engines; asyncio code awaits :meth:`LLMClient.achat`, which runs it in
a worker thread.  Backoff waits use ``threading.Event.wait`` (a timeout, not a clock read) unless a
``sleep`` is injected (tests record the delays instead of waiting).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from voice.errors import EngineError, EngineOutputError, EngineUnavailable
from voice.llm.cache import AnswerCache, KeyMaterial, request_key
from voice.llm.schema import JsonSchema, check_schema, validate
from voice.llm.settings import LLMSettings

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

NO_KEY = "not-needed"  # sent when no key is set: local servers (vLLM, Ollama, llama.cpp) ignore it
Check = Callable[[Any], object]  # raises ValueError to reject an answer
_FALLBACK = {"schema": ("schema", "object", "prompt"), "object": ("object", "prompt"), "prompt": ("prompt",)}
_RETRIED_STATUS = (408, 409, 429)  # and every 5xx: as the openai package itself retries
_THINK = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)
_FENCE = re.compile(r"^```[A-Za-z]*\s*\n?(.*?)\n?\s*```$", re.DOTALL)


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion.  With ``schema`` the answer must be one JSON object that validates against it."""

    messages: tuple[Message, ...]
    schema: JsonSchema | None = None
    schema_name: str = "answer"
    prompt_version: str = ""  # part of the cache key: bump it when the prompt's meaning changes
    temperature: float = 0.0
    max_tokens: int | None = None

    def key_material(self, model: str) -> KeyMaterial:
        """Everything that decides the answer: what the cache key is made of."""
        return {
            "prompt_version": self.prompt_version,
            "model": model,
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "schema": self.schema,
            "schema_name": self.schema_name,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }


@dataclass(frozen=True)
class ChatResult:
    text: str  # the answer as the model wrote it
    data: Any  # the parsed JSON when the request had a schema, else None
    model: str
    cached: bool  # read from the disk cache: no request was sent
    requests: int  # HTTP requests this answer took (0 when cached)
    mode: str  # how the answer was asked for: schema, object, prompt (JSON) or text


class _Malformed(Exception):
    """The answer came back but is unusable (not JSON, fails the schema or the caller's check)."""


class _Rejected(Exception):
    """The server refused the request as malformed (400/422): maybe it lacks the JSON mode asked for."""


class LLMClient:
    """Chat completions against one model on one OpenAI-compatible server; thread-safe."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        sleep: Callable[[float], object] | None = None,
        cache: AnswerCache | None = None,
    ) -> None:
        """``cache``: where answers are kept (default: on disk at ``settings.cache_dir``); a Ray worker's
        client keeps them in the driver's (:mod:`voice.app.run.ray_cache`)."""
        self.settings = settings.resolved()
        self.cache = cache if cache is not None else AnswerCache(self.settings.cache_dir)
        self._sleep = sleep if sleep is not None else threading.Event().wait
        self._slots = threading.BoundedSemaphore(self.settings.concurrency)
        self._lock = threading.Lock()
        self._mode: str = "schema" if self.settings.json_mode == "auto" else self.settings.json_mode
        self._api: openai.OpenAI | None = None
        self.requests_sent = 0  # HTTP requests made by this client (for tests and progress)

    @property
    def model(self) -> str:
        return self.settings.model

    def chat(self, request: ChatRequest, *, check: Check | None = None) -> ChatResult:
        """The answer to ``request``: from the cache, else from the server (retried, validated, cached).

        ``check`` is called with the parsed answer (or the text, without a schema) and raises ``ValueError``
        to reject it as malformed, for rules a schema cannot say (e.g. one entry per turn asked about).
        """
        if request.schema is not None:
            check_schema(request.schema)
        key_material = request.key_material(self.model)
        key = request_key(key_material)
        if self.settings.cache != "off" and (entry := self.cache.get(self.model, key)) is not None:
            try:
                data = self._accept(entry["answer"], "stop", request, check)
                return ChatResult(entry["answer"], data, self.model, True, 0, str(entry.get("mode", "")))
            except _Malformed as exc:
                log.warning("cached answer %s no longer passes: %s", self.cache.path(self.model, key), exc)
        if self.settings.cache == "only":
            raise EngineUnavailable(
                f"{self.model}: no cached answer at {self.cache.path(self.model, key)} and the LLM cache is "
                "read-only (cache=only): nothing may be asked of the server"
            )
        messages = list(request.messages)
        requests, problem, problems = 0, "", list[str]()
        for _ in range(self.settings.output_attempts):
            text, finish, mode, sent = self._complete(messages, request)
            requests += sent
            try:
                data = self._accept(text, finish, request, check)
            except _Malformed as exc:
                problem = str(exc)
                problems.append(problem)
                log.warning("%s gave a malformed answer (%s); asking again", self.model, problem)
                again = "Answer again with only the JSON object." if request.schema else "Answer again."
                messages += [
                    Message("assistant", text[:8000]),
                    Message("user", f"That answer is not usable: {problem}. {again}"),
                ]
                continue
            if self.settings.cache != "off":
                self.cache.put(self.model, key, {"request": key_material, "answer": text, "mode": mode})
            return ChatResult(text, data, self.model, False, requests, mode)
        raise EngineOutputError(
            f"{self.model} gave no usable answer in {self.settings.output_attempts} attempts;"
            f" last: {problem}",
            tuple(problems),
        )

    async def achat(self, request: ChatRequest, *, check: Check | None = None) -> ChatResult:
        """:meth:`chat` in a worker thread, for asyncio code."""
        return await asyncio.to_thread(self.chat, request, check=check)

    def prepare(self) -> None:
        """Import and build the HTTP client now (~0.4 s), which the first request does otherwise: a
        reactive caller does it before dialling, so that its first answer in a call is not late by it."""
        self._openai()

    def close(self) -> None:
        with self._lock:
            if self._api is not None:
                self._api.close()
                self._api = None

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- one answer: JSON modes, then HTTP attempts ---------------------------------------------------

    def _complete(self, messages: Sequence[Message], request: ChatRequest) -> tuple[str, str, str, int]:
        """(text, finish reason, mode, requests sent) from the first JSON mode the server accepts."""
        if request.schema is None:
            text, finish, sent = self._send(messages, request, None)
            return text, finish, "text", sent
        modes = _FALLBACK[self._mode] if self.settings.json_mode == "auto" else (self._mode,)
        total = 0
        for i, mode in enumerate(modes):
            try:
                text, finish, sent = self._send(self._with_schema(messages, request, mode), request, mode)
            except _Rejected as exc:
                total += 1
                if i == len(modes) - 1:
                    raise EngineError(f"{self._where()} refused the request: {exc}") from exc
                log.warning("%s refused JSON mode %r (%s); trying %r", self._where(), mode, exc, modes[i + 1])
                continue
            with self._lock:
                if mode != self._mode:
                    log.info("%s: using JSON mode %r from now on", self._where(), mode)
                    self._mode = mode
            return text, finish, mode, total + sent
        raise AssertionError("unreachable")

    @staticmethod
    def _with_schema(messages: Sequence[Message], request: ChatRequest, mode: str) -> list[Message]:
        if mode == "schema":
            return list(messages)
        schema = json.dumps(request.schema, ensure_ascii=False)
        note = f"Answer with one JSON object, nothing else, valid against this JSON Schema:\n{schema}"
        return [*messages, Message("system", note)]

    def _send(
        self, messages: Sequence[Message], request: ChatRequest, mode: str | None
    ) -> tuple[str, str, int]:
        """One completion over HTTP, retried on 429 / 5xx / timeouts / connection errors."""
        import openai

        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": request.temperature,
        }
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if mode == "schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": True},
            }
        elif mode == "object":
            kwargs["response_format"] = {"type": "json_object"}
        last: Exception | None = None
        for attempt in range(1, self.settings.attempts + 1):
            retry_after = 0.0
            try:
                with self._slots:
                    with self._lock:
                        self.requests_sent += 1
                    response = self._openai().chat.completions.create(**kwargs)
                if not response.choices:
                    return "", "no choices", attempt
                choice = response.choices[0]
                return choice.message.content or "", choice.finish_reason or "", attempt
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                raise _Rejected(_describe(exc)) from exc
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise EngineUnavailable(
                    f"{self._where()} refused the API key ({_describe(exc)}): "
                    "set OPENAI_API_KEY or the key flag"
                ) from exc
            except openai.NotFoundError as exc:
                raise EngineUnavailable(
                    f"{self._where()} has no model {self.model!r} or no chat endpoint ({_describe(exc)})"
                ) from exc
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                last = exc
            except openai.APIStatusError as exc:
                if exc.status_code not in _RETRIED_STATUS and exc.status_code < 500:
                    raise EngineError(f"{self._where()} answered {_describe(exc)}") from exc
                last, retry_after = exc, _retry_after(exc)
            except openai.OpenAIError as exc:
                raise EngineError(f"{self._where()}: {exc}") from exc
            if attempt < self.settings.attempts:
                delay = min(self.settings.backoff_max_s, self.settings.backoff_s * 2 ** (attempt - 1))
                delay = max(delay, retry_after)
                log.warning("%s: %s; retrying in %.1f s", self._where(), _describe(last), delay)
                self._sleep(delay)
        raise self._gave_up(last)

    def _gave_up(self, last: Exception | None) -> EngineError:
        import openai

        n = self.settings.attempts
        err: EngineError
        if isinstance(last, openai.APITimeoutError):
            err = EngineError(f"{self._where()} did not answer in {self.settings.timeout_s:g} s, {n} times")
        elif isinstance(last, openai.APIConnectionError):
            err = EngineUnavailable(
                f"cannot reach the LLM server at {self.settings.base_url} ({_describe(last)}, {n} attempts): "
                "is it running? Set its address with OPENAI_BASE_URL or the base-URL flag"
            )
        else:
            err = EngineError(f"{self._where()} still failing after {n} attempts: {_describe(last)}")
        err.__cause__ = last
        return err

    def _openai(self) -> openai.OpenAI:
        with self._lock:
            if self._api is None:
                import openai

                self._api = openai.OpenAI(
                    base_url=self.settings.base_url,
                    api_key=self.settings.api_key or NO_KEY,
                    timeout=self.settings.timeout_s,
                    max_retries=0,  # retried here, with the backoff and errors above
                )
            return self._api

    def _where(self) -> str:
        return f"{self.model} at {self.settings.base_url}"

    # --- is the answer usable? ------------------------------------------------------------------------

    @staticmethod
    def _accept(text: str, finish: str, request: ChatRequest, check: Check | None) -> Any:
        if finish == "length":
            raise _Malformed("the answer was cut off at the token limit")
        if request.schema is None:
            if check is not None:
                _run_check(check, text)
            return None
        data = parse_json(text)
        problems = validate(data, request.schema)
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            raise _Malformed("does not fit the schema: " + "; ".join(problems[:3]) + more)
        if check is not None:
            _run_check(check, data)
        return data


def parse_json(text: str) -> Any:
    """The JSON value in an answer: one surrounding code fence and a leading ``<think>`` block stripped."""
    body = _THINK.sub("", text).strip()
    if fenced := _FENCE.match(body):
        body = fenced.group(1).strip()
    if not body:
        raise _Malformed("the answer is empty")
    try:
        return json.loads(body)
    except ValueError as exc:
        raise _Malformed(f"not JSON ({exc}): {body[:80]!r}") from exc


def _run_check(check: Check, value: Any) -> None:
    try:
        check(value)
    except ValueError as exc:
        raise _Malformed(str(exc)) from exc


def _describe(exc: BaseException | None) -> str:
    status = getattr(exc, "status_code", None)
    text = str(exc) if exc is not None else "no answer"
    return f"HTTP {status}: {text[:300]}" if status else text[:300]


def _retry_after(exc: Any) -> float:
    """Seconds the server asked us to wait (``Retry-After`` in seconds), else 0."""
    try:
        return max(0.0, float(exc.response.headers.get("retry-after", "0")))
    except (AttributeError, TypeError, ValueError):
        return 0.0
