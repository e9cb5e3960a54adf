"""`farm sandbox` / `python -m farm.sandbox`: start the sandbox and say where it listens.

The one line `farm sandbox listening on http://HOST:PORT` is printed (and flushed) only once the socket
accepts connections, so a parent process can wait for it instead of sleeping.
"""

import asyncio
import signal

import click

from farm.sites import named, register_packages, sites

from .faults import FaultConfig, all_kinds, default_kinds, descriptions
from .outage import Outage
from .server import Sandbox, start
from .sites import site_modules, wall_shapes, walled_sites
from .strangewalls import FORMS as STRANGE_FORMS
from .strangewalls import StrangeConfig
from .walls import WallConfig


def _postings(ctx, param, value):
    if value is None:
        return None
    try:
        lo, hi = (int(v) for v in value.split(":"))
    except ValueError:
        raise click.BadParameter(f"expected MIN:MAX such as 200:200, not {value!r}") from None
    if not 0 <= lo <= hi:
        raise click.BadParameter(f"need 0 <= MIN <= MAX, not {lo}:{hi}")
    return lo, hi


def _fail_keywords(ctx, param, values):
    result = {}
    for value in values:
        keyword, sep, kind = value.rpartition("=")
        if not sep or not keyword:
            raise click.BadParameter(f"expected KEYWORD=KIND such as python=http500, not {value!r}")
        if kind not in all_kinds():
            raise click.BadParameter(f"unknown fault kind {kind!r} (see the list below)")
        result[keyword] = kind
    return result


def _kinds(ctx, param, value):
    if not value:
        return default_kinds()
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    known = all_kinds()
    unknown = [k for k in kinds if k not in known]
    if unknown:
        raise click.BadParameter(f"unknown fault kind(s) {', '.join(unknown)} (see the list below)")
    return kinds


