"""The targets of a bench run, opened: each target's settings and its way to open a line, with the built-in
assistant started once for every target that calls it.

One place for both runners: the local one opens the targets in the run folder, a Ray worker
(:mod:`voice.app.run.ray_runner`) opens the same targets on its own node, in a scratch folder of its own, so
a call made there is the call the local runner would have made.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from voice.app.run.bench_config import BenchConfig
from voice.app.run.runner import RunSettings, TargetRun
from voice.lines.factory import describe_line, make_line_factory
from voice.lines.headers import header_names
from voice.lines.line import Line
from voice.lines.sip_settings import SipSettings
from voice.lines.targets import BUILTIN, SIP, WEBRTC, Target
from voice.metrics.model.jsonio import as_json_object


def target_settings(config: BenchConfig, target: Target, folder: Path) -> RunSettings:
    """What a target's calls are made with, and what its folder's fingerprint holds."""
    parts: dict[str, object] = {"line": describe_line(target, config.effects, config.seed)}
    if config.voices:  # who calls: another population is another run (each call's voice is in its labels)
        parts["voices"] = config.voices
        parts["caller_speed"] = config.caller_speed
    if target.protocol != BUILTIN and config.headers:
        parts["headers"] = header_names(config.headers)
    if target.protocol == WEBRTC and (webrtc := config.webrtc.describe()):
        parts["webrtc"] = webrtc
    if target.line == SIP:  # a sip: target, or builtin+sip
        parts["sip"] = (config.sip or SipSettings.from_env()).describe()  # never the password
    if target.protocol == BUILTIN:
        parts["assistant_tts"] = config.assistant_tts or config.tts
        if config.policy != "rules":
            parts["policy"] = config.policy
        if config.assistant_settings:
            parts["assistant_settings"] = " ".join(config.assistant_settings.pairs())
    extra = as_json_object(parts)  # the typed parts as the JSON the folder's fingerprint holds
    timing = dataclasses.replace(config.timing, seed=config.seed)
    return RunSettings(
        folder,
        str(target),
        config.tts,
        timing,
        config.transcribe,
        extra,
        config.caller,
        config.recording_format,
        config.redo,
        config.provenance,
    )


async def open_target_runs(
    stack: contextlib.AsyncExitStack,
    config: BenchConfig,
    targets: Sequence[Target],
    folders: Sequence[Path],
    *,
    log_dir: Path,
    labels: Sequence[str] = (),
    line_factories: dict[str, Callable[[], Line]] | None = None,
) -> list[TargetRun]:
    """One :class:`TargetRun` per target; the built-in assistant (if any target calls it) is started once,
    its log in ``log_dir``, and stopped when ``stack`` closes."""
    runs = []
    server_url: str | None = None
    sip_port: int | None = None  # its SIP gateway's, if a target is builtin+sip
    crashed: Callable[[], str | None] | None = None
    for i, (target, folder) in enumerate(zip(targets, folders, strict=True)):
        settings = target_settings(config, target, folder)
        if line_factories and str(target) in line_factories:
            make_line = line_factories[str(target)]
        else:
            if target.protocol == BUILTIN and server_url is None:
                args = builtin_args(config)  # what it is started with, then where its output goes
                log, procs = next_log_path(log_dir), list[subprocess.Popen[bytes]]()
                from voice.app.run.launch import builtin_assistant, free_port

                if any(t.protocol == BUILTIN and t.line == SIP for t in targets):
                    sip_port = free_port(udp=True)
                server_url = await stack.enter_async_context(  # one server, its log in the run
                    builtin_assistant(
                        tts=config.assistant_tts or config.tts,
                        policy=config.policy,
                        log_path=log,
                        on_start=procs.append,
                        extra_args=args,
                        sip_port=sip_port,
                    )
                )
                crashed = exit_probe(procs[0], log)
            resolved = target.resolve_builtin(server_url, sip_port) if server_url else target
            headers = config.headers if target.protocol != BUILTIN else ()
            make_line = make_line_factory(
                resolved,
                effects=config.effects,
                seed=config.seed,
                headers=headers,
                webrtc=config.webrtc,
                sip=config.sip,
            )
        watch = crashed if target.protocol == BUILTIN else None
        runs.append(TargetRun(settings, make_line, labels[i] if labels else "", watch))
    return runs


def builtin_args(config: BenchConfig) -> list[str]:
    """The built-in's options for this run: its ``--set`` settings and, with ``--concurrency N``, room for
    ``2 N`` calls (its own bound, 4 per CPU, would refuse calls past it with 1013).

    Twice, because the server holds a call's slot until its pipeline has been torn down, a moment after the
    caller hung up: the call that takes the caller's freed slot may arrive before that.
    """
    args = config.assistant_settings.args("--set")
    return args + (["--max-calls", str(2 * config.concurrency)] if config.concurrency else [])


def exit_probe(proc: subprocess.Popen[bytes], log: Path) -> Callable[[], str | None]:
    """Why the built-in assistant's process is gone (its exit code, where its log is), or None if it runs."""

    def crashed() -> str | None:
        code = proc.poll()
        return None if code is None else f"the built-in assistant exited (code {code}; its log: {log})"

    return crashed


def next_log_path(folder: Path) -> Path:
    """``assistant.<n>.log`` for this run start: one log per start, so a rerun never overwrites the log of
    a crash it resumes from."""
    taken = [
        int(m[1])
        for p in folder.glob("assistant.*.log")
        if (m := re.fullmatch(r"assistant\.(\d+)\.log", p.name))
    ]
    return folder / f"assistant.{max(taken, default=0) + 1}.log"
