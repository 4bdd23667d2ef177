"""A run's calls: ids, repeat order and seeds."""

import pytest

from tests.records import short_delivery
from voice.app.run.jobs import plan_jobs, repeat_seed
from voice.dialogues import parse_dialogue
from voice.errors import ConfigError


def dialogue(i: int):
    return parse_dialogue(short_delivery(f"d-{i}"), "mem", i)


def test_repeats_get_their_own_ids_and_seeds():
    jobs = plan_jobs([dialogue(1), dialogue(2)], repeats=2, seed=7)
    assert [j.call_id for j in jobs] == ["d-1.r1", "d-2.r1", "d-1.r2", "d-2.r2"]  # whole passes first
    assert [j.seed for j in jobs[:2]] == [7, 7] and jobs[2].seed == repeat_seed(7, 2) != 7
    assert repeat_seed(7, 2) != repeat_seed(8, 2)
    assert [j.call_id for j in plan_jobs([dialogue(1)])] == ["d-1"]  # one repeat: the dialogue id
    with pytest.raises(ConfigError):
        plan_jobs([dialogue(1)], repeats=0)
