"""A transcriber over any OpenAI-compatible ``/v1/audio/transcriptions`` server, with the official client.

faster-whisper servers, FunASR, vLLM and OpenAI itself speak it: each clip goes up as a 16 kHz mono WAV
(multipart), with the model name, the language and a prompt; the answer's ``text`` is the transcript
(converted to simplified script, as Whisper's is).  The ``openai`` client's errors are translated here, at
the edge: a server that cannot be reached (refused, timed out, DNS) is
:class:`~voice.errors.EngineUnavailable`, any other failure :class:`~voice.errors.EngineError`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm
from voice.errors import EngineError, EngineUnavailable
from voice.files import wav_bytes
from voice.text.script import to_simplified

DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the client's own default, named for messages
_NO_KEY = "not-needed"  # local servers (vLLM, faster-whisper servers) take any key; the client needs one


class OpenAIASR:
    """Speech to text on an OpenAI-compatible server; thread-safe (the client pools connections).

    ``base_url`` ends in ``/v1`` (e.g. ``http://localhost:8000/v1``); ``api_key`` may be omitted for local
    servers.  ``timeout_s`` bounds each request; the client retries ``max_retries`` times with backoff on
    429, 5xx, timeouts and lost connections.  Temperature is 0.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        prompt: str | None = None,
        language: str = "zh",
    ) -> None:
        if not model:
            raise ValueError("a model name is needed")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._api_key = api_key or _NO_KEY
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._prompt = prompt or None
        self._language = language
        self._client: Any = None

    def describe(self) -> str:
        prompt = hashlib.sha256(self._prompt.encode()).hexdigest()[:8] if self._prompt else "none"
        return (
            f"openai:{self.model} at {self.base_url} language={self._language} prompt={prompt} temperature=0"
        )

    def _client_or_new(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError as exc:
                raise EngineUnavailable(
                    f"the openai client is not installed ({exc}); pip install openai"
                ) from exc
            self._client = openai.OpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                timeout=self._timeout_s,
                max_retries=self._max_retries,
            )
        return self._client

    def transcribe(self, pcm: Pcm) -> str:
        if len(pcm) == 0 or not np.any(pcm):
            return ""
        import openai

        client = self._client_or_new()
        audio_s = len(pcm) / SAMPLE_RATE
        try:
            answer = client.audio.transcriptions.create(
                file=("reply.wav", wav_bytes([np.asarray(pcm, dtype=np.int16)]), "audio/wav"),
                model=self.model,
                language=self._language,
                response_format="json",
                temperature=0.0,
                prompt=self._prompt or openai.NOT_GIVEN,  # no prompt: the field is left out
            )
        except openai.APIConnectionError as exc:  # includes timeouts
            raise EngineUnavailable(
                f"cannot reach the transcription server at {self.base_url} ({type(exc).__name__}: {exc}); "
                "is it running? (its URL: $CALLSIM_ASR_BASE_URL or $OPENAI_BASE_URL)"
            ) from exc
        except openai.APIStatusError as exc:
            raise EngineError(
                f"transcription server {self.base_url} answered HTTP {exc.status_code} for model "
                f"{self.model!r} on {audio_s:.2f} s of audio: {_message(exc)}"
            ) from exc
        except (openai.OpenAIError, ValueError) as exc:  # e.g. an answer that is not JSON
            raise EngineError(f"transcription by {self.base_url} failed: {exc}") from exc
        text = getattr(answer, "text", None)
        if not isinstance(text, str):
            raise EngineError(
                f"transcription server {self.base_url} answered without a text: {answer!r:.200}"
            )
        return to_simplified(text.strip())


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return str(getattr(exc, "message", exc))
