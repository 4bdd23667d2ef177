"""What a SIP call needs beyond its URI: the credentials for a digest challenge, the jitter buffer's delay.

The credentials come from the environment (``CALLSIM_SIP_USER``, ``CALLSIM_SIP_PASSWORD``) or the config file
(``[assistant] sip-user``, ``sip-password = "${VAR}"``): never from the command line, where ``ps`` shows them,
and never written anywhere (``describe`` says only whether a password is set).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from aiosipua.auth import SipDigestAuth

from voice.errors import ConfigError
from voice.lines.line_meta import SipSettingsMeta
from voice.lines.sip_media import JITTER_DELAY_MS

USER_ENV = "CALLSIM_SIP_USER"
PASSWORD_ENV = "CALLSIM_SIP_PASSWORD"


@dataclass(frozen=True)
class SipSettings:
    user: str | None = None
    password: str | None = field(default=None, repr=False)  # never in a repr, a log or a file
    jitter_buffer_ms: int = JITTER_DELAY_MS
    answer_timeout_s: float = 12.0

    def __post_init__(self) -> None:
        if not 20 <= self.jitter_buffer_ms <= 1000:
            raise ConfigError(f"jitter-buffer-ms={self.jitter_buffer_ms} is not in 20..1000")
        if not 1.0 <= self.answer_timeout_s <= 13.0:
            why = "the call must open within 15 s"
            raise ConfigError(f"SIP answer timeout {self.answer_timeout_s} s is not in 1..13 ({why})")
        if self.password and not self.user:
            raise ConfigError(f"a SIP password without a user: set {USER_ENV} or [assistant] sip-user")

    @property
    def credentials(self) -> SipDigestAuth | None:
        if self.user is None or self.password is None:
            return None
        return SipDigestAuth(self.user, self.password)

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        user: str | None = None,
        password: str | None = None,
        jitter_buffer_ms: int | None = None,
        answer_timeout_s: float | None = None,
    ) -> SipSettings:
        """Settings with the credentials from the environment, unless the keywords give them (None: not
        given, the environment's or the default)."""
        env = os.environ if environ is None else environ
        default = cls()
        return cls(
            user if user is not None else env.get(USER_ENV) or None,
            password if password is not None else env.get(PASSWORD_ENV) or None,
            jitter_buffer_ms if jitter_buffer_ms is not None else default.jitter_buffer_ms,
            answer_timeout_s if answer_timeout_s is not None else default.answer_timeout_s,
        )

    def describe(self) -> SipSettingsMeta:
        """For the event log and settings: the user, whether a password is set, never the password."""
        return {"user": self.user, "password_set": self.password is not None,
                "jitter_buffer_ms": self.jitter_buffer_ms}  # fmt: skip
