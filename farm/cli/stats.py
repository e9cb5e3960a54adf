"""`farm stats`: the day's keywords per source, pages, the recent rate and an ETA; --watch redraws them."""

import json
from datetime import date, datetime

import click
from sqlalchemy.exc import DBAPIError

import farm.cli.repeat as repeat
from farm.cli.context import Farm, SourceChoice, database_command, date_option, reason
from farm.cli.tables import render_table
from farm.state import caps, doors, identities, tallies
from farm.state.clock import today
from farm.state.store import KeywordStore

# the longest --window (a year of minutes) and --interval (a day): beyond, dates overflow
MAX_WINDOW = 366 * 24 * 60
MAX_INTERVAL = 24 * 3600


class FiniteRange(click.FloatRange):
    """A number from ``lo`` to ``hi``; nan and inf refused (FloatRange lets nan through)."""

    def __init__(self, lo: float, hi: float):
        super().__init__(min=lo, max=hi)

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if number != number:  # nan compares false with every bound
            self.fail(f"{value!r} is not a number from {self.min:g} to {self.max:g}", param, ctx)
        return number


STAT_COLUMNS = ["total", "used", "unused", "crawling", "completed", "failed", "partial", "pages", "jobs found"]
RATE_COLUMNS = ["done", "left", "crawled", "keywords/min", "pages/min"]


@click.command()
@click.option("--source", type=SourceChoice(), help="Only this site (a site of the project's own too).")
@date_option("The day to report. [default: today in FARM_TIMEZONE]")
@click.option("--json", "as_json", is_flag=True, help="Print the stats as one JSON document.")
@click.option(
    "--window",
    type=FiniteRange(0.1, MAX_WINDOW),
    default=tallies.DEFAULT_WINDOW_MINUTES,
    show_default=True,
    metavar="MINUTES",
    help="The recent rate counts the keywords that ended in the last MINUTES.",
)
@click.option("--watch", is_flag=True, help="Refresh in place every --interval seconds until Ctrl+C.")
@click.option(
    "--interval",
    type=FiniteRange(0.2, MAX_INTERVAL),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between refreshes of --watch.",
)
@database_command
def stats(
    farm_ctx: Farm,
    source: str | None,
    day: date | None,
    as_json: bool,
    window: float = 10.0,
    watch: bool = False,
    interval: float = 5.0,
):
    """Keywords used, unused and in each state for one day, per source, with
    pages, the recent rate and an ETA.

    \b
    pages        the sum of the day's page watermarks (last_completed_page):
                 pages recorded done, in order from page 1
    jobs found   postings found by the day's keywords (a posting found by two
                 keywords counts twice; job_posting stores it once)
    done, left   done: completed, or failed with no claim left today (retries
                 or block claims used up); left: every other keyword
    crawled      the time of the last --window the site's crawls ran (from a
                 run's start to its end, or to now while it is alive): a crawl
                 of 5 s is a rate over 5 s
    keywords/min keywords that ended (completed or failed) in the last --window
                 minutes, by the time of their last write (updated_at), per
                 minute crawled
    pages/min    the pages of those keywords, per minute crawled
    ETA          now + left / keywords/min; "-" when no keyword ended lately
                 or no crawler of the site is alive

    With --watch, "pages/min now" is the change in pages between the last two
    refreshes. --json adds pages, done, remaining, recent {window, minutes,
    spans, keywords, pages, keywords_per_minute, pages_per_minute},
    crawlers_alive, eta (ISO time, or null) and eta_seconds to each source's
    {"date", "source", "total", "used", "unused", "crawl_status", "jobs_found"}, and salary {seen, unread}: the postings
    seen that day and those whose salary text no rule reads.

    \b
    page caps    per source, the completed keywords whose FARM_<SITE>_MAX_PAGES
                 stopped them while the site said it holds more (its own count),
                 what the site holds, what farm took and the difference; --json
                 adds them as caps {setting, cap, keywords, site_total, took,
                 left_behind, capped: [{city, job, site_total, took,
                 left_behind}]}

    \b
    identities   per source, each identity (a proxy, its password masked, or
                 this machine's own address: direct) as the site's latest
                 crawl holds it, a running one within a second: pages,
                 refusals it drew, sessions it earned, pages a session, the
                 pace it learned (requests a second) and its state (working,
                 cooling, quarantined), and that crawl (ended, running, or
                 gone: killed before its end); --json adds them as identities {run,
                 status, ended_at (null while it runs), identities:
                 [{identity, pages, blocks, sessions, session_pages,
                 pages_a_session, pace, state}]}, or null
    """
    store = farm_ctx.store(read_only=True)
    limits = tallies.Limits(farm_ctx.config.max_retries, farm_ctx.config.max_blocked_claims)
    if source is None:
        farm_ctx.sources()  # the project's own sites registered (farm.sites), to be counted after the three

    def sample():
        now = store.clock()
        shown = day or today(now, store.tz)
        rows = [row for name in _sites(store, source) for row in store.stats(source=name, day=shown)]
        rows = tallies.progress(
            store.reader,
            rows,
            now=now,
            tz=store.tz,
            limits=limits,
            window_minutes=window,
            lease_timeout=farm_ctx.config.lease_timeout,
            reap_interval=farm_ctx.config.reap_interval,
        )
        unread = tallies.salary_unread(store.reader, date.fromisoformat(rows[0]["date"]), store.tz) if rows else {}
        for row in rows:
            row["salary"] = unread.get(row["source"], {"seen": 0, "unread": 0})
        return now, _with_identities(store, _with_doors(store, _with_caps(farm_ctx, store, rows)))

    if watch:
        if as_json:
            raise click.UsageError("--watch draws a table; for JSON, run `farm stats --json` at intervals")
        _watch(farm_ctx, store, sample, interval, window)
        return
    now, rows = sample()
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    click.echo(_stats_text(farm_ctx, store, now, rows, window))


