"""A ``--ray`` run's answer cache: kept by an actor on the driver's node, read and written by the workers
through it.  On the run's real Ray cluster (``ray_cluster`` in tests/conftest.py: the full layer, skipped
without the optional extra, except under ``CALLSIM_REQUIRE_RAY``), and in every layer through a keeper
in this process, with ``ray.get`` answering as Ray's does."""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest

from voice.app.run.ray_cache import CacheKeeper, SharedAnswerCache, start_keeper
from voice.llm.cache import AnswerCache

if os.environ.get("CALLSIM_REQUIRE_RAY"):
    import ray
else:
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install -e '.[ray]'")


class _Method:
    def __init__(self, method: Any) -> None:
        self.remote = method


class _LocalKeeper:
    """A keeper's handle whose ``.get.remote``/``.put.remote`` call a :class:`CacheKeeper` here and now;
    once ``killed``, every call fails as a call of a dead actor does."""

    def __init__(self, keeper: CacheKeeper) -> None:
        self.killed = False
        self.get = _Method(lambda *a: self._call(keeper.get, *a))
        self.put = _Method(lambda *a: self._call(keeper.put, *a))

    def _call(self, method: Any, *args: Any) -> Any:
        if self.killed:
            raise ray.exceptions.RayActorError()
        return method(*args)


@pytest.fixture
def local_keeper(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> _LocalKeeper:
    monkeypatch.setattr(ray, "get", lambda answer, timeout=None: answer)  # the answer is already here
    return _LocalKeeper(CacheKeeper(str(tmp_path)))


def check_answers_reach_the_drivers_cache(keeper: Any, root: Any) -> None:
    shared = SharedAnswerCache(keeper, root)
    assert shared.get("qwen", "ab12") is None
    path = shared.put("qwen", "ab12", {"answer": "好的", "request": {"m": 1}})
    assert path == AnswerCache(root).path("qwen", "ab12") and path.is_file()  # written by the keeper
    entry = shared.get("qwen", "ab12")
    assert entry is not None and entry["answer"] == "好的"
    assert AnswerCache(root).get("qwen", "ab12") == entry  # the driver's own cache reads it back


def check_a_gone_keeper_is_a_cache_without_answers(shared: SharedAnswerCache, root: Any, caplog: Any) -> None:
    with caplog.at_level(logging.WARNING):
        assert shared.get("qwen", "cd34") is None
        shared.put("qwen", "cd34", {"answer": "x"})
    assert "could not be read" in caplog.text and "could not be kept" in caplog.text
    assert not AnswerCache(root).path("qwen", "cd34").exists()


def test_answers_go_through_a_keeper_into_the_drivers_cache(local_keeper, tmp_path) -> None:
    check_answers_reach_the_drivers_cache(local_keeper, tmp_path)


def test_a_keeper_that_fails_is_a_cache_without_answers_never_a_failed_call(local_keeper, tmp_path, caplog):
    shared = SharedAnswerCache(local_keeper, tmp_path)
    local_keeper.killed = True
    check_a_gone_keeper_is_a_cache_without_answers(shared, tmp_path, caplog)


@pytest.mark.full
def test_answers_go_through_the_keeper_actor_into_the_drivers_cache(ray_cluster, tmp_path) -> None:
    check_answers_reach_the_drivers_cache(start_keeper(tmp_path), tmp_path)


@pytest.mark.full
def test_a_keeper_actor_that_is_gone_is_a_cache_without_answers(ray_cluster, tmp_path, caplog) -> None:
    keeper = start_keeper(tmp_path)
    shared = SharedAnswerCache(keeper, tmp_path)
    ray.kill(keeper, no_restart=True)
    check_a_gone_keeper_is_a_cache_without_answers(shared, tmp_path, caplog)
