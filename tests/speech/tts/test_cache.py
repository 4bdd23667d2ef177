"""CachedTTS: content-addressed, persistent, atomic and thread-safe."""

import threading
import time

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm
from voice.files import atomic_write_bytes, read_wav, wav_bytes
from voice.speech.tts.cache import CachedTTS
from voice.speech.tts.memory import MemoryTTS


class CountingTTS:
    """An engine that counts real syntheses, optionally slowly, to observe what the cache saves."""

    name = "counting"

    def __init__(self, voice: str = "a", delay_s: float = 0.0) -> None:
        self.voice = voice
        self.delay_s = delay_s
        self.calls = 0
        self._inner = MemoryTTS()
        self._lock = threading.Lock()

    def params(self) -> dict[str, str]:
        return {"voice": self.voice, "speed": "1"}

    def synthesize(self, text: str) -> Pcm:
        with self._lock:
            self.calls += 1
        time.sleep(self.delay_s)
        return self._inner.synthesize(text)


def test_cache_counts_hits_and_misses_and_returns_identical_audio(tmp_path):
    engine = CountingTTS()
    cached = CachedTTS(engine, tmp_path)
    first = cached.synthesize("你好")
    again = cached.synthesize("你好")
    other = cached.synthesize("再见")
    assert (cached.hits, cached.misses, engine.calls) == (1, 2, 2)
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    assert cached.name == "counting" and cached.params() == engine.params()


def test_cache_is_content_addressed_and_persistent(tmp_path):
    a = CachedTTS(CountingTTS(voice="a"), tmp_path)
    b = CachedTTS(CountingTTS(voice="b"), tmp_path)
    assert a.key("你好") != b.key("你好")  # params are part of the key
    assert a.key("你好") != a.key("你好。")
    assert a.key("你好") == CachedTTS(CountingTTS(voice="a"), tmp_path / "elsewhere").key("你好")
    pcm = a.synthesize("你好")
    path = a.path_for("你好")
    assert path.parent.parent == tmp_path and path.name == f"{a.key('你好')}.wav"
    channels, rate = read_wav(path)
    assert rate == SAMPLE_RATE and np.array_equal(channels[0], pcm)
    fresh = CachedTTS(CountingTTS(voice="a"), tmp_path)  # a new process would find it too
    assert np.array_equal(fresh.synthesize("你好"), pcm) and fresh.hits == 1 and fresh.engine.calls == 0


def test_cache_key_ignores_param_order(tmp_path):
    class Reordered(CountingTTS):
        def params(self) -> dict[str, str]:
            return {"speed": "1", "voice": self.voice}

    assert CachedTTS(Reordered(), tmp_path).key("好") == CachedTTS(CountingTTS(), tmp_path).key("好")


def test_cache_files_are_written_atomically_and_damage_is_a_miss(tmp_path):
    cached = CachedTTS(CountingTTS(), tmp_path)
    pcm = cached.synthesize("你好")
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files == [cached.path_for("你好")]  # no temporary files left behind
    cached.path_for("你好").write_bytes(b"RIFF garbage")
    assert np.array_equal(cached.synthesize("你好"), pcm)
    assert cached.misses == 2
    assert np.array_equal(cached.synthesize("你好"), pcm) and cached.hits == 1  # rewritten


def test_silence_is_never_cached_and_a_silent_file_is_a_miss(tmp_path):
    class SilentOnce(CountingTTS):
        """Silent on its first call (an engine failing on a line), speech afterwards."""

        def synthesize(self, text: str) -> Pcm:
            pcm = super().synthesize(text)
            return np.zeros(len(pcm), dtype=np.int16) if self.calls == 1 else pcm

    cached = CachedTTS(SilentOnce(), tmp_path)
    assert not cached.synthesize("嗯").any()
    assert not cached.path_for("嗯").exists()  # the failure is not kept
    spoken = cached.synthesize("嗯")
    assert spoken.any() and cached.engine.calls == 2 and cached.path_for("嗯").is_file()
    # a silent file left by an older version is a miss, and is replaced by speech
    older = CachedTTS(CountingTTS(), tmp_path)
    atomic_write_bytes(older.path_for("好"), wav_bytes([np.zeros(800, dtype=np.int16)]))
    assert older.synthesize("好").any() and older.misses == 1 and older.engine.calls == 1
    channels, _ = read_wav(older.path_for("好"))
    assert channels[0].any()


def test_cache_that_cannot_be_written_still_returns_audio(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    cached = CachedTTS(CountingTTS(), blocker)
    assert len(cached.synthesize("你好")) > 0
    assert len(cached.synthesize("你好")) > 0 and cached.misses == 2


def test_cache_is_thread_safe_and_synthesizes_a_text_once(tmp_path):
    engine = CountingTTS(delay_s=0.05)
    cached = CachedTTS(engine, tmp_path)
    results: list[Pcm] = []
    lock = threading.Lock()

    def work(text: str) -> None:
        pcm = cached.synthesize(text)
        with lock:
            results.append(pcm)

    threads = [threading.Thread(target=work, args=(t,)) for t in ["你好"] * 6 + ["再见"] * 6]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert engine.calls == 2
    assert (cached.hits, cached.misses) == (10, 2)
    assert len(results) == 12


def test_default_cache_dir_follows_callsim_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CALLSIM_CACHE", str(tmp_path))
    assert CachedTTS(CountingTTS()).cache_dir == tmp_path / "tts"


def test_load_loads_the_engine_it_wraps_and_is_harmless_for_one_without_a_model(tmp_path):
    loaded: list[str] = []

    class Model(MemoryTTS):
        def load(self) -> None:
            loaded.append("model")

    CachedTTS(Model(), tmp_path).load()
    CachedTTS(MemoryTTS(), tmp_path).load()  # no model to load
    assert loaded == ["model"]
