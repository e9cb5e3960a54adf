"""What a probe met, as one line and the setting that changes it: a pure function of the child's report.

The report (farm.probe.child) holds the crawl's stats, the keyword's end and what the log told of the
walls. The verdict is that of the first rule that holds, in this order:

- ``ok``: page 1 was done: how many postings, and how farm got them (plain with a browser's fingerprint,
  or through a wall the browser passed, in how many seconds);
- ``error``: the probe could not run (a bad setting, a crawl that could not start);
- ``slider``: a wall farm does not pass (a slider, a captcha), whatever the browser did;
- ``wall``: a wall the browser should pass and did not (no browser, none allowed, out of time);
- ``blocked``: the site refused the sessions the browser earned;
- ``no network``: no answer at all (a refused connection, a timeout, an unknown host, a proxy unreachable);
  ``site trouble``: server errors;
- ``refused``: an answer farm does not understand (docs/sites.md says what each site answers), or a 404;
  ``blocked``: any other block (HTTP 403/429, a site's own refusal code);
- ``timeout``: the crawl ran out of time with none of the above;
- ``failed``: the keyword ended otherwise (its error as stored).
"""

import re
from dataclasses import asdict, dataclass, field

from farm.display import escape, without_secrets
from farm.sites import sites

# block shapes of a wall no client passes (the spiders' names: qcwy_waf_slider, zhilian_captcha), and
# each site's own (its record's slider_shapes: boss_35)
SLIDER_WORDS = ("slider", "captcha")
# block shapes of an answer farm does not understand (LeaseSpider.refusal's), and the starts of each
# site's own (its record's unread_shapes: boss_code_)
NOT_UNDERSTOOD_ENDS = ("_unrecognised", "_empty_page", "_html", "_shell", "_blank_page")
BLOCKS = "farm/block/"
NOT_SHAPES = ("count", "gave_up")  # farm/block/ stats that are no shape
EXCEPTIONS = "downloader/exception_type_count/"
STATUSES = "downloader/response_status_count/"
UNAVAILABLE = "site unavailable: "  # how a keyword ended by SiteUnavailable (farm.middlewares.blocks) stores it
# the crawl closed on its time (CLOSESPIDER_TIMEOUT), or was stopped at the runner's deadline
TIME_RAN_OUT = ("closespider_timeout", "shutdown")
_CURL_NOISE = re.compile(r"Failed to perform, |\s*See https://curl\.se/\S+ first for more details\.?")
_AT_URL = re.compile(r" at [a-z][a-z0-9+.-]*://\S+.*$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Ended:
    """How the child process ended: its exit status (None: stopped at the deadline), the end of its stderr."""

    code: int | None
    stderr: str = ""


@dataclass(frozen=True)
class Verdict:
    site: str
    status: str
    what: str
    fix: str = ""
    postings: int | None = None
    wall: str | None = None
    seconds: float | None = None  # how long the browser took to pass ``wall``
    city: str = ""
    job: str = ""
    blocks: dict[str, int] = field(default_factory=dict)  # refusals by shape
    identity: str = ""  # --each-proxy: the proxy it went through (its password masked)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def named(self) -> str:
        """The site, and the proxy it went through when it probed one."""
        return f"{self.site} via {self.identity}" if self.identity else self.site

    def line(self, width: int = 8) -> str:
        return f"{self.named:<{width}} {self.status}: {self.what}" + (f" — {self.fix}" if self.fix else "")

    def as_json(self) -> dict:
        return asdict(self)


class ProbeReport:
    """One probe's report, read once for the rules."""

    def __init__(self, site: str, report: dict, timeout: float):
        self.site = site
        self.prefix = f"FARM_{site.upper()}"
        self.report = report
        self.stats: dict = report.get("stats") or {}
        self.row: dict = report.get("keyword") or {}
        self.blocks = counts(self.stats, BLOCKS, exclude=NOT_SHAPES)
        self.exceptions = {}
        for name, n in counts(self.stats, EXCEPTIONS).items():
            short = name.rsplit(".", 1)[-1]  # curl_cffi.requests.exceptions.DNSError: DNSError
            self.exceptions[short] = self.exceptions.get(short, 0) + n
        self.statuses = counts(self.stats, STATUSES)
        walls = counts(self.stats, "farm/wall/met/")
        self.wall = next(iter(walls), None)
        self.passes: list[dict] = report.get("passes") or []
        self.not_passed: list[dict] = report.get("not_passed") or []
        self.ran_out = self.stats.get("finish_reason") in TIME_RAN_OUT
        self.seconds = report.get("crawl_seconds", timeout)

    def verdict(self, status: str, what: str, fix: str = "", **more) -> Verdict:
        return Verdict(
            self.site,
            status,
            what,
            fix,
            city=self.report.get("city", ""),
            job=self.report.get("job", ""),
            blocks=self.blocks,
            **more,
        )

    @property
    def try_later(self) -> str:
        return f"lower {self.prefix}_RATE, use FARM_PROXIES, or try later"

    @property
    def check_network(self) -> str:
        return f"check {self.prefix}_BASE_URL and the proxy (FARM_PROXIES)"


def judge(site: str, report: dict | None, ended: Ended, timeout: float) -> Verdict:
    """The verdict on ``site``'s probe from its report (None: the child wrote none)."""
    if report is None:
        if ended.code is None:
            fix = f"raise --timeout, or check FARM_{site.upper()}_BASE_URL and the proxy (FARM_PROXIES)"
            return Verdict(site, "timeout", f"no outcome within {timeout:g} s", fix)
        last = next((line for line in reversed(ended.stderr.splitlines()) if line.strip()), "no output")
        return Verdict(site, "error", f"the probe's crawl ended (exit {ended.code}) without a report: {shown(last)}")
    seen = ProbeReport(site, report, timeout)
    if report.get("error"):
        return seen.verdict("error", shown(report["error"]))
    for rule in RULES:
        found = rule(seen)
        if found is not None:
            return found
    status, error = seen.row.get("crawl_status") or "unclaimed", seen.row.get("error_message")
    return seen.verdict(
        "failed", f"the keyword ended {status}" + (f": {shown(error)}" if error else ""), "see the log (--log-dir)"
    )


def _ok(seen: ProbeReport) -> Verdict | None:
    if seen.row.get("crawl_status") != "completed" and (seen.row.get("last_completed_page") or 0) < 1:
        return None
    postings = int(seen.report.get("postings") or 0)
    what = f"{postings} posting{'s' if postings != 1 else ''} on page 1"
    if seen.passes:
        wall, seconds = seen.passes[0]["wall"], seen.passes[0]["seconds"]
        what += f"; wall {wall} passed by the browser in {seconds:.1f} s"
        return seen.verdict("ok", what, postings=postings, wall=wall, seconds=seconds)
    target = seen.report.get("impersonate")
    door = f"a browser's fingerprint, {target}" if target else "Scrapy's own client: impersonation off"
    return seen.verdict("ok", f"{what} (plain, with {door})", postings=postings)


def _could_not_start(seen: ProbeReport) -> Verdict | None:
    if not seen.report.get("start_error"):
        return None
    first = (seen.report.get("errors") or [seen.report["start_error"]])[0]
    return seen.verdict("error", f"the crawl could not start: {shown(first)}")


def _slider(seen: ProbeReport) -> Verdict | None:
    shapes = {shape for site in sites() for shape in site.slider_shapes}
    shape = next((s for s in seen.blocks if s in shapes or any(w in s for w in SLIDER_WORDS)), None)
    if shape is None:
        return None
    return seen.verdict("slider", f"cannot pass ({shape})", seen.try_later, wall=seen.wall)


def _wall_not_passed(seen: ProbeReport) -> Verdict | None:
    if seen.not_passed:
        wall, why = seen.not_passed[0]["wall"], seen.not_passed[0]["why"]
        if seen.stats.get("farm/wall/not_passed/timeout"):
            fix = f"raise FARM_BROWSER_TIMEOUT (the probe gave it {seen.report.get('browser_timeout', 0):g} s)"
        else:
            fix = "install Chromium (apt-get install chromium), or set FARM_BROWSER_EXECUTABLE"
        return seen.verdict("wall", f"{wall} not passed: {shown(why)}", fix, wall=wall)
    if seen.wall is not None and not seen.stats.get("farm/session/earned"):
        what = f"{seen.wall} met, and no browser may pass it (FARM_BROWSER_PAGES is 0)"
        return seen.verdict("wall", what, "set FARM_BROWSER_PAGES above 0", wall=seen.wall)
    return None


def _session_refused(seen: ProbeReport) -> Verdict | None:
    if seen.wall is None or not seen.blocks:
        return None
    earned = seen.stats.get("farm/session/earned", 0)
    what = (
        f"{listed(seen.blocks)}, although the browser passed {seen.wall} "
        f"({earned} session{'s' if earned != 1 else ''}): the site refused the sessions it earned"
    )
    return seen.verdict("blocked", what, "use FARM_PROXIES, or try later", wall=seen.wall)


def _no_network(seen: ProbeReport) -> Verdict | None:
    if seen.stats.get("farm/proxy/unreachable"):
        return seen.verdict("no network", f"a proxy cannot be reached: {_error(seen)}", "check FARM_PROXIES")
    if not (seen.stats.get("farm/site/errors") or seen.exceptions):
        return None
    what = _error(seen) + (f"; no answer within {seen.seconds:g} s" if seen.ran_out else "")
    if not seen.stats.get("downloader/response_count"):
        return seen.verdict("no network", what, seen.check_network)
    return seen.verdict("site trouble", what, "the site's own trouble: try later")


def _refused(seen: ProbeReport) -> Verdict | None:
    if not seen.blocks:
        return None
    if set(seen.statuses) == {404}:
        what = f"{listed(seen.blocks)}: the site answered HTTP 404 to the search"
        return seen.verdict("refused", what, f"check {seen.prefix}_BASE_URL")
    if understood(max(seen.blocks, key=seen.blocks.get)):
        return seen.verdict("blocked", listed(seen.blocks), seen.try_later)
    return seen.verdict("refused", listed(seen.blocks), "an answer farm does not understand; see docs/sites.md")


def _ran_out(seen: ProbeReport) -> Verdict | None:
    if not seen.ran_out:
        return None
    return seen.verdict("timeout", f"no outcome within {seen.seconds:g} s", f"raise --timeout, or {seen.check_network}")


RULES = (_ok, _could_not_start, _slider, _wall_not_passed, _session_refused, _no_network, _refused, _ran_out)


def counts(stats: dict, prefix: str, exclude: tuple[str, ...] = ()) -> dict:
    """The stats ``prefix``/<name> by name (no deeper keys); a status code as a number."""
    found = {}
    for key, value in stats.items():
        name = key[len(prefix) :] if key.startswith(prefix) else None
        if name and "/" not in name and name not in exclude:
            found[int(name) if name.isdigit() else name] = int(value)
    return found


def understood(shape: str) -> bool:
    """Whether a refusal's shape is one farm knows (a block) rather than an answer it does not understand."""
    starts = tuple(start for site in sites() for start in site.unread_shapes)
    return not (shape.endswith(NOT_UNDERSTOOD_ENDS) or shape.startswith(starts))


def listed(counted: dict) -> str:
    """``{"a": 3, "b": 1}`` as ``a ×3, b ×1``, the most first."""
    return ", ".join(f"{name} ×{n}" for name, n in sorted(counted.items(), key=lambda kv: -kv[1]))


def _error(seen: ProbeReport) -> str:
    """The site's trouble as the keyword stored it (without the URL and curl's boilerplate), else the
    errors the downloader met, by kind."""
    text = seen.row.get("error_message") or ""
    if text.startswith(UNAVAILABLE) or not seen.exceptions:
        text = _AT_URL.sub("", _CURL_NOISE.sub("", text.removeprefix(UNAVAILABLE))).strip()
    else:  # the keyword ended on the crawl's close, which says nothing of the network
        text = ""
    return shown(text or listed(seen.exceptions) or "no answer")


def shown(text, most: int = 300) -> str:
    """One line of ``text``, safe to print: no secret, no control character, at most ``most`` characters."""
    lines = str(text).strip().splitlines()
    line = escape(without_secrets(lines[0] if lines else ""))
    return line if len(line) <= most else line[: most - 1] + "…"
