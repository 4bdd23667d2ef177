"""Traditional to simplified Chinese script, the first step of every comparison of Mandarin text.

An ASR may write 說 where the reference has 说; the CER (:mod:`voice.speech.text`), the transcribers and the
phrase matching (:mod:`voice.text.numbers`, :mod:`voice.text.matching`) all compare in simplified script.
"""

from __future__ import annotations

import threading
from typing import Any

_t2s_lock = threading.Lock()
_t2s_converter: Any = None


def to_simplified(text: str) -> str:
    """Traditional to simplified Chinese with OpenCC's ``t2s`` tables (a no-op on simplified text).

    The converter is built once and shared; it initialises its dictionaries lazily on first use, which is
    not thread-safe, so every conversion holds a lock (conversions take microseconds).
    """
    global _t2s_converter
    with _t2s_lock:
        if _t2s_converter is None:
            import opencc

            _t2s_converter = opencc.OpenCC("t2s")
        result: str = _t2s_converter.convert(text)
    return result
