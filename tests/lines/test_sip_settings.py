"""SIP credentials from the environment, never written."""

from __future__ import annotations

import pytest

from voice.errors import ConfigError
from voice.lines.sip_settings import SipSettings


def test_credentials_come_from_the_environment_and_are_never_described() -> None:
    settings = SipSettings.from_env({"CALLSIM_SIP_USER": "callsim", "CALLSIM_SIP_PASSWORD": "s3cret"})
    assert settings.credentials is not None and settings.credentials.username == "callsim"
    assert "s3cret" not in repr(settings.describe()) and settings.describe()["password_set"] is True
    assert SipSettings.from_env({}).credentials is None


def test_bad_settings_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="without a user"):
        SipSettings.from_env({"CALLSIM_SIP_PASSWORD": "x"})
    with pytest.raises(ConfigError, match="jitter-buffer-ms"):
        SipSettings(jitter_buffer_ms=5)
    with pytest.raises(ConfigError, match="15 s"):
        SipSettings(answer_timeout_s=30)


def test_the_settings_given_win_over_the_environment_and_none_leaves_it() -> None:
    env = {"CALLSIM_SIP_USER": "env-user", "CALLSIM_SIP_PASSWORD": "env-s3cret"}
    settings = SipSettings.from_env(env, user="file-user", password="file-s3cret", jitter_buffer_ms=120)
    assert (settings.user, settings.password, settings.jitter_buffer_ms) == ("file-user", "file-s3cret", 120)
    settings = SipSettings.from_env(env, user=None, password=None, jitter_buffer_ms=None)
    assert (settings.user, settings.password, settings.jitter_buffer_ms) == ("env-user", "env-s3cret", 60)
    for described in (settings.describe(), SipSettings("u", "file-s3cret").describe()):
        assert "s3cret" not in repr(described) and set(described) == {
            "user",
            "password_set",
            "jitter_buffer_ms",
        }
