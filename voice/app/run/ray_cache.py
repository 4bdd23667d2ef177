"""A ``--ray`` run's reactive callers keep their model's answers in the driver's cache, whatever node they
run on.

The answer cache is what makes a reactive run replayable offline (:mod:`voice.llm.cache`).  Each node has
a disk cache of its own, so a caller on a worker that kept its answers there would replay only where it
ran before.  Instead a :class:`CacheKeeper` actor, pinned to the driver's node, holds the driver's cache,
and every worker's LLM client looks answers up and stores them through it
(:class:`SharedAnswerCache`): one cache for the whole run, on the machine that holds its folder.  The
client asks from a worker thread (:meth:`voice.llm.client.LLMClient.achat`), so a lookup's round trip
never holds up the worker's event loop, where the calls' frames are paced.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from voice.llm.cache import AnswerCache, CacheEntry, StoredEntry

log = logging.getLogger(__name__)

KEEPER_TIMEOUT_S = 30.0  # one lookup or store; past it the answer is asked of the model / not kept


class CacheKeeper:
    """The driver's answer cache, served to the workers (a Ray actor on the driver's node)."""

    def __init__(self, root: str) -> None:
        self._cache = AnswerCache(Path(root))

    def get(self, model: str, key: str) -> StoredEntry | None:
        return self._cache.get(model, key)

    def put(self, model: str, key: str, entry: CacheEntry) -> str:
        return str(self._cache.put(model, key, entry))


class SharedAnswerCache(AnswerCache):
    """On a worker: the driver's cache at ``root``, through its keeper.  A keeper that cannot be reached
    counts as a cache without the answer (it is asked of the model) and its store as not kept, both logged:
    a call never fails for its cache."""

    def __init__(self, keeper: Any, root: Path) -> None:
        super().__init__(root)
        self._keeper = keeper

    def get(self, model: str, key: str) -> StoredEntry | None:
        import ray

        try:
            entry: StoredEntry | None = ray.get(self._keeper.get.remote(model, key), timeout=KEEPER_TIMEOUT_S)
        except (ray.exceptions.RayError, TimeoutError) as exc:
            log.warning("the run's answer cache could not be read (%s): asking the model", exc)
            return None
        return entry

    def put(self, model: str, key: str, entry: CacheEntry) -> Path:
        import ray

        try:
            ray.get(self._keeper.put.remote(model, key, dict(entry)), timeout=KEEPER_TIMEOUT_S)
        except (ray.exceptions.RayError, TimeoutError) as exc:
            log.warning("an answer could not be kept in the run's cache (%s)", exc)
        return self.path(model, key)


def start_keeper(root: Path) -> Any:
    """A :class:`CacheKeeper` of the cache at ``root`` on this (the driver's) node."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    return (
        ray.remote(CacheKeeper)
        .options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False))
        .remote(str(root))
    )
