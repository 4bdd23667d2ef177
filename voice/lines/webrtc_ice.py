"""Which host addresses a WebRTC peer offers as ICE candidates: loopback only for a bot on this machine.

aiortc gathers its host candidates through aioice's ``get_host_addresses``, which lists every interface
*except* loopback.  A bot on ``127.0.0.1`` is then reached through another address of this machine (a
container's bridge address, say), and media leaves the loopback interface for no reason (and cannot, in a
sandbox that allows loopback only).  :func:`loopback_candidates` makes the gathering inside it offer
``127.0.0.1`` and nothing else; outside it, gathering is aioice's own (a remote bot needs real addresses,
plus STUN or TURN servers where NAT is in the way: ``docs/bots.md``).

The switch is a context variable, not a global: it holds for the gathering done by the task that entered
the block (and the tasks it starts), so calls to a local and a remote bot can run side by side in one
process.  aioice's function is wrapped once, on first use.
"""

from __future__ import annotations

import contextlib
import contextvars
import ipaddress
from collections.abc import Callable, Iterator

import aioice.ice

LOOPBACK = "127.0.0.1"
_loopback_only: contextvars.ContextVar[bool] = contextvars.ContextVar("callsim_loopback_ice", default=False)
_original: Callable[[bool, bool], list[str]] | None = None
_everywhere = False  # set for a whole process (a peer serving on loopback)


def _host_addresses(use_ipv4: bool, use_ipv6: bool) -> list[str]:
    assert _original is not None
    if _everywhere or _loopback_only.get():
        return [LOOPBACK] if use_ipv4 else []
    return _original(use_ipv4, use_ipv6)


def _install() -> None:
    global _original
    if _original is None:
        _original = aioice.ice.get_host_addresses
        aioice.ice.get_host_addresses = _host_addresses


@contextlib.contextmanager
def loopback_candidates(enabled: bool = True) -> Iterator[None]:
    """Inside this block (this task and those it starts), ICE gathers ``127.0.0.1`` only if ``enabled``."""
    _install()
    token = _loopback_only.set(enabled)
    try:
        yield
    finally:
        _loopback_only.reset(token)


def only_loopback_everywhere() -> None:
    """Offer ``127.0.0.1`` only, in the whole process: a test peer's, or the built-in's on loopback."""
    global _everywhere
    _install()
    _everywhere = True


def is_loopback_host(host: str) -> bool:
    """``localhost`` or an address of the loopback network (127.0.0.0/8, ::1)."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
