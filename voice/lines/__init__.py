"""How a call reaches an assistant: one small :class:`~voice.lines.base.Line` interface, several lines.

Targets are written as URLs: ``pcm+ws://host:port/path`` (or plain ``ws://``/``wss://``) for the raw PCM
websocket protocol of ``docs/protocol.md``; ``builtin`` means the built-in assistant, which the CLI starts.
"""

from voice.lines.base import CallStart, Line
from voice.lines.targets import Target, parse_target

__all__ = ["CallStart", "Line", "Target", "parse_target"]
