"""The fault catalogue's tests.  Each fault run for real is a ``callsim bench`` or a server in a process of
its own, seconds each: the catalogue runs in the full layer (``scripts/test --full``), and the fast layer
runs the cheapest of each area, so that every area's harness runs on every change; what the other faults
check is also checked at unit level by the tests of their modules (docs/ci.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from voice.app.benchmarks.faults.fault import Fault


def layered(faults: Iterable[Fault], every_layer: set[str]) -> list[Any]:
    """The catalogue's fast faults as parameters: those named in ``every_layer`` in the fast layer, the rest
    marked ``full``."""
    fast = [f for f in faults if f.fast]
    unknown = every_layer - {f.name for f in fast}
    assert not unknown, f"no such fast fault: {sorted(unknown)}"  # a renamed fault would leave the fast layer
    return [pytest.param(f, id=f.name, marks=() if f.name in every_layer else pytest.mark.full) for f in fast]
