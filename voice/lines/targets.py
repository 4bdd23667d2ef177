"""One syntax for where to call, shared by every command."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from voice.errors import ConfigError

BUILTIN = "builtin"


@dataclass(frozen=True)
class Target:
    """A parsed target: ``protocol`` is ``pcm`` or ``builtin``; ``url`` is what the socket connects to."""

    protocol: str
    url: str

    def __str__(self) -> str:
        return BUILTIN if self.protocol == BUILTIN else f"{self.protocol}+{self.url}"


def parse_target(text: str) -> Target:
    """``builtin``, ``pcm+ws://h:p/path``, ``pcm+wss://...``, or a bare ``ws://``/``wss://`` (raw PCM)."""
    text = text.strip()
    if text == BUILTIN:
        return Target(BUILTIN, "")
    protocol, sep, rest = text.partition("+")
    if not sep:
        protocol, rest = "pcm", text
    parts = urlsplit(rest)
    if protocol != "pcm":
        raise ConfigError(
            f"unknown target protocol {protocol!r} in {text!r} (expected pcm+ws://... or builtin)"
        )
    if parts.scheme not in ("ws", "wss") or not parts.netloc:
        raise ConfigError(f"target {text!r} is not a ws:// or wss:// URL (e.g. pcm+ws://127.0.0.1:8765/pcm)")
    return Target(protocol, rest)