def _wall_sites(ctx, param, value):
    if value is None:
        return None
    sites = tuple(s.strip() for s in value.split(",") if s.strip())
    known = walled_sites()
    unknown = [s for s in sites if s not in known]
    if unknown:
        raise click.BadParameter(f"unknown site(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return sites


def _zero_sites() -> str:
    """The sites whose page 1 may say it holds nothing (their imitation's STALE_VARIANTS)."""
    return named(name for name, mod in site_modules().items() if "zero" in getattr(mod, "STALE_VARIANTS", ()))


EPILOG = (
    "\b\nFault kinds:\n"
    + "\n".join(f"  {kind:<16}{text}" for kind, text in descriptions().items())
    + f"""

\b
Stale totals (--stale-totals; chosen per keyword by a hash of fault seed, site, city, keyword):
  under           page 1 says about half the results (still 2+ pages when there are); a site paged by
                  hasMore alone still says there is more
  over            page 1 says about double (capped as the site caps); a site paged by hasMore alone says
                  there is more on its last real page too
  zero            {_zero_sites()} only: page 1 says 0 pages and 0 results beside its postings
  Later pages tell the truth; /_sandbox/truth names each keyword's variant ("stale").

\b
Hostile postings (--hostile-rate; chosen per posting by a hash of fault seed, site, posting id):
  publish times 0001-01-01 / 9999-12-31 / 2026-02-30 25:61:00 / "" / garbage (in epoch ms: ±2**70 and the
  like); text fields of 300-3000 emoji, CJK Ext B and combining marks, or with NUL, ESC, U+202E, newline,
  tab; tag lists of numbers, null, nested lists and objects; 2**70, -2**70, ±1e308 in raw-only numbers;
  an object nested 120 deep. Each site's sandbox.py names its fields (its IMITATION's hostile).

\b
Walls (--walls; docs/sites.md §4.6): only a client that runs the wall page's script, or computes what it
computes (farm/sandbox/walltoken.py), earns a session, for its User-Agent alone:
"""
    + "\n".join(f"  {name:<9}{shape.summary}" for name, shape in wall_shapes().items())
    + """
  A session ends --session-seconds after its challenge was served or after --session-requests requests.
  Slider keywords and --slider-rate draws get a slider page that no client passes."""
)


def _help() -> str:
    """The command's help, naming the sites it serves (farm.sites)."""
    served = [site for site in sites() if site.sandbox]
    keys = named(f"FARM_{site.name.upper()}_BASE_URL" for site in served)
    # its first line is `farm --help`'s line for it (farm.cli's LAZY_HELP)
    return f"""Serve {named(site.title for site in served)} search pages from generated postings, on one port.

    Point {keys} at the printed URL.
    Control endpoints live under /_sandbox/ (health, counts, reset, truth, faults, outage, walls, requests).
    POST /_sandbox/outage {{"seconds": S}} starts an outage now; GET /_sandbox/outage shows it.
    A site package of a project's own is served with --site-package.
    """


def _site_packages(ctx, param, values):
    try:
        return register_packages(values)  # before the app is made: its routes are the registry's sites'
    except (ImportError, ValueError) as exc:
        raise click.BadParameter(str(exc)) from None


@click.command(epilog=EPILOG, help=_help())
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option(
    "--port", default=8780, show_default=True, type=click.IntRange(0, 65535), help="Port; 0 picks a free one."
)
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the generated postings.")
@click.option(
    "--postings",
    callback=_postings,
    metavar="MIN:MAX",
    help="Range of per-keyword posting totals (200:200 gives every keyword 200). "
    "Default: a realistic spread from 0 to past every site's page cap.",
)
@click.option(
    "--fault-rate",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Share of search requests that fail.",
)
@click.option(
    "--fault-kinds",
    callback=_kinds,
    metavar="KIND,KIND",
    help="Fault kinds to draw from (default all but the opt-in ones); each hits only the sites it belongs to.",
)
@click.option("--fault-seed", default=0, show_default=True, type=int, help="Seed of the fault draws.")
@click.option(
    "--fail-keyword",
    "fail_keywords",
    multiple=True,
    callback=_fail_keywords,
    metavar="KEYWORD=KIND",
    help="This keyword (or site:keyword) always fails with KIND. Repeatable.",
)
@click.option("--slow-ms", default=1500, show_default=True, type=click.IntRange(0), help="Delay of the 'slow' fault.")
@click.option(
    "--retry-after",
    default=1,
    show_default=True,
    type=click.IntRange(0),
    help="Retry-After seconds of the 'http429' fault.",
)
@click.option(
    "--stale-totals",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    metavar="RATE",
    help="Share of keywords whose page 1 reports stale totals (under, over, zero; see below); "
    "later pages tell the truth.",
)
@click.option(
    "--hostile-rate",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    metavar="RATE",
    help="Share of postings whose fields carry hostile values (see below); ids stay the same.",
)
@click.option(
    "--outage-after-pages",
    type=click.IntRange(1),
    metavar="N",
    help="Once N search pages have been served, drop every search connection for --outage-seconds.",
)
@click.option(
    "--outage-seconds",
    type=click.FloatRange(0, 86400, max_open=True),
    metavar="S",
    help="Length of the --outage-after-pages outage.",
)
@click.option("--walls", is_flag=True, help="Put each site behind its wall (see below).")
@click.option(
    "--wall-sites", callback=_wall_sites, metavar="SITE,SITE", help="With --walls: the walled sites (default all)."
)
@click.option("--wall-seed", type=int, help="With --walls: seed of the challenges and slider draws (default 0).")
@click.option(
    "--session-seconds",
    type=click.FloatRange(0, min_open=True),
    metavar="S",
    help="With --walls: a session's life from its challenge (default 120).",
)
@click.option(
    "--session-requests",
    type=click.IntRange(1),
    metavar="N",
    help="With --walls: requests a session answers (default 60).",
)
@click.option(
    "--slider-rate",
    type=click.FloatRange(0, 1),
    metavar="RATE",
    help="With --walls: share of security-page visits (or challenges, on a wall without one) that get a slider "
    "(default 0).",
)
@click.option(
    "--slider-keyword",
    "slider_keywords",
    multiple=True,
    metavar="KW|SITE:KW",
    help="With --walls: this keyword (or site:keyword) always meets a slider. Repeatable.",
)
@click.option(
    "--strange-walls",
    "strange_forms",
    metavar="FORM,FORM",
    help="Put each site behind walls in shapes no spider names, in these forms in turn (reload, refresh, form, "
    "chain, stay; 'all' for every one): farm/sandbox/strangewalls.py. POST /_sandbox/strangewalls sets the rest.",
)
@click.option(
    "--site-package",
    "site_packages",
    multiple=True,
    is_eager=True,  # registered before the fault kinds and wall sites given are checked against the registry
    callback=_site_packages,
    metavar="PACKAGE",
    help="Serve the site package PACKAGE too (its SITE names its imitation, docs/addon.md); may be given again.",
)
def sandbox(
    host,
    port,
    seed,
    postings,
    fault_rate,
    fault_kinds,
    fault_seed,
    fail_keywords,
    slow_ms,
    retry_after,
    stale_totals,
    hostile_rate,
    outage_after_pages,
    outage_seconds,
    walls,
    wall_sites,
    wall_seed,
    session_seconds,
    session_requests,
    slider_rate,
    slider_keywords,
    strange_forms,
    site_packages,
):
    """The sandbox, with the flags' faults, outage and walls (the help: _help)."""
    if (outage_after_pages is None) != (outage_seconds is None):
        raise click.UsageError("--outage-after-pages and --outage-seconds go together")
    faults = FaultConfig(
        fault_rate, fault_seed, fault_kinds, fail_keywords, slow_ms, retry_after, stale_totals, hostile_rate
    )
    outage = Outage(outage_after_pages, outage_seconds or 0.0)
    wall_options = {
        ("sites", "--wall-sites"): wall_sites,
        ("seed", "--wall-seed"): wall_seed,
        ("session_seconds", "--session-seconds"): session_seconds,
        ("session_requests", "--session-requests"): session_requests,
        ("slider_rate", "--slider-rate"): slider_rate,
        ("slider_keywords", "--slider-keyword"): slider_keywords or None,
    }
    given = {key: value for key, value in wall_options.items() if value is not None}
    if given and not walls:
        raise click.UsageError(f"{next(iter(given))[1]} needs --walls")
    wall_config = WallConfig(**{name: value for (name, _), value in given.items()}) if walls else None
    strange = None
    if strange_forms:
        forms = STRANGE_FORMS if strange_forms == "all" else tuple(strange_forms.split(","))
        try:
            strange = StrangeConfig(forms=forms)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--strange-walls") from None
    asyncio.run(_serve(Sandbox(seed, postings, faults, outage, wall_config, strange=strange), host, port))


async def _serve(box, host, port):
    runner, port = await start(box, host, port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    click.echo(f"farm sandbox listening on http://{host}:{port}")
    click.get_text_stream("stdout").flush()
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
