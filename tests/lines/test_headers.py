"""``--header NAME: VALUE``: parsed, expanded from the environment, and refused clearly when unsafe."""

import pytest

from voice.errors import ConfigError
from voice.lines.headers import header_names, parse_header, parse_headers

ENV = {"TOKEN": "s3cret", "TWO": "a b"}


def test_a_header_is_split_on_its_first_colon_and_trimmed():
    assert parse_header("Authorization:  Bearer abc ", ENV) == ("Authorization", "Bearer abc")
    assert parse_header("X-Time: 12:30", ENV) == ("X-Time", "12:30")


def test_variables_in_braces_come_from_the_environment():
    assert parse_header("Authorization: Bearer ${TOKEN}", ENV) == ("Authorization", "Bearer s3cret")
    assert parse_header("X-Both: ${TOKEN}/${TWO}", ENV) == ("X-Both", "s3cret/a b")
    assert parse_header("X-Plain: $TOKEN", ENV) == ("X-Plain", "$TOKEN")  # only ${...} is expanded


def test_an_unset_variable_is_named_in_the_error():
    with pytest.raises(ConfigError, match="MISSING is not set"):
        parse_header("Authorization: Bearer ${MISSING}", ENV)


@pytest.mark.parametrize("value", ["SECRET\r\nX-Evil: 1", "SECRET\nb", "SECRET\rb", "SECRET\0b"])
def test_line_breaks_are_refused_without_quoting_the_value(value):
    with pytest.raises(ConfigError, match="Authorization: its value holds a line break") as caught:
        parse_header("Authorization: ${V}", {"V": value})
    assert "SECRET" not in str(caught.value)


def test_control_and_non_ascii_characters_are_refused():
    for value in ("a\x01b", "令牌"):
        with pytest.raises(ConfigError, match="control or non-ASCII"):
            parse_header(f"X-Key: {value}", ENV)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Authorization Bearer x", "NAME: VALUE"),
        (": x", "NAME: VALUE"),
        ("Bad Name: x", "not a valid header name"),
        ("Host: evil", "handshake"),
        ("sec-websocket-key: x", "handshake"),
    ],
)
def test_malformed_and_handshake_headers_are_refused(text, why):
    with pytest.raises(ConfigError, match=why):
        parse_header(text, ENV)


def test_several_headers_keep_their_order_and_the_same_name_twice_is_refused():
    headers = parse_headers(["X-B: 2", "Authorization: Bearer ${TOKEN}"], ENV)
    assert headers == (("X-B", "2"), ("Authorization", "Bearer s3cret"))
    assert header_names(headers) == ["Authorization", "X-B"]
    assert parse_headers(None, ENV) == ()
    with pytest.raises(ConfigError, match="x-b given more than once"):
        parse_headers(["X-B: 1", "x-b: 2"], ENV)
