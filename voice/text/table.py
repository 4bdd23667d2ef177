"""Plain-text tables for the terminal, aligned by display width (a CJK character takes two columns).

In the text room so that every room may print one: the run's summary, the score table, the voice catalogue.
"""

from __future__ import annotations

from collections.abc import Sequence


def text_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], footer: Sequence[str] | None = None
) -> str:
    """Columns aligned by display width (CJK characters take two columns)."""
    everything = [header, *rows, *([footer] if footer else [])]
    widths = [max(display_width(r[i]) for r in everything) for i in range(len(header))]

    def line(r: Sequence[str]) -> str:
        return "  ".join(c + " " * (widths[i] - display_width(c)) for i, c in enumerate(r)).rstrip()

    sep = "  ".join("-" * w for w in widths)
    out = [line(header), sep, *(line(r) for r in rows)]
    if footer:
        out += [sep, line(footer)]
    return "\n".join(out)


def display_width(text: str) -> int:
    """Display width: CJK characters take two columns."""
    return sum(2 if ord(ch) > 0x2E7F else 1 for ch in text)
