"""Plain-text tables for a terminal: aligned columns, wide characters counted as two."""

import unicodedata


def display_width(text: str) -> int:
    """Terminal columns: East Asian wide and fullwidth characters take two."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def clip(text: str, width: int) -> str:
    text = " ".join(text.split())  # one line
    if display_width(text) <= width:
        return text
    out, used = [], 0
    for ch in text:
        used += display_width(ch)
        if used > width - 3:
            break
        out.append(ch)
    return "".join(out) + "..."


def or_dash(value) -> str:
    return "-" if value is None or value == "" else str(value)


def render_table(headers: list[str], rows: list[list], right: set[str] = frozenset()) -> str:
    """An aligned plain-text table; cells in ``right`` columns are right-aligned."""
    cells = [[" ".join(str(v).split()) for v in row] for row in rows]
    widths = [max([display_width(h)] + [display_width(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def line(values):
        parts = []
        for header, value, width in zip(headers, values, widths):
            pad = " " * (width - display_width(value))
            parts.append(pad + value if header in right else value + pad)
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in cells)])
