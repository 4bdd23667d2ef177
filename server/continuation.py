"""Does a Mandarin transcript sound unfinished?  Lexical end-of-turn cues for the ``lexical`` turn model.

A caller who stops after "那个，", "就是，", "我想问一下，" or "如果要改时间，" is holding the floor:
these are fillers, discourse markers and conditional openers that Mandarin speakers put *before* what they
mean to say.  Pipecat's smart-turn v3 model hears the same thing in the audio, but on the built-in
Mandarin voices it is unreliable (on the bundled caller turns, at its 0.5 threshold, it judged 43 of 99
finished turns unfinished and 3 of 10 mid-turn pauses finished), so the built-in assistant reads the
transcript instead: the segment's text is in hand when the turn ends anyway (the segmented ASR finalizes
it at the VAD's stop).

The cues are general Mandarin, plus the two ways Whisper base most often writes a filler "那个" on the
built-in voices ("那更", "那根"): a cue list is only as good as the ASR in front of it.
"""

from __future__ import annotations

import re

# Fillers and discourse markers that announce more to come when they end what was said so far.
TRAILING_CUES = (
    "那个",
    "这个",
    "就是",
    "就是说",
    "然后",
    "还有",
    "而且",
    "但是",
    "可是",
    "不过",
    "所以",
    "因为",
    "或者",
    "的话",
    "比如",
    "比如说",
    "是这样的",
    "我想问一下",
    "我想问问",
    "我跟你说",
    "那么",
    "呃",
    "额",
    "嗯",
    "那更",  # Whisper base's "那个"
    "那根",  # Whisper base's "那个"
)
# A last clause that opens a condition and has not reached its consequence ("如果要改时间，").
CONDITIONAL_OPENERS = ("如果", "要是", "假如", "万一", "只要", "除非", "等到")
_CONSEQUENCE = re.compile("[就那再则便]")
_SENTENCE_END = "。.!！?？…~～"
_CLAUSE_BREAK = re.compile(r"[，,、；;：:。.!！?？\s]+")
_FILLERS_ALONE = {"嗯", "呃", "额"}  # a lone "嗯" answers ("yes"), it does not hold the floor


# A turn so far made only of these (a greeting, an acknowledgement) is most often the start of one:
# "喂，你好，" then why they call, "行，" then what they will do.  It may be all (a "好的。" that answers),
# so the ``running`` turn model waits its longest finished-turn silence on it, not the unfinished one.
OPENERS = frozenset(
    {"喂", "你好", "您好", "喂你好", "喂您好", "哎", "诶", "唉", "行", "好", "好的", "好嘞", "行吧"}
    | {"对", "是", "嗯", "哦"}
)
_NOT_WORDS = re.compile(r"[，,、；;：:。.!！?？…~～\s]+")


def opener_only(text: str) -> bool:
    """Whether ``text`` is only greetings and acknowledgements (``喂，你好，``, ``行，``), each from
    :data:`OPENERS`: the caller has not yet said what they want."""
    words = [w for w in _NOT_WORDS.split(text) if w]
    return bool(words) and all(w in OPENERS for w in words)


def unfinished_cue(text: str) -> str | None:
    """The cue in ``text`` that says the speaker is not done (for the log), or None if it sounds finished.

    A trailing comma counts (Whisper writes one when the voice hangs), then a trailing filler or marker
    (sentence-final punctuation ignored: Whisper base often ends a fragment with "。" anyway), then a last
    clause that opens a condition without its consequence.
    """
    stripped = text.strip()
    if not stripped:
        return None
    if stripped[-1] in "，,、；;：:":
        return "trailing comma"
    core = stripped.rstrip(_SENTENCE_END + " ")
    if not core or core in _FILLERS_ALONE:
        return None
    for cue in sorted(TRAILING_CUES, key=len, reverse=True):
        if core.endswith(cue):
            return cue
    clauses = [c for c in _CLAUSE_BREAK.split(core) if c]
    last = clauses[-1] if clauses else ""
    for opener in CONDITIONAL_OPENERS:
        if last.startswith(opener) and not _CONSEQUENCE.search(last, len(opener)):
            return f"{opener}…"
    return None
