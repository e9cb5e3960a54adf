"""A failed keyword's reason as the report shows it: one line, its URLs shortened, its length bounded.

A keyword's ``error_message`` is often an exception's text with the page's whole URL in it (a signed
search URL runs to 400 characters): the report shows each URL as its host and the start of its path
(``https://we.51job.com/api/job/search-pc?…``) and cuts what is left at REASON_MOST characters. The
figures (the page's JSON block) keep the reason whole.
"""

import re

REASON_MOST = 160  # characters of a reason shown
PATH_MOST = 40  # characters of a URL's path shown
URL = re.compile(r"\b(https?://)([^/\s?#'\"<>]+)([^\s?#'\"<>]*)([?#][^\s'\"<>]*)?")


def short_reason(text: str | None, most: int = REASON_MOST) -> str:
    """``text`` on one line, each URL shortened, cut at ``most`` characters with an ellipsis."""
    line = " ".join((text or "").split())
    line = URL.sub(_short_url, line)
    return line if len(line) <= most else line[: most - 1].rstrip() + "…"


def _short_url(match: re.Match) -> str:
    scheme, host, path, rest = match.groups()
    if len(path) > PATH_MOST:
        path = path[: PATH_MOST - 1] + "…"
    return f"{scheme}{host}{path}{'?…' if rest else ''}"
