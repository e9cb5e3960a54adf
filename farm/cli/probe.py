"""`farm probe [SITE...]`: one real search per site from this machine, and what it met (farm.probe)."""

import json
from pathlib import Path

import click

from farm.cli.context import Farm
from farm.cli.stats import FiniteRange
from farm.errors import KeywordError
from farm.probe.plan import PROBE_JOB, Probe, default_city
from farm.state.validation import validate_keyword


@click.command()
@click.argument("sites", nargs=-1, metavar="[SITE]...")
@click.option("--city", help="The city searched on every site probed. [default: 北京, else the site's first city]")
@click.option("--job", default=PROBE_JOB, show_default=True, help="The job keyword searched.")
@click.option(
    "--timeout",
    type=FiniteRange(5, 3600),
    default=90,
    show_default=True,
    help="Seconds a site's probe may take, start to end (the sites are probed at once).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object a site, in a list.")
@click.option(
    "--each-proxy",
    is_flag=True,
    help="Probe each site through each proxy of FARM_PROXIES (each identity) and say which to drop.",
)
@click.option("--log-dir", type=click.Path(file_okay=False), help="Keep each probe's crawl log here, as SITE.log.")
@click.pass_obj
def probe(
    farm_ctx: Farm,
    sites: tuple[str, ...],
    city: str | None,
    job: str,
    timeout: float,
    as_json: bool,
    log_dir,
    each_proxy: bool = False,
):
    """One real search per site, through the same stack as a crawl, and what it met.

    Each SITE (default: every site the project crawls, farm's three and its own) is searched once, for page 1 of
    one keyword, by a real crawl of its spider with this machine's settings (FARM_<SITE>_BASE_URL, the
    proxies, the browser), into a throwaway database: farm's database and Redis are not touched. One line
    a site says what it met, and the setting that changes it. With --each-proxy each site is searched
    through each proxy of FARM_PROXIES (each identity), one line each, and the proxies that failed where
    others got through are named to drop. Exit status 0 when every probe is ok, else 1.
    """
    known = farm_ctx.sources()
    for site in sites:
        if site not in known:
            raise click.BadParameter(f"unknown site {site!r} (expected one of: {', '.join(known)})", param_hint="SITE")
    probes = []
    for site in dict.fromkeys(sites or crawlable(farm_ctx.settings, known)):
        try:
            _, place, keyword = validate_keyword(site, city if city is not None else default_city(site), job)
        except KeywordError as exc:
            raise click.BadParameter(str(exc), param_hint="--city/--job") from None
        if each_proxy and farm_ctx.config.proxies:
            for index, proxy in enumerate(farm_ctx.config.proxies):
                probes.append(Probe(site, place, keyword, timeout, index, proxy.label))
        else:
            probes.append(Probe(site, place, keyword, timeout))
    if not as_json:
        searched = ", ".join(dict.fromkeys(f"{p.site} {p.city}/{p.job}" for p in probes))
        if each_proxy:
            searched += f", through each of {len(farm_ctx.config.proxies)} proxies"
        click.echo(f"probing {searched}: at most {timeout:g} s ...", err=True)
    from farm.probe.runner import run_probes  # not before: it starts processes

    verdicts = run_probes(probes, Path(log_dir) if log_dir else None)
    if as_json:
        click.echo(json.dumps([v.as_json() for v in verdicts], ensure_ascii=False, indent=2))
    else:
        width = max(8, *(len(v.named) for v in verdicts))
        for verdict in verdicts:
            click.echo(verdict.line(width))
        drop = [v.identity for v in verdicts if v.identity and not v.ok]
        if drop and any(v.identity and v.ok for v in verdicts):  # others got through: these proxies are the trouble
            click.echo(f"drop from FARM_PROXIES: {', '.join(dict.fromkeys(drop))}")
    if not all(v.ok for v in verdicts):
        raise click.exceptions.Exit(1)


def crawlable(settings, sources: tuple[str, ...]) -> list[str]:
    """The sources the project has a spider for, as `scrapy crawl` finds them (a project that turns farm on
    with its add-on may crawl its own sites alone)."""
    from scrapy.spiderloader import get_spider_loader

    spiders = set(get_spider_loader(settings).list())
    return [source for source in sources if source in spiders]
