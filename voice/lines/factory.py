"""From a target and the network's effects to a fresh line per call (what the runner's ``make_line`` is).

The built-in assistant is not dialled here: the CLI starts it and resolves ``builtin`` /
``builtin+twilio`` to its URL first (:meth:`~voice.lines.targets.Target.resolve_builtin`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from voice.core.clock import Clock
from voice.errors import ConfigError
from voice.lines.base import Line
from voice.lines.effects import EffectLine, LineEffects
from voice.lines.headers import Headers
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.targets import BUILTIN, HUMAN, PCM, TWILIO, Target
from voice.lines.twilio import TwilioLine


def effects_for(target: Target, effects: LineEffects | None = None) -> LineEffects:
    """The effects a call to ``target`` goes through, defaults resolved.

    The mu-law band limit defaults to on for Twilio (it is the protocol's codec) and off for raw PCM;
    asking a Twilio target for no band limit is a :class:`ConfigError`, since the line cannot do it.
    """
    effects = effects or LineEffects()
    protocol = target.line if target.protocol == BUILTIN else target.protocol
    if protocol == TWILIO:
        if effects.mulaw_band_limit is False:
            raise ConfigError("a Twilio line is 8 kHz mu-law by protocol: its band limit cannot be off")
        return dataclasses.replace(effects, mulaw_band_limit=True)
    return dataclasses.replace(effects, mulaw_band_limit=bool(effects.mulaw_band_limit))


def describe_line(target: Target, effects: LineEffects | None = None, seed: int = 0) -> dict[str, Any]:
    """The line as the event log should record it (``call_start``/``meta``): protocol, effects, seed."""
    resolved = effects_for(target, effects)
    protocol = target.line if target.protocol == BUILTIN else target.protocol
    d: dict[str, Any] = {"protocol": protocol, "effects": resolved.describe(), "seed": seed}
    if protocol == TWILIO:
        d["codec"] = "G.711 mu-law 8 kHz (Twilio Media Streams)"
    return d


def make_line_factory(
    target: Target,
    *,
    effects: LineEffects | None = None,
    seed: int = 0,
    clock: Clock | None = None,
    headers: Headers = (),
) -> Callable[[], Line]:
    """A function returning a new, unopened line to ``target`` for each call.

    ``seed`` seeds the network effects; each call mixes in its call id
    (:func:`~voice.lines.effects.call_seed`), so every call hears its own but reproducible network.
    ``clock`` times the network's jitter (real time by default; pass the driver's clock in tests).
    ``headers`` go on each call's websocket upgrade (``--header``, :mod:`voice.lines.headers`).
    """
    if target.protocol == BUILTIN:
        raise ConfigError("the built-in target must be resolved to its URL first (Target.resolve_builtin)")
    if target.protocol == HUMAN:
        raise ConfigError("a person answers through `callsim talk --role assistant`, not a network line")
    resolved = effects_for(target, effects)
    bare: Callable[[], Line]
    if target.protocol == PCM:
        url = target.url

        def bare() -> Line:
            return PcmWebsocketLine(url, headers=headers)

        applied = resolved
    elif target.protocol == TWILIO:
        url = target.url

        def bare() -> Line:
            return TwilioLine(url, headers=headers)

        applied = dataclasses.replace(resolved, mulaw_band_limit=False)  # the line's own codec does it
    else:
        raise ConfigError(f"no line for target protocol {target.protocol!r}")
    if not applied.alters_audio:
        return bare

    def wrapped() -> Line:
        return EffectLine(bare(), applied, seed=seed, clock=clock)

    return wrapped
