"""The report as one HTML file that opens from disk: styles, charts (inline SVG) and the
figures (a JSON block, for whoever wants the numbers) all inside it, no script to run and
nothing to fetch; its Content-Security-Policy forbids the browser to fetch anything."""

import html
import json
from datetime import datetime

from farm.report import charts
from farm.report.checked import checks_section
from farm.report.figures import DayFigures
from farm.report.openings import openings_section
from farm.report.reasons import short_reason

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #212529; }
h1 { font-size: 1.6em; margin-bottom: 0.1em; } h2 { margin-top: 2em; border-bottom: 1px solid #dee2e6; }
.meta, .note { color: #6c757d; } .empty { font-size: 1.2em; padding: 2em; background: #f8f9fa; }
/* a table wider than the page scrolls in its own box; a long name without spaces wraps, a header or a
   number never breaks inside a word */
table { border-collapse: collapse; margin: 0.8em 0; max-width: 100%; display: block; overflow-x: auto; }
body, td { overflow-wrap: anywhere; } th, td.n { overflow-wrap: normal; white-space: nowrap; }
td:first-child, td.w { overflow-wrap: normal; } td.w { white-space: nowrap; }
td, th { padding: 0.2em 0.6em; border-bottom: 1px solid #e9ecef; }
tr.none td { color: #6c757d; font-style: italic; }
th { text-align: left; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 0.8em 0; } figure svg { max-width: 100%; height: auto; }
"""
_TIME = "%Y-%m-%d %H:%M"


def render(figures: DayFigures, generated: datetime, database: str) -> str:
    tz = generated.tzinfo
    head = (
        f"<h1>farm: the day's picture, {figures.day}</h1>"
        f"<p class=meta>Days in {_e(figures.timezone)}. Made {generated.strftime(_TIME)} from {_e(database)}: "
        f"{figures.keywords_stored:,} keywords and {figures.postings_stored:,} postings stored.</p>"
    )
    if not (figures.keywords_stored or figures.postings_stored):
        body = "<p class=empty>The database holds no keywords and no postings yet: nothing to report.</p>"
    else:
        body = "".join(
            (
                checks_section(figures.checks, figures.day),
                _doors(figures),
                _crawl(figures, tz),
                _caps(figures),
                _postings(figures),
                _new(figures),
                openings_section(figures.openings, figures.day),
                _salary(figures),
                _companies(figures),
            )
        )
    data = _script_json(figures.to_json())
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>farm report {figures.day}</title><style>{CSS}</style></head><body>"
        f"{head}{body}"
        f'<script type="application/json" id="farm-figures">{data}</script>'
        "</body></html>\n"
    )


# what an HTML parser reads inside a <script> (a closing tag, "<!--" opening its double-escaped
# state) and what older JavaScript reads as a line end: written as JSON escapes, the same value
_SCRIPT_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def _script_json(value) -> str:
    """``value`` as JSON that a <script type="application/json"> holds whole, whatever its texts."""
    return json.dumps(value, ensure_ascii=False).translate(_SCRIPT_ESCAPES)


def _e(value) -> str:
    return html.escape(str(value))


def _table(
    headers: list[str],
    rows: list[list],
    numeric: set[int] = frozenset(),
    words: set[int] = frozenset(),
    quiet: list[list] = (),
) -> str:
    """A table; ``words``: columns of names never broken (a setting's); ``quiet``: rows after the others,
    greyed, their cells spanning as given (a site not crawled)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)

    def cell(at, value):
        if at in numeric:
            return f"<td class=n>{_number(value)}</td>"
        return f"<td class=w>{_e(value)}</td>" if at in words else f"<td>{_e(value)}</td>"

    body = "".join("<tr>" + "".join(cell(at, v) for at, v in enumerate(row)) + "</tr>" for row in rows)
    spans = len(headers) - 1
    body += "".join(
        f"<tr class=none><td>{_e(first)}</td><td colspan={spans}>{_e(rest)}</td></tr>" for first, rest in quiet
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _number(value) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if isinstance(value, float) else f"{int(value):,}"


def _chart(svg: str, caption: str) -> str:
    return f"<figure class=chart>{svg}<figcaption class=note>{_e(caption)}</figcaption></figure>"


def _crawl(figures: DayFigures, tz) -> str:
    out = ["<h2 id=crawl>The day's crawl</h2>"]
    if not figures.crawled:
        sites = f" ({', '.join(figures.not_crawled)} hold keywords)" if figures.not_crawled else ""
        out.append(f"<p class=empty>No keyword was crawled on {figures.day}{_e(sites)}.</p>")
        return "".join(out)
    rows = []
    for row in figures.crawl:
        duration = (row["ended"] - row["started"]) if row["started"] and row["ended"] else None
        rows.append(
            [
                row["source"],
                row["keywords"],
                row["completed"],
                row["failed"],
                row["partial"],
                row["crawling"],
                row["pages"],
                row["blocks"],
                row["jobs_found"],
                _claimed(row["started"], figures.day, tz),
                _duration(duration),
            ]
        )
    out.append(
        _table(
            [
                "site",
                "keywords",
                "completed",
                "failed",
                "partial",
                "crawling",
                "pages",
                "blocks",
                "postings found",
                "first claim",
                "duration",
            ],
            rows,
            set(range(1, 9)),
            words={9, 10},
            quiet=[
                [site, f"not crawled on {figures.day}: it holds keywords, none was requested"]
                for site in figures.not_crawled
            ],
        )
    )
    out.append(_chart(charts.crawl_states(figures.crawl), "The day's keywords per site, by how they stand."))
    out.append(_identities(figures))
    if figures.failures:
        out.append(
            "<h3>Failed, and why</h3><p class=note>Each reason on one line, its URLs shortened; the figures "
            "at the end of the page keep it whole.</p>"
        )
        out.append(
            _table(
                ["site", "reason", "keywords"],
                [[r["source"], short_reason(r["reason"]) or "(no message)", r["keywords"]] for r in figures.failures],
                {2},
            )
        )
    return "".join(out)


def _claimed(when, day, tz) -> str:
    """The first claim's time; its date too when it is not the report's day."""
    if when is None:
        return "–"
    local = when.astimezone(tz)
    return local.strftime("%H:%M") if local.date() == day else local.strftime(_TIME)


def _duration(delta) -> str:
    """A crawl's length as people say it: 42 s, 12 min 05 s, 1 h 05 min."""
    if delta is None:
        return "–"
    seconds = max(0, round(delta.total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 10:
        return f"{minutes} min {seconds:02d} s"
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def _postings(figures: DayFigures) -> str:
    out = [
        f"<h2 id=postings>Postings</h2><p class=note>Seen: listed on {figures.day}. New: first seen that day. "
        f"Gone: last seen {figures.gone_after} days before, and not since.</p>"
    ]
    if not figures.postings:
        out.append(f"<p class=empty>No posting was seen on {figures.day}.</p>")
        return "".join(out)
    out.append(
        _table(
            ["site", "seen", "new", "gone"],
            [[r["source"], r["seen"], r["new"], r["gone"]] for r in figures.postings],
            {1, 2, 3},
        )
    )
    out.append(_chart(charts.postings_by_site(figures.postings), "Seen, new and gone postings per site."))
    out.append("<h3>By city</h3>")
    out.append(
        _table(
            ["site", "city", "seen", "new", "gone"],
            [[r["source"], r["city"] or "–", r["seen"], r["new"], r["gone"]] for r in figures.cities],
            {2, 3, 4},
        )
    )
    return "".join(out)


def _new(figures: DayFigures) -> str:
    out = [f"<h2 id=new>New postings per day, the last {figures.days} days</h2>"]
    if not figures.new_per_day:
        out.append("<p class=empty>No posting was first seen in these days.</p>")
        return "".join(out)
    first = figures.first_seen
    before = f" No data before {first}: no crawl had seen a posting." if first and first > figures.chart_days[0] else ""
    out.append(
        _chart(
            charts.new_per_day(figures.chart_days, figures.new_per_day, first),
            f"Postings first seen each day, per site.{before}",
        )
    )
    shown = figures.chart_days[-7:]
    out.append(
        _table(
            ["site", *(day.strftime("%m-%d") for day in shown), f"{figures.days} days"],
            [
                [site, *(None if first and day < first else n for day, n in zip(shown, values[-7:])), sum(values)]
                for site, values in figures.new_per_day.items()
            ],
            set(range(1, 9)),
        )
    )
    return "".join(out)


def _identities(figures: DayFigures) -> str:
    """Each site's identities (its proxies, passwords masked, or ``direct``) as its latest crawl holds them."""
    if not figures.identities:
        return ""
    rows = [
        [
            site["source"],
            i["identity"],
            i["pages"],
            i["blocks"],
            i["sessions"],
            "–" if i["pages_a_session"] is None else f"{i['pages_a_session']:g}",
            "–" if i["pace"] is None else f"{i['pace']:g}",
            i["state"] or "–",
        ]
        for site in figures.identities
        for i in site["identities"]
    ]
    return (
        "<h3>Identities</h3><p class=note>Each site's proxies (passwords masked), or this machine's own address "
        "(direct), as the site's latest crawl holds them: the pages each served, the refusals it drew, the "
        "sessions it earned and the pages a session served, the pace it learned (requests a second) and its "
        "state.</p>"
        + _table(
            ["site", "identity", "pages", "blocks", "sessions", "pages a session", "learned pace/s", "state"],
            rows,
            {2, 3, 4},
            words={1},
        )
    )


def _doors(figures: DayFigures) -> str:
    """How each site's door stood: first, as a wall that holds keywords is what a reader must act on."""
    if not figures.doors:
        return ""
    items = "".join(f"<li>{_e(line)}</li>" for door in figures.doors for line in door["lines"])
    return f"<h2 id=doors>The sites' doors</h2><ul class=doors>{items}</ul>"


def _caps(figures: DayFigures) -> str:
    """Per site and keyword, what the site said it holds against what its page cap let farm take."""
    if not figures.crawled:
        return ""
    out = [
        "<h2 id=caps>What the page caps left behind</h2>"
        "<p class=note>The keywords of the day that their site's page cap (FARM_&lt;SITE&gt;_MAX_PAGES) stopped "
        "while the site said it holds more. A site may serve fewer than it holds (Boss serves 10 pages at most): "
        "docs/sites.md gives each site's own cap.</p>"
    ]
    if not figures.caps:
        out.append("<p class=empty>No keyword was held back by its page cap.</p>")
        return "".join(out)
    out.append(
        _table(
            ["site", "setting", "cap (pages)", "keywords held back", "the sites hold", "farm took", "left behind"],
            [
                [s["source"], s["setting"], s["cap"], s["keywords"], s["site_total"], s["took"], s["left_behind"]]
                for s in figures.caps
            ],
            {2, 3, 4, 5, 6},
            words={1},
        )
    )
    held = sum(s["keywords"] for s in figures.caps)
    out.append("<h3>Keywords held back</h3>")
    if held > len(figures.capped):
        out.append(f"<p class=note>The {len(figures.capped)} that left the most behind, of {held:,}.</p>")
    out.append(
        _table(
            ["site", "city", "keyword", "the site holds", "farm took", "left behind"],
            [[k["source"], k["city"], k["job"], k["site_total"], k["took"], k["left_behind"]] for k in figures.capped],
            {3, 4, 5},
        )
    )
    return "".join(out)


def _salary(figures: DayFigures) -> str:
    out = [
        "<h2 id=salary>Salaries by keyword and city</h2>"
        f"<p class=note>The monthly midpoint of each posting seen on {figures.day} that gives both ends of its "
        "range, in CNY; n is how many postings each figure rests on.</p>",
        _salary_basis(figures),
    ]
    unread = _salary_unread(figures)
    if not figures.salary:
        out.append("<p class=empty>No posting seen that day gives a salary range.</p>")
        return "".join(out) + unread
    out.append(_chart(charts.salary_ranges(figures.salary), "First quartile, median and third quartile."))
    out.append(
        _table(
            ["keyword", "city", "n", "first quartile", "median", "third quartile"],
            [[r["job"], r["city"] or "–", r["n"], r["q1"], r["median"], r["q3"]] for r in figures.salary],
            {2, 3, 4, 5},
        )
    )
    return "".join(out) + unread


def _salary_basis(figures: DayFigures) -> str:
    """Which pay the figures rest on: monthly pay alone, or every period by the factors named."""
    if figures.salary_conversion:
        return (
            "<p class=note id=salary-basis>Pay by the day, the hour and the year converted (FARM_SALARY_CONVERT): "
            f"{_e(figures.salary_conversion)}.</p>"
        )
    return (
        "<p class=note id=salary-basis>Monthly pay only: postings paid by the day, the hour or the year are left "
        "out (FARM_SALARY_CONVERT=1 converts them, by the factors it names).</p>"
    )


def _salary_unread(figures: DayFigures) -> str:
    """Per site, the share of the day's postings whose salary text no rule reads."""
    if not figures.salary_unread:
        return ""
    rows = [
        [r["source"], r["seen"], r["unread"], f"{100 * r['unread'] / r['seen']:.1f}%" if r["seen"] else "–"]
        for r in figures.salary_unread
    ]
    return (
        "<h3 id=salary-unread>Salary texts no rule reads</h3><p class=note>Postings seen that day whose salary "
        "text farm does not read: they count in no figure above.</p>"
        + _table(["site", "seen", "salary unread", "share"], rows, {1, 2})
    )


def _companies(figures: DayFigures) -> str:
    out = ["<h2 id=companies>Top companies by new postings</h2>"]
    if not figures.companies:
        out.append(f"<p class=empty>No posting was first seen on {figures.day}.</p>")
        return "".join(out)
    out.append(_chart(charts.top_companies(figures.companies), f"Postings first seen on {figures.day}."))
    out.append(_table(["company", "new"], [[r["company"], r["new"]] for r in figures.companies], {1}))
    return "".join(out)
