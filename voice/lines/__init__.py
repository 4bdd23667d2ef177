"""How a call reaches an assistant: one small :class:`~voice.lines.line.Line` interface, several lines.

Targets (:mod:`voice.lines.targets`): ``pcm+ws://host:port/path`` (or plain ``ws://``/``wss://``) for the raw
PCM websocket protocol of ``docs/protocol.md``; ``twilio+ws://`` / ``twilio+wss://`` for a bot taking Twilio
Media Streams (``docs/twilio.md``); ``telnyx+ws://``, ``plivo+ws://``, ``exotel+ws://``, ``vonage+ws://``,
``genesys+ws://`` for a bot taking those carriers' media streams and ``pipecat+ws://`` for pipecat's
protobuf websocket (``docs/bots.md``); ``builtin`` / ``builtin+twilio`` for the built-in assistant, which
the CLI starts.  :func:`~voice.lines.factory.make_line_factory` turns a target and the network's effects
(:class:`~voice.lines.effects.LineEffects`) into a fresh line per call.
"""

from voice.lines.line import CallStart, Line
from voice.lines.targets import Target, parse_target

__all__ = ["CallStart", "Line", "Target", "parse_target"]
