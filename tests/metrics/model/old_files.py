"""The result files CallSim wrote before its typed model (``tests/metrics/data/results_v1``)."""

import json
from pathlib import Path

OLD = Path(__file__).resolve().parents[1] / "data" / "results_v1"
VOICED, REACTIVE, FAILING, SCORED = (OLD / n for n in ("voiced", "reactive", "failing", "scored"))
TARGET = "pcm-ws-a.test-pcm"


def doc(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))
