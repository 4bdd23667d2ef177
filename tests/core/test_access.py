"""Who may connect to a CallSim server (``voice/core/access.py``): loopback hosts and browser origins."""

from __future__ import annotations

import pytest

from voice.core.access import is_loopback_host, origin_allowed


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "127.8.0.2", "::1", "[::1]", "app.localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "example.com", "localhost.evil.com", ""])
def test_other_hosts_are_not_loopback(host: str) -> None:
    assert not is_loopback_host(host)


def test_programs_and_loopback_pages_may_call_by_default() -> None:
    assert origin_allowed(None)
    assert origin_allowed("http://localhost:3000")
    assert origin_allowed("http://127.0.0.1:8766")
    assert origin_allowed("https://[::1]")


@pytest.mark.parametrize(
    "origin", ["https://evil.example", "http://localhost.evil.example", "null", "file://", "not a url"]
)
def test_foreign_pages_are_refused_by_default(origin: str) -> None:
    assert not origin_allowed(origin)


def test_listed_pages_and_the_wildcard_are_allowed() -> None:
    assert origin_allowed("https://App.example.com", ["https://app.example.com/"])
    assert not origin_allowed("https://other.example.com", ["https://app.example.com"])
    assert origin_allowed("https://evil.example", ["*"])
