"""The report's charts, drawn by matplotlib and returned as inline SVG text.

Text stays text in the SVG (``svg.fonttype: none``): the browser draws it with
its own fonts, so Chinese city and company names show in any browser that has
a CJK font, and matplotlib needs none. Each chart salts matplotlib's element ids
with its own name, so that several charts inline on one page never share an id,
and the same figures give the same SVG. Every label is data from users and sites, never
matplotlib's math: ``text.parse_math`` is off, so ``$x$`` is drawn as the four characters.
"""

import io
import re
import warnings
from contextlib import contextmanager

import matplotlib

matplotlib.use("Agg")  # no display: files only

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from farm.sites import find

STYLE = {
    "svg.fonttype": "none",
    "font.family": ["sans-serif"],
    "font.sans-serif": [
        "DejaVu Sans",
        "Noto Sans CJK SC",
        "WenQuanYi Micro Hei",
        "PingFang SC",
        "Microsoft YaHei",
        "sans-serif",
    ],
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.image_inline": True,
    "text.parse_math": False,  # a keyword "$5-$10" or "$\\alpha$开发" is text, not a formula
}
_PROLOG = re.compile(r"^.*?(?=<svg)", re.DOTALL)


def site_colour(source: str) -> str | None:
    """A site's colour, as its record names it (farm.sites); None: the charts' next colour."""
    site = find(source)
    return None if site is None else site.colour


@contextmanager
def _figure(name: str, width: float, height: float):
    with plt.rc_context({**STYLE, "svg.hashsalt": name}), warnings.catch_warnings():
        # matplotlib measures CJK text with fonts that may lack its glyphs; the browser draws it
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        figure, axes = plt.subplots(figsize=(width, height), layout="constrained")
        try:
            yield figure, axes
        finally:
            plt.close(figure)


def _svg(figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return _PROLOG.sub("", buffer.getvalue(), count=1)


def crawl_states(crawl: list[dict]) -> str:
    """The day's keywords per site, stacked by how they ended."""
    with _figure("crawl", 6.4, 2.4) as (figure, axes):
        sites = [row["source"] for row in crawl]
        left = [0] * len(sites)
        for state, colour in (
            ("completed", "#2b8a3e"),
            ("partial", "#f59f00"),
            ("failed", "#c92a2a"),
            ("crawling", "#868e96"),
        ):
            values = [int(row[state]) for row in crawl]
            axes.barh(sites, values, left=left, color=colour, label=state)
            left = [a + b for a, b in zip(left, values)]
        axes.invert_yaxis()
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_xlabel("keywords")
        axes.legend(ncols=4, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
        return _svg(figure)


def new_per_day(days: list, counts: dict[str, list[int]], first=None) -> str:
    """New postings per day, one line per site; the days before ``first`` (the first posting ever seen)
    drawn as no data, a grey band, not as days of none."""
    with _figure("new-per-day", 6.4, 2.6) as (figure, axes):
        for source, values in counts.items():
            shown = [None if first is not None and day < first else n for day, n in zip(days, values)]
            axes.plot(days, shown, marker=".", label=source, color=site_colour(source))
        if first is not None and first > days[0]:
            axes.axvspan(days[0], min(first, days[-1]), color="#e9ecef", zorder=0)
            axes.text(days[0], 0.5, " no data", transform=axes.get_xaxis_transform(), color="#6c757d", va="center")
        axes.set_ylabel("new postings")
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_ylim(bottom=0)
        axes.legend(frameon=False)
        figure.autofmt_xdate()
        return _svg(figure)


def postings_by_site(postings: list[dict]) -> str:
    """Seen, new and gone postings per site, side by side."""
    with _figure("postings", 6.4, 2.4) as (figure, axes):
        sites = [row["source"] for row in postings]
        width = 0.27
        for at, (figure_name, colour) in enumerate((("seen", "#1c7ed6"), ("new", "#2b8a3e"), ("gone", "#868e96"))):
            axes.bar(
                [x + (at - 1) * width for x in range(len(sites))],
                [int(row[figure_name]) for row in postings],
                width,
                label=figure_name,
                color=colour,
            )
        axes.set_xticks(range(len(sites)), sites)
        axes.set_ylabel("postings")
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.legend(ncols=3, frameon=False)
        return _svg(figure)


def salary_ranges(salary: list[dict]) -> str:
    """Per (job, city): the box from the first to the third quartile, the median across it."""
    rows = salary[:15]
    with _figure("salary", 6.4, 0.9 + 0.28 * len(rows)) as (figure, axes):
        stats = [
            {
                "label": f"{row['job']} · {row['city']} (n={row['n']})",
                "med": row["median"],
                "q1": row["q1"],
                "q3": row["q3"],
                "whislo": row["q1"],
                "whishi": row["q3"],
            }
            for row in rows
        ]
        axes.bxp(
            stats,
            orientation="horizontal",
            showfliers=False,
            patch_artist=True,
            boxprops={"facecolor": "#d0ebff", "edgecolor": "#1c7ed6"},
            medianprops={"color": "#c92a2a"},
        )
        axes.invert_yaxis()
        axes.set_xlabel("CNY a month (midpoint of the range)")
        return _svg(figure)


def top_companies(companies: list[dict]) -> str:
    with _figure("companies", 6.4, 0.6 + 0.25 * len(companies)) as (figure, axes):
        axes.barh([row["company"] for row in companies], [int(row["new"]) for row in companies], color="#1c7ed6")
        axes.invert_yaxis()
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_xlabel("new postings")
        return _svg(figure)
