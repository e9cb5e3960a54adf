"""A site's cookie for its domain is kept with tldextract's bundled suffix list: nothing fetched, no traceback."""

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

COOKIE = textwrap.dedent(
    """
    import logging
    logging.basicConfig(level=logging.INFO)
    from scrapy import Spider
    from scrapy.http import HtmlResponse, Request
    from scrapy.settings import Settings
    from scrapy.utils.test import get_crawler
    from farm.addon import FarmAddon
    from farm.sites.qcwy.spider import QcwySpider

    FarmAddon.update_pre_crawler_settings(Settings())  # as `scrapy crawl` runs it, before any middleware
    FarmAddon(QcwySpider).update_settings(Settings())
    from scrapy.downloadermiddlewares.cookies import CookiesMiddleware

    crawler = get_crawler(Spider)
    cookies = CookiesMiddleware.from_crawler(crawler)
    request = Request("https://we.51job.com/api/job/search-pc")
    headers = {"Set-Cookie": "acw_tc=1; Domain=.51job.com; Path=/"}
    cookies.process_response(request, HtmlResponse(request.url, headers=headers, request=request))
    later = Request("https://jobs.51job.com/beijing/1.html")
    cookies.process_request(later)
    print("sent:", later.headers.get("Cookie"))
    """
)


def test_a_domain_cookie_is_kept_with_the_bundled_suffix_list_and_nothing_fetched(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "TLDEXTRACT_CACHE": str(tmp_path / "none")}
    env["HTTPS_PROXY"] = env["HTTP_PROXY"] = "http://127.0.0.1:9"  # a fetch fails at once, as offline
    done = subprocess.run([sys.executable, "-c", COOKIE], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sent: b'acw_tc=1'" in done.stdout
    assert "Traceback" not in done.stderr and "public_suffix_list" not in done.stderr, done.stderr[-3000:]
