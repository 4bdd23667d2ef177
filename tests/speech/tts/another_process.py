"""The determinism check every offline voice passes: the same line's samples in a fresh process, after
another line (what a cache filled by one run and read by another relies on)."""

import hashlib
import subprocess
import sys

from voice.core.audio import Pcm


def digest(pcm: Pcm) -> str:
    return hashlib.sha256(pcm.tobytes()).hexdigest()


def digest_elsewhere(engine: str, first: str, text: str, timeout_s: float = 180) -> str:
    """``engine`` (an expression, its imports done by ``voice.speech.tts.<module>``) speaks ``first`` then
    ``text`` in a new Python process; the sha256 of the second's samples."""
    module, _, expr = engine.partition(":")
    code = (
        f"import hashlib; from voice.speech.tts.{module} import *; "
        f"({expr}).synthesize({first!r}); "
        f"print(hashlib.sha256(({expr}).synthesize({text!r}).tobytes()).hexdigest())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout_s, check=True
    )
    return out.stdout.split()[-1]
