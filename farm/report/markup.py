"""HTML pieces of the report's sections that live outside farm.report.page (the checks, the openings)."""

import html


def escape(value) -> str:
    return html.escape(str(value))


def number(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}"
    return f"{int(value):,}"


def table(headers: list[str], rows: list[list], numeric: set[int] = frozenset(), row_class: str = "") -> str:
    """A table, each of its rows of class ``row_class`` where one is given."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    opening = f"<tr class={row_class}>" if row_class else "<tr>"
    body = []
    for row in rows:
        cells = "".join(
            f"<td class=n>{number(v)}</td>" if at in numeric else f"<td>{escape(v)}</td>" for at, v in enumerate(row)
        )
        body.append(f"{opening}{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
