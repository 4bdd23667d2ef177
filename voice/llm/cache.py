"""The LLM answer cache: one JSON file per (prompt version, model, request), so reruns ask nothing.

The key is the SHA-256 of the request as sent to the model, written canonically: the cache format, the
prompt version, the model name, the messages, the output schema, the temperature and the token limit.
The server's address is not part of it: the same model name answers the same request the same way
wherever it is served (use a distinct model name, or clear the cache, when that is not true).  The API key
is never written.

Files live under ``<cache root>/llm/<model>/<key[:2]>/<key>.json`` (cache root: ``$CALLSIM_CACHE`` or
``~/.cache/callsim``) and hold the request next to the answer, so a replay can be audited.  They are
written atomically; a file that cannot be read counts as absent and is overwritten by the next answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Required, TypedDict

from voice.files import atomic_write_bytes, cache_root
from voice.llm.schema import JsonSchema

log = logging.getLogger(__name__)

CACHE_FORMAT = "1"  # bump when the key or the entry layout changes
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class WireMessage(TypedDict):
    """One chat message as the request carries it."""

    role: str
    content: str


class KeyMaterial(TypedDict):
    """Everything that decides a request's answer: what its key is the hash of (and the entry keeps)."""

    prompt_version: str
    model: str
    messages: list[WireMessage]
    schema: JsonSchema | None
    schema_name: str
    temperature: float
    max_tokens: int | None


class CacheEntry(TypedDict):
    """What an answer is stored with: its request (so that a replay can be audited), its text, and how it
    was asked for (``mode``: the client's way of getting JSON out of the server)."""

    request: KeyMaterial
    answer: str
    mode: str


class StoredEntry(TypedDict, total=False):
    """A cache file as read back: its key and its answer's text are checked; the rest is as
    :meth:`AnswerCache.put` wrote it (the entry's keys after the format, the key and the model)."""

    format: str
    key: Required[str]
    model: str
    request: KeyMaterial
    answer: Required[str]
    mode: str


def default_dir() -> Path:
    return cache_root() / "llm"


def request_key(material: KeyMaterial) -> str:
    """The cache key of a request: SHA-256 of its canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps({"format": CACHE_FORMAT, **material}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_folder(model: str) -> str:
    """A file-system-safe folder name for a model (``Qwen/Qwen2.5-7B`` → ``Qwen_Qwen2.5-7B``)."""
    return _UNSAFE.sub("_", model).strip("._") or "_"


class AnswerCache:
    """Answers on disk under ``root``; thread-safe (each file is written whole, by one rename)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else default_dir()

    def path(self, model: str, key: str) -> Path:
        return self.root / model_folder(model) / key[:2] / f"{key}.json"

    def get(self, model: str, key: str) -> StoredEntry | None:
        """The stored entry, or None when there is none (or it cannot be read)."""
        path = self.path(model, key)
        try:
            entry: StoredEntry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable LLM cache entry %s: %s", path, exc)
            return None
        if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("answer"), str):
            log.warning("ignoring LLM cache entry %s: not an entry for this key", path)
            return None
        return entry

    def put(self, model: str, key: str, entry: CacheEntry) -> Path:
        """Store ``entry`` under ``key``; returns the file written."""
        path = self.path(model, key)
        data: StoredEntry = {"format": CACHE_FORMAT, "key": key, "model": model, **entry}
        atomic_write_bytes(path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))
        return path
