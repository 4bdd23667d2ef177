"""Who may connect to a CallSim server (``voice/contract/access.py``): loopback hosts and browser origins."""

from __future__ import annotations

import argparse

import pytest

from voice.contract.access import (
    Denial,
    access_token,
    add_access_options,
    bearer_token,
    check_access,
    is_loopback_host,
    open_without_token,
    origin_allowed,
    presented_tokens,
    token_matches,
)
from voice.errors import ConfigError


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


def test_a_token_matches_only_itself_and_nothing_presented_never_matches() -> None:
    assert token_matches("s3cret", "s3cret")
    assert not token_matches("s3cre", "s3cret") and not token_matches(None, "s3cret")
    assert not token_matches("", "s3cret")


def test_off_loopback_a_server_needs_a_token() -> None:
    assert open_without_token("127.0.0.1", "") is None and open_without_token("0.0.0.0", "t") is None
    refused = open_without_token("0.0.0.0", "")
    assert refused is not None and "'0.0.0.0' is not a loopback address" in refused and "--token" in refused


def test_a_bearer_token_is_read_from_its_header_and_nothing_else_is() -> None:
    assert bearer_token("Bearer s3cret") == "s3cret" and bearer_token("  bearer  s3cret ") == "s3cret"
    assert (
        bearer_token(None) is None and bearer_token("Basic dTpw") is None and bearer_token("Bearer ") is None
    )


def test_the_access_options_give_the_token_from_the_flag_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    p = argparse.ArgumentParser()
    add_access_options(p)
    assert access_token(p.parse_args([])) == ""
    assert access_token(p.parse_args(["--token", "t1"])) == "t1"
    monkeypatch.setenv("CALLSIM_T", "t2")
    args = p.parse_args(["--token-env", "CALLSIM_T", "--allow-origin", "https://a.example"])
    assert access_token(args) == "t2" and args.allowed_origins == ["https://a.example"]
    with pytest.raises(ConfigError, match="not both"):
        access_token(p.parse_args(["--token", "t1", "--token-env", "CALLSIM_T"]))
    monkeypatch.delenv("CALLSIM_T")
    with pytest.raises(ConfigError, match="--token-env CALLSIM_T"):
        access_token(args)


def test_the_tokens_of_a_request_come_from_its_bearer_header_query_and_named_cookie() -> None:
    assert presented_tokens("Bearer b1", "token=q1&x=2") == ["b1", "q1"]
    cookies = ["a=1; callsim_t=c%3B1", "callsim_t=c2"]
    assert presented_tokens(None, "", cookies, "callsim_t") == ["c;1", "c2"]
    assert presented_tokens(None, "", cookies) == []  # cookies only when the server names its own
    assert presented_tokens("Basic dTpw", "tokens=x") == []


def test_one_check_refuses_a_missing_or_wrong_token_and_a_foreign_page() -> None:
    assert check_access("", []) is None and check_access("s3cret", ["nope", "s3cret"]) is None
    missing, wrong = check_access("s3cret", []), check_access("s3cret", ["s3cre"])
    assert missing is not None and missing.status == 401 and "Bearer" in missing.reason
    assert wrong == Denial(401, "wrong token")
    assert ("WWW-Authenticate", "Bearer") in wrong.headers and wrong.body == b"wrong token\n"
    foreign = check_access("", [], "https://evil.example", command="callsim talk --web")
    assert foreign is not None and foreign.status == 403
    assert (
        "'https://evil.example'" in foreign.reason and "callsim talk --web --allow-origin" in foreign.reason
    )
    assert all(name != "WWW-Authenticate" for name, _ in foreign.headers)
    assert check_access("", [], "https://evil.example", ["https://evil.example"]) is None
    assert check_access("t", ["t"], "http://localhost:3000") is None
    assert check_access("t", [], "https://evil.example") == missing  # the token is checked first
