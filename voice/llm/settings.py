"""What an LLM client is pointed at: ``openai:MODEL`` specs and the client's settings.

The server's address and key come from the settings (flags) or, when empty, from the environment variables
every OpenAI-compatible tool reads: ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``.  A key is optional: local
servers (vLLM, Ollama, llama.cpp) accept any.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from voice.errors import ConfigError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
JSON_MODES = ("schema", "object", "prompt")  # response_format json_schema, json_object, none
CacheMode = Literal["use", "off", "only"]  # read and write; neither; read only (never ask the server)


@dataclass(frozen=True)
class ModelSpec:
    """``openai:MODEL``: the API family (only ``openai``, i.e. OpenAI-compatible) and the model name."""

    provider: str
    model: str


def parse_model_spec(spec: str) -> ModelSpec:
    """``"openai:qwen2.5:7b"`` → ``ModelSpec("openai", "qwen2.5:7b")``; anything else is a ConfigError."""
    provider, sep, model = spec.partition(":")
    if not sep or provider.strip() != "openai" or not model.strip():
        raise ConfigError(
            f"{spec!r}: expected openai:MODEL, the model of an OpenAI-compatible server "
            "(e.g. openai:deepseek-chat, openai:qwen2.5:7b)"
        )
    return ModelSpec("openai", model.strip())


@dataclass(frozen=True)
class LLMSettings:
    """Where the model is and how to talk to it; empty ``base_url``/``api_key`` come from the environment."""

    model: str
    base_url: str = ""  # "" → $OPENAI_BASE_URL → DEFAULT_BASE_URL
    api_key: str = field(default="", repr=False)  # "" → $OPENAI_API_KEY → none (fine for local servers)
    timeout_s: float = 120.0  # per HTTP request
    attempts: int = 4  # HTTP requests per answer on 429 / 5xx / timeouts / connection errors
    backoff_s: float = 1.0  # first wait between attempts; doubles each time
    backoff_max_s: float = 30.0
    output_attempts: int = 3  # answers asked for when one is malformed
    concurrency: int = 4  # requests in flight at once, per client
    json_mode: Literal["auto", "schema", "object", "prompt"] = "auto"  # auto: schema, falling back
    cache: CacheMode = "use"
    cache_dir: Path | None = None  # None: <cache root>/llm

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ConfigError("an LLM needs a model name")
        for name in ("attempts", "output_attempts", "concurrency"):
            if getattr(self, name) < 1:
                raise ConfigError(f"LLM {name} must be at least 1, got {getattr(self, name)}")
        if self.timeout_s <= 0 or self.backoff_s < 0 or self.backoff_max_s < 0:
            raise ConfigError("LLM timeout must be > 0 and backoff >= 0")
        if self.json_mode not in ("auto", *JSON_MODES):
            raise ConfigError(f"LLM json_mode must be auto, {', '.join(JSON_MODES)}; got {self.json_mode!r}")
        if self.cache not in ("use", "off", "only"):
            raise ConfigError(f"LLM cache must be use, off or only; got {self.cache!r}")

    def resolved(self, env: Mapping[str, str] | None = None) -> LLMSettings:
        """These settings with the base URL and key filled in from ``env`` (default: the process's)."""
        env = os.environ if env is None else env
        base_url = self.base_url or env.get("OPENAI_BASE_URL", "") or DEFAULT_BASE_URL
        api_key = self.api_key or env.get("OPENAI_API_KEY", "")
        return replace(self, base_url=base_url.rstrip("/"), api_key=api_key)
