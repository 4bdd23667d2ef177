"""A run's provenance, typed: as an old file holds it, and with a measured speed index."""

from tests.metrics.model.old_files import VOICED, doc
from voice.metrics.model.jsonio import Fields
from voice.metrics.model.provenance_record import CallsimState, Machine, Provenance, SpeedIndexRecord


def test_an_old_provenance_loads_and_writes_back_as_written():
    written = doc(VOICED / "results.json")["provenance"]
    prov = Provenance.from_json(Fields(written))
    assert prov.callsim.version == "0.1.0" and prov.machine.cpus and prov.speed_index is None
    assert prov.command[0] == "gen.py" and prov.to_json() == written


def test_a_speed_index_keeps_its_components_and_runs():
    index = SpeedIndexRecord(0.7, {"whisper_base_30s_s": 0.7}, {"whisper_base_30s_s": [0.71, 0.7, 0.69]}, "d")
    machine = Machine("AMD EPYC", ["avx2"], 2, 1, "Linux", "3.11.7")
    prov = Provenance(
        CallsimState("0.1.0", "abc", False), ["callsim", "bench"], "D", {"numpy": "2"}, machine, index
    )
    assert Provenance.from_json(Fields(prov.to_json())) == prov
    assert list(prov.to_json()) == ["callsim", "command", "date_utc", "packages", "machine", "speed_index"]
