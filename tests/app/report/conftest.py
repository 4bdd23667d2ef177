"""Small runs on virtual time, shared by the report's tests: three dialogues with every cue, two targets; and
a reactive caller's run of two of them."""

import pytest

from tests.reactive_runs import reactive_bench
from tests.runs import bench, mini


@pytest.fixture
async def run_dir(tmp_path):
    ds = [
        mini(1, pause=True),
        mini(2, "takeout", "regular", "conflict", barge=True),
        mini(3, "taxi", "emergent", "complementarity", backchannel=True),
    ]
    await bench(tmp_path, ds, heard=("快递到了放那里", "好的我放门口了"), concurrency=3)
    return tmp_path


@pytest.fixture
async def reactive_dir(tmp_path, no_openai_env):
    """The same two targets called by a reactive caller (its model played by rules) on two dialogues."""
    out = tmp_path / "reactive"  # apart from run_dir's folder: a test may use both
    await reactive_bench(out, [mini(1, pause=True), mini(2, "takeout", "regular", "conflict", barge=True)])
    return out
