"""A ``--ray`` run's answer cache: kept by an actor on the driver's node, read and written by the workers
through it (a real local Ray; skipped without the optional extra, except under ``CALLSIM_REQUIRE_RAY``)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest

from voice.llm.cache import AnswerCache
from voice.run.ray_cache import SharedAnswerCache, start_keeper

if os.environ.get("CALLSIM_REQUIRE_RAY"):
    import ray
else:
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install -e '.[ray]'")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_answers_go_through_the_keeper_into_the_drivers_cache(local_ray, tmp_path) -> None:
    keeper = start_keeper(tmp_path)
    shared = SharedAnswerCache(keeper, tmp_path)
    assert shared.get("qwen", "ab12") is None
    path = shared.put("qwen", "ab12", {"answer": "好的", "request": {"m": 1}})
    assert path == AnswerCache(tmp_path).path("qwen", "ab12") and path.is_file()  # written by the keeper
    entry = shared.get("qwen", "ab12")
    assert entry is not None and entry["answer"] == "好的"
    assert AnswerCache(tmp_path).get("qwen", "ab12") == entry  # the driver's own cache reads it back


def test_a_keeper_that_is_gone_is_a_cache_without_answers_never_a_failed_call(local_ray, tmp_path, caplog):
    keeper = start_keeper(tmp_path)
    shared = SharedAnswerCache(keeper, tmp_path)
    ray.kill(keeper, no_restart=True)
    with caplog.at_level(logging.WARNING):
        assert shared.get("qwen", "cd34") is None
        shared.put("qwen", "cd34", {"answer": "x"})
    assert "could not be read" in caplog.text and "could not be kept" in caplog.text
    assert not AnswerCache(tmp_path).path("qwen", "cd34").exists()
