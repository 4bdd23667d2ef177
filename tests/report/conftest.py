"""A small run on virtual time, shared by the report's tests: three dialogues with every cue, two targets."""

import pytest

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
