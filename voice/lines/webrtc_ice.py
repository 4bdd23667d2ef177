"""Which host addresses a WebRTC peer offers as ICE candidates: loopback only for a peer on this machine.

aiortc gathers its host candidates through aioice's ``get_host_addresses``, which lists every interface
*except* loopback, and no ``RTCConfiguration`` setting changes that.  A bot on ``127.0.0.1`` is then reached
through another address of this machine (a container's bridge address, say), and media leaves the loopback
interface for no reason (and cannot, in a sandbox that allows loopback only).  :func:`gather_on` makes the
gathering inside it offer the given addresses and nothing else; :func:`loopback_candidates` is it for
``127.0.0.1``.  Outside them, gathering is aioice's own (a remote bot needs real addresses, plus STUN or TURN
servers where NAT is in the way: ``docs/bots.md``).

The switch is a context variable, not a global: it holds for the gathering done by the task that entered
the block (and the tasks it starts), so calls to a local and a remote bot run side by side in one process.
A process that serves on one address only (a test peer, the built-in on loopback) sets its default once with
:func:`gather_everywhere_on`.  aioice's function is wrapped once, on first use.  One module for both sides:
CallSim's WebRTC line and the built-in assistant's WebRTC route.
"""

from __future__ import annotations

import contextlib
import contextvars
import ipaddress
import socket
from collections.abc import Callable, Iterator

import aioice.ice

LOOPBACK = "127.0.0.1"
_gather_on: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar(
    "callsim_gather_on", default=None
)
_process_default: tuple[str, ...] | None = None  # gather_everywhere_on: for a whole process
_original: Callable[[bool, bool], list[str]] | None = None


def _host_addresses(use_ipv4: bool, use_ipv6: bool) -> list[str]:
    assert _original is not None
    only = _gather_on.get()
    if only is None:
        only = _process_default
    if only is None:
        return _original(use_ipv4, use_ipv6)
    return [a for a in only if (use_ipv6 if ":" in a else use_ipv4)]


def _install() -> None:
    global _original
    if _original is None:
        _original = aioice.ice.get_host_addresses
        aioice.ice.get_host_addresses = _host_addresses


@contextlib.contextmanager
def gather_on(addresses: tuple[str, ...] | None) -> Iterator[None]:
    """Inside this block (this task and those it starts) ICE gathers on ``addresses`` only; ``None``:
    the process's default (aioice's own choice unless :func:`gather_everywhere_on` set one)."""
    _install()
    token = _gather_on.set(addresses)
    try:
        yield
    finally:
        _gather_on.reset(token)


def loopback_candidates(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """Inside this block ICE gathers on ``127.0.0.1`` only (if ``enabled``; else as outside it)."""
    return gather_on((LOOPBACK,) if enabled else None)


def gather_everywhere_on(addresses: tuple[str, ...] | None) -> None:
    """The whole process gathers on ``addresses`` (outside any :func:`gather_on` block): a test peer's or a
    server's process bound to one address."""
    global _process_default
    _install()
    _process_default = addresses


def only_loopback_everywhere() -> None:
    """The whole process offers ``127.0.0.1`` only: a test peer serving on loopback."""
    gather_everywhere_on((LOOPBACK,))


def media_addresses(host: str) -> tuple[str, ...] | None:
    """Where a server bound to ``host`` gathers: that address (127.0.0.1 for the default loopback bind, both
    loopbacks for ``localhost``); None (every interface) for a wildcard bind."""
    if host in ("", "0.0.0.0", "::"):
        return None
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_DGRAM)
    except OSError:
        return (host,)
    return tuple(dict.fromkeys(str(info[4][0]) for info in infos))


def is_loopback_host(host: str) -> bool:
    """``localhost`` or an address of the loopback network (127.0.0.0/8, ::1)."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
