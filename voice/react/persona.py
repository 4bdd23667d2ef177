"""Who the reactive caller is: a persona shapes what it says (through the prompt) and how it paces itself.

A persona is chosen per call, by name or seeded at random (``random``: the dialogue id and the call's seed
decide, so a rerun gets the same one), and recorded in the call's meta.  Harassment dialogues get the
insisting ``scammer`` under ``random``: their caller is one by construction.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from voice.errors import ConfigError


@dataclass(frozen=True)
class Persona:
    """A caller's manner.  Timing figures in ms; ``None`` leaves the dialogue's or the model's choice."""

    name: str
    manner: str  # told to the model, in Mandarin
    interrupt_after_ms: int | None = None  # cuts into any reply still going after this long
    think_scale: float = 1.0  # multiplies the drawn think time (hesitant people take longer)
    max_chars: int = 60  # the longest turn the model may say (talkative people say more)


PERSONAS: dict[str, Persona] = {
    p.name: p
    for p in (
        Persona("patient", "耐心、客气，等对方说完再开口，听不懂会礼貌地再问一遍。", think_scale=1.2),
        Persona(
            "impatient",
            "赶时间、不耐烦，对方啰嗦时会直接打断，说话简短直接。",
            interrupt_after_ms=2500,
            think_scale=0.6,
            max_chars=30,
        ),
        Persona("talkative", "爱说话，喜欢多解释几句，会顺带提到别的事情。", max_chars=90),
        Persona("terse", "话很少，每次只说几个字。", think_scale=0.8, max_chars=15),
        Persona(
            "hesitant",
            "说话犹犹豫豫，常用“嗯……”“那个……”，说到一半会停顿一下再接着说。",
            think_scale=1.6,
        ),
        Persona(
            "scammer",
            "诈骗或推销电话，会编造理由、反复坚持索要信息（验证码、地址、身份证号），被拒绝也不轻易放弃。",
            think_scale=0.8,
        ),
    )
}
CALM = ("patient", "impatient", "talkative", "terse", "hesitant")  # what ``random`` draws from


def choose_persona(name: str, dialogue_id: str, scenario: str, seed: int) -> Persona:
    """``name`` itself, or (``random``) one drawn from the dialogue id and seed; harassment: scammer."""
    if name != "random":
        if name not in PERSONAS:
            raise ConfigError(f"unknown persona {name!r} (random, {', '.join(PERSONAS)})")
        return PERSONAS[name]
    if scenario == "harassment":
        return PERSONAS["scammer"]
    digest = hashlib.sha256(f"persona:{seed}:{dialogue_id}".encode()).digest()
    return PERSONAS[CALM[digest[0] % len(CALM)]]
