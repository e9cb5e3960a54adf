"""CrawlSettings: how a crawl goes: keywords and pages in flight, pace and back-off, walls, browser,
sessions, proxies, metrics, checkpoints, writes, and the Scrapy settings farm tunes.

farm.config.base says how a setting is declared and read; FarmConfig holds these with the rest.
"""

from typing import Annotated

from farm.config.base import setting
from farm.config.kinds import IMPERSONATE, LOG_LEVELS, PORT, PROXIES, choice, number, text, whole
from farm.config.store import StoreSettings, seconds


class CrawlSettings(StoreSettings):
    """What a crawl's components read, beside the store's settings."""

    leases_in_flight: Annotated[
        int,
        setting(
            whole(1, 10_000, "a whole number from 1 to 10000, e.g. 8"),
            "keywords one process holds at once; each keeps its pages flowing",
        ),
    ] = 8
    pages_in_flight: Annotated[
        int,
        setting(
            whole(1, 100_000, "a whole number from 1 to 100000, e.g. 32"),
            "pages one process may have fetched before their progress is recorded: the most a `kill -9` "
            "can cost in pages fetched again (the scheduler holds the rest in its queue)",
        ),
    ] = 32
    logstats_interval: Annotated[
        float,
        setting(
            number(0, takes="a number of seconds from 0 (no progress line), e.g. 60"),
            "seconds between progress lines",
        ),
    ] = 60.0
    reap_interval: Annotated[
        float,
        setting(
            number(0, takes="a number of seconds from 0 (no reaping), e.g. 60"),
            "seconds between heartbeats of held leases and reaps of stale ones (at most a third of "
            "`FARM_LEASE_TIMEOUT`)",
        ),
    ] = 60.0
    block_retries: Annotated[
        int,
        setting(
            whole(0, 1000, "a whole number from 0 to 1000, e.g. 5"),
            "retries of a page the site blocks or cannot serve before its keyword goes `partial`",
        ),
    ] = 5
    block_base_delay: Annotated[
        float,
        setting(
            seconds(example="2"),
            "the gap between requests to the site after a block or an outage, doubling up to "
            "`FARM_BLOCK_MAX_DELAY` (and at most it); good answers halve it",
        ),
    ] = 2.0
    block_max_delay: Annotated[
        float, setting(seconds(example="60"), "the most the gap after blocks and outages grows to")
    ] = 60.0
    impersonate: Annotated[
        str,
        setting(
            IMPERSONATE,
            "the client page requests pass for: `chrome` sends them with the TLS and HTTP/2 fingerprint and "
            "the headers of the newest Chrome curl_cffi knows, a target such as `chrome146` with that one's, "
            "empty with Scrapy's own client; `FARM_<SITE>_IMPERSONATE` sets one site (see [Walls](walls.md))",
        ),
    ] = "chrome"
    browser_pages: Annotated[
        int,
        setting(
            whole(0, 64, "a whole number of pages from 0 (no browser) to 64, e.g. 2"),
            "headless Chromium pages open at once to pass walls that need JavaScript; `0`: never open a "
            "browser, walls are blocks",
        ),
    ] = 2
    browser_executable: Annotated[
        str,
        setting(
            text("nothing (Chromium on the PATH), or the browser's path or name"),
            "the browser's path or name (Debian: `apt-get install chromium`; Playwright never downloads one)",
            shown="unset (`chromium`, `chromium-browser` or `google-chrome` on the `PATH`)",
        ),
    ] = ""
    browser_timeout: Annotated[
        float,
        setting(
            number(0, 3600, above=True, takes="a number of seconds above 0, e.g. 30"),
            "seconds a wall's page has to grant its cookie in the browser",
        ),
    ] = 30.0
    browser_cooldown: Annotated[
        float,
        setting(
            seconds(example="60"),
            "seconds a wall the browser could not pass (a slider) is not opened again for the same site and proxy",
        ),
    ] = 60.0
    session_max_age: Annotated[
        float,
        setting(
            seconds(above=True, example="1200"),
            "seconds a session earned in the browser is carried on plain requests before a new one is "
            "earned (sooner when the site refuses it)",
        ),
    ] = 1200.0
    session_max_uses: Annotated[
        int,
        setting(
            whole(0, 10**9, "a whole number from 0 (no limit), e.g. 200"),
            "requests a session earned in the browser is sent with before a new one is earned; `0`: no limit",
        ),
    ] = 0
    sessions_ahead: Annotated[
        int,
        setting(
            whole(0, 16, "a whole number of sessions from 0 (none ahead) to 16, e.g. 2"),
            "the most sessions of one site and proxy earned ahead at once, under way or ready: more than one "
            "only while the crawl uses sessions up faster than a pass in the browser takes; `0`: none ahead "
            "(see [Walls](walls.md))",
        ),
    ] = 2
    site_refused_after: Annotated[
        float,
        setting(
            number(0, takes="a number of seconds from 0 (never), e.g. 180"),
            "seconds of nothing but refusals farm cannot pass (at least 6, no page between) after which the "
            "crawl concludes the site refuses it and ends, its keywords partial; `0`: never",
        ),
    ] = 180.0
    proxies: Annotated[
        tuple,
        setting(
            PROXIES,
            "proxies for page requests, each an identity with its own pace: a list, a comma-separated "
            "string, or a file with one URL a line, `#` comments (see [Proxies](crawling.md#proxies)); "
            "passwords are masked wherever farm names a proxy",
            shown="unset (no proxy)",
        ),
    ] = ()
    proxy_quarantine: Annotated[
        float,
        setting(
            seconds(example="1800"),
            "seconds a proxy that drew a block is left out, for every worker with `FARM_REDIS_URL`; doubled "
            "for each block in a row without a good answer between, up to 16 times (see "
            "[Identities](crawling.md#identities)); with none left the crawl waits",
        ),
    ] = 1800.0
    metrics_port: Annotated[
        int,
        setting(PORT, "the crawler's Prometheus endpoint (see [Metrics](operations.md#metrics))", shown="unset (off)"),
    ] = 0
    metrics_host: Annotated[
        str,
        setting(
            text("an address to listen on, e.g. 127.0.0.1 or 0.0.0.0", empty=False),
            "the address the endpoint listens on: this machine only; `0.0.0.0` opens it on every interface "
            "(see [Metrics](operations.md#metrics))",
        ),
    ] = "127.0.0.1"
    metrics_linger: Annotated[
        float,
        setting(
            seconds(example="30"),
            "seconds the endpoint may stay up after the crawl, until it has been scraped once more",
        ),
    ] = 0.0
    checkpoint_interval: Annotated[
        float,
        setting(
            seconds(above=True, example="1"),
            "with `JOBDIR` set: the longest, in seconds, a change (a keyword claimed, a page asked for or "
            "recorded) waits before the checkpoint holds it (see [Pause and resume](pause-and-resume.md))",
        ),
    ] = 1.0
    sql_batch_size: Annotated[
        int,
        setting(whole(1, 100_000, "a whole number from 1 to 100000, e.g. 200"), "at most this many postings per write"),
    ] = 200
    sql_flush_interval: Annotated[
        float,
        setting(
            seconds(example="0.5"),
            "a write goes out as soon as the one before it is committed when a page is ready, else after "
            "this many seconds",
        ),
    ] = 0.5
    # Scrapy's own, as farm tunes them, each from its FARM_ environment variable
    concurrent_requests: Annotated[
        int,
        setting(
            whole(1, 10_000, "a whole number from 1 to 10000, e.g. 4"),
            "Scrapy's `CONCURRENT_REQUESTS` (and per domain: each spider crawls one site, at the pace of "
            "`FARM_<SITE>_RATE`, kept by farm's scheduler: a few requests at once are plenty for a real site)",
            key="CONCURRENT_REQUESTS",
            env="FARM_CONCURRENT_REQUESTS",
        ),
    ] = 4
    download_delay: Annotated[
        float,
        setting(
            number(0, takes="a number of seconds from 0"),
            "Scrapy's `DOWNLOAD_DELAY` (farm keeps each site's pace itself)",
            key="DOWNLOAD_DELAY",
            env="FARM_DOWNLOAD_DELAY",
        ),
    ] = 0.0
    concurrent_items: Annotated[
        int,
        setting(
            whole(1, 10_000, "a whole number from 1 to 10000, e.g. 8"),
            "Scrapy's `CONCURRENT_ITEMS`: Scrapy starts this many tasks, plus one, for every response's "
            "output, so its default of 100 cost a fast crawl a fifth of its CPU ([benchmarks.md](benchmarks.md))",
            key="CONCURRENT_ITEMS",
            env="FARM_CONCURRENT_ITEMS",
        ),
    ] = 8
    retry_times: Annotated[
        int,
        setting(
            whole(0, 1000, "a whole number from 0 to 1000, e.g. 2"),
            "Scrapy's `RETRY_TIMES`, for requests other than farm's pages (farm.middlewares.blocks retries those)",
            key="RETRY_TIMES",
            env="FARM_RETRY_TIMES",
        ),
    ] = 2
    log_level: Annotated[
        str, setting(choice(*LOG_LEVELS), "Scrapy's `LOG_LEVEL`", key="LOG_LEVEL", env="FARM_LOG_LEVEL")
    ] = "INFO"