def _sites(store: KeywordStore, source: str | None) -> list[str]:
    """``source``, or every site: farm's three, the project's own, then any other the keyword table holds."""
    if source is not None:
        return [source]
    with store.reader.connect() as conn:
        return tallies.sources(conn)


def _watch(farm_ctx: Farm, store: KeywordStore, sample, interval: float, window: float) -> None:
    """Draw the stats every ``interval`` seconds (in place on a terminal) until Ctrl+C, which exits 0."""
    tty = click.get_text_stream("stdout").isatty()
    before = None

    def draw():
        nonlocal before
        try:
            now, rows = sample()
        except DBAPIError as exc:  # a database gone for a moment: say so, and try again
            click.echo(f"database error at {farm_ctx.masked_url}: {reason(exc)}; trying again in {interval:g}s")
            return
        text = _stats_text(farm_ctx, store, now, rows, window, before)
        heading = f"farm stats every {interval:g}s (Ctrl+C to stop), {now.astimezone(store.tz):%H:%M:%S}"
        # on a terminal: cursor home, clear, redraw; in a pipe or a file: one frame after another
        click.echo(("\x1b[H\x1b[2J" if tty else "") + heading + "\n" + text + ("" if tty else "\n"))
        before = (now, rows)

    repeat.every(interval, draw)
    click.echo()


def _stats_text(
    farm_ctx: Farm,
    store: KeywordStore,
    now: datetime,
    rows: list[dict],
    window: float,
    before: tuple[datetime, list[dict]] | None = None,
) -> str:
    shown = rows[0]["date"] if rows else today(now, store.tz).isoformat()
    lines = [f"keywords on {shown} ({farm_ctx.config.timezone})"]
    door_lines = [line for r in rows for line in r["door"]["lines"]]
    if door_lines:  # a wall that holds keywords first: it is what a user must act on
        lines = ["the sites' doors", *door_lines, "", *lines]
    all_rows = rows + ([tallies.total(rows, now, store.tz)] if len(rows) > 1 else [])
    body = [[r["source"], *_stat_values(r)] for r in all_rows]
    lines.append(render_table(["source", *STAT_COLUMNS], body, right=set(STAT_COLUMNS)))
    lines.append("")
    lines.append(
        f"the last {window:g} minutes: keywords ended (completed or failed) and their pages, per minute crawled"
    )
    columns = RATE_COLUMNS + (["pages/min now"] if before is not None else []) + ["ETA"]
    earlier = {r["source"]: r for r in before[1]} if before is not None else {}
    if before is not None and all_rows and len(all_rows) > len(rows):
        earlier["all"] = tallies.total(before[1], before[0], store.tz)
    body = []
    for r in all_rows:
        recent = r["recent"]
        cells = [
            r["source"],
            r["done"],
            r["remaining"],
            _crawled(recent),
            f"{recent['keywords_per_minute']:.1f}",
            f"{recent['pages_per_minute']:.1f}",
        ]
        if before is not None:
            cells.append(_sampled_rate(earlier.get(r["source"]), before[0], r, now))
        cells.append(_eta_text(r, now, store))
        body.append(cells)
    lines.append(render_table(["source", *columns], body, right=set(columns) - {"ETA"}))
    lines.append("")
    lines.append(f"postings seen on {shown} and their salary texts no rule reads")
    body = [[r["source"], r["salary"]["seen"], r["salary"]["unread"], _share(r["salary"])] for r in rows]
    lines.append(render_table(["source", "seen", "salary unread", "share"], body, right={"seen", "salary unread"}))
    lines += _caps_text(rows, shown)
    lines += _identities_text(rows)
    return "\n".join(lines)


