"""Credentials in target URLs are blotted out of everything CallSim prints; the rest of the URL is kept."""

import pytest

from voice.lines.redact import (
    has_credentials,
    is_secret_name,
    redact_arguments,
    redact_text,
    redact_url,
    url_tag,
)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("ws://127.0.0.1:8765/pcm", "ws://127.0.0.1:8765/pcm"),
        ("ws://u:p@127.0.0.1:9/path?token=S3&lang=zh", "ws://***@127.0.0.1:9/path?token=***&lang=zh"),
        ("wss://only-user@host/x", "wss://***@host/x"),
        ("ws://h/p?API_KEY=a&apikey=b&X-Amz-Signature=c&sig=d&Password=e", None),
        ("ws://h/p?access_token=a&client_secret=b&X-Amz-Credential=c&auth=d", None),
        ("ws://h/p?lang=zh&voice=female&flag", "ws://h/p?lang=zh&voice=female&flag"),
        ("ws://h/p#access_token=abc", "ws://h/p#access_token=***"),
        ("ws://h/p?token=", "ws://h/p?token="),  # nothing to hide
        ("ws://h:1?key=x", "ws://h:1?key=***"),  # no path
        ("not a url", "not a url"),
    ],
)
def test_redact_url_hides_userinfo_and_secret_looking_parameters(url, shown):
    redacted = redact_url(url)
    if shown is not None:
        assert redacted == shown
    else:
        assert redacted.count("=***") == url.count("=")
    assert has_credentials(url) == (redacted != url)


def test_secret_names_are_recognised_whatever_their_case_or_decoration():
    for name in (
        "token",
        "TOKEN",
        "api_key",
        "apiKey",
        "x-api-key",
        "secret",
        "passwd",
        "Authorization",
        "sig",
    ):
        assert is_secret_name(name), name
    for name in ("lang", "voice", "rate", "format", "id"):
        assert not is_secret_name(name), name


def test_redact_text_finds_urls_in_messages_and_keeps_the_sentence():
    message = "cannot connect to ws://u:pw@h:1/x?token=abc: refused. Also pcm+ws://a:b@c/d."
    assert (
        redact_text(message) == "cannot connect to ws://***@h:1/x?token=***: refused. Also pcm+ws://***@c/d."
    )


def test_redact_text_also_catches_what_only_looks_like_a_url():
    text = redact_text("target 'ws:/user:pw@host/x?token=t0k&a=b' is not a ws:// URL; mail a@b.com")
    assert "pw" not in text and "t0k" not in text
    assert "***@host" in text and "a=b" in text and "a@b.com" in text


def test_url_tag_is_stable_short_and_tells_urls_apart():
    a, b = "ws://h/p?token=one", "ws://h/p?token=two"
    assert url_tag(a) == url_tag(a)
    assert url_tag(a) != url_tag(b)
    assert len(url_tag(a)) == 8 and int(url_tag(a), 16) >= 0


@pytest.mark.parametrize(
    ("argv", "message", "shown"),
    [
        # a --header value is hidden whatever its name (the option exists to carry credentials)
        (
            ["--header", "X-Thing: s3cret", "--headr", "X-Thing: s3cret"],
            "args: --headr X-Thing: s3cret",
            "args: --headr X-Thing: ***",
        ),
        (["--header=X-Thing: s3cret", "X-Thing: s3cret"], "args: X-Thing: s3cret", "args: X-Thing: ***"),
        (["--header", "nocolon"], "args: nocolon", "args: ***"),
        # a secret-looking header line without --header (forgotten), and a harmless one kept
        (["Authorization: Bearer s3cret"], "args: Authorization: Bearer s3cret", "args: Authorization: ***"),
        (["Cookie: id=s3cret"], "args: Cookie: id=s3cret", "args: Cookie: ***"),
        (["Accept-Language: zh"], "args: Accept-Language: zh", "args: Accept-Language: zh"),
        # URLs in the message as everywhere else
        (
            ["--targt", "ws://u:p@h/x?token=abc"],
            "args: --targt ws://u:p@h/x?token=abc",
            "args: --targt ws://***@h/x?token=***",
        ),
    ],
)
def test_command_line_echoes_hide_header_values_and_url_credentials(argv, message, shown):
    assert redact_arguments(message, argv) == shown


def test_a_sip_uri_keeps_its_user_and_loses_its_password() -> None:
    assert redact_text("calling sip:bot@127.0.0.1:5070") == "calling sip:bot@127.0.0.1:5070"
    assert redact_text("calling sip:bot:hunter2@127.0.0.1") == "calling sip:bot:***@127.0.0.1"
    assert redact_text("failed: alice:secret@example.com") == "failed: ***@example.com"
