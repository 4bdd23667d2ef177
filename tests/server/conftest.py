"""Fixtures shared by the server tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from server.config import SpeechEngines, SpeechSettings


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def engines(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SpeechEngines]:
    cache = tmp_path_factory.mktemp("tts-cache")
    settings = SpeechSettings(tts_cache_dir=cache)
    loaded = await asyncio.to_thread(SpeechEngines.load, settings)
    await asyncio.to_thread(loaded.warm_up)
    yield loaded
    loaded.close()