def _with_caps(farm_ctx: Farm, store: KeywordStore, rows: list[dict]) -> list[dict]:
    """The rows with what each source's page cap left behind that day (farm.state.caps)."""
    with store.reader.connect() as conn:
        return caps.attach(conn, rows, caps.site_caps(farm_ctx.settings, [row["source"] for row in rows]))


def _with_doors(store: KeywordStore, rows: list[dict]) -> list[dict]:
    """The rows with how each source's door stood that day (farm.state.doors): walls, sessions, refusals."""
    if not rows:
        return rows
    shown = date.fromisoformat(rows[0]["date"])
    with store.reader.connect() as conn:
        found = doors.doors(conn, [row["source"] for row in rows], shown, store.tz)
    for row in rows:
        door = found[row["source"]]
        row["door"] = {**door.to_json(), "lines": door.lines(row["remaining"], store.tz)}
    return rows


def _with_identities(store: KeywordStore, rows: list[dict]) -> list[dict]:
    """The rows with each source's identities as its latest crawl holds them (farm.state.identities)."""
    with store.reader.connect() as conn:
        found = identities.site_identities(conn, [row["source"] for row in rows])
    for row in rows:
        row["identities"] = found.get(row["source"])
    return rows


def _identities_text(rows: list[dict]) -> list[str]:
    body = [
        [
            r["source"],
            i["identity"],
            i["pages"],
            i["blocks"],
            i["sessions"],
            "-" if i["pages_a_session"] is None else f"{i['pages_a_session']:g}",
            "-" if i["pace"] is None else f"{i['pace']:g}",
            i["state"] or "-",
            _crawl_state(r),
        ]
        for r in rows
        if r.get("identities")
        for i in r["identities"]["identities"]
    ]
    if not body:
        return []
    columns = ["source", "identity", "pages", "blocks", "sessions", "pages/session", "pace/s", "state", "crawl"]
    heading = (
        "identities as each site's latest crawl holds them: pages, refusals drawn, sessions earned, "
        "pages a session, learned pace, state"
    )
    return ["", heading, render_table(columns, body, right={"pages", "blocks", "sessions", "pages/session", "pace/s"})]


def _crawl_state(row: dict) -> str:
    """The crawl the identities come from: ended, running, or gone (no end and no crawler of its site alive:
    killed before its close, its row holds what it noted last)."""
    if row["identities"]["ended_at"] is not None:
        return "ended"
    return "running" if row.get("crawlers_alive") else "gone"


def _caps_text(rows: list[dict], shown: str) -> list[str]:
    lines = caps.summary_lines(rows)
    if not lines:
        return []
    return ["", f"page caps on {shown}: what the sites said they hold beyond what the caps let farm take", *lines]


def _share(salary: dict) -> str:
    return f"{100 * salary['unread'] / salary['seen']:.1f}%" if salary["seen"] else "-"


def _sampled_rate(earlier: dict | None, then: datetime, row: dict, now: datetime) -> str:
    """Pages per minute between two samples of the same day, or "-"."""
    seconds = (now - then).total_seconds()
    if earlier is None or earlier["date"] != row["date"] or seconds <= 0 or row["pages"] < earlier["pages"]:
        return "-"
    return f"{(row['pages'] - earlier['pages']) * 60 / seconds:.1f}"


def _crawled(recent: dict) -> str:
    """The time the site's crawls ran within the window: seconds under a minute, else minutes."""
    if not recent["spans"]:
        return "-"
    minutes = recent["minutes"]
    return f"{minutes * 60:.0f} s" if minutes < 1 else f"{minutes:.1f} min"


def _eta_text(row: dict, now: datetime, store: KeywordStore) -> str:
    if row["remaining"] == 0:
        return "done"
    if not row["crawlers_alive"]:
        return "no crawler"
    if row["eta"] is None:
        return "-"
    finish = datetime.fromisoformat(row["eta"])
    hours, rest = divmod(row["eta_seconds"], 3600)
    when = f"{finish:%H:%M}" if finish.date() == now.astimezone(store.tz).date() else f"{finish:%m-%d %H:%M}"
    return f"{when} (in {hours}h{rest // 60:02d}m)"


def _stat_values(row: dict) -> list[int]:
    status = row["crawl_status"]
    return [
        row["total"],
        row["used"],
        row["unused"],
        status["crawling"],
        status["completed"],
        status["failed"],
        status["partial"],
        row["pages"],
        row["jobs_found"],
    ]
