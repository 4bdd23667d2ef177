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
