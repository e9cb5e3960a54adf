"""The public suffix list Scrapy's cookie middleware reads (through tldextract): the one tldextract bundles.

tldextract fetches the list from publicsuffix.org the first time a site sets a cookie for a domain, and on a
machine without internet logs a long traceback before it falls back to its bundled copy. farm's add-on
points tldextract at no URL (its ``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS``, set empty unless the environment
names a list already) before Scrapy imports its cookie middleware: the bundled list is read, nothing is
fetched. An operator who wants a fresher list names it there (a URL or a file, one a line).
"""

import os

URLS = "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"


def use_bundled_suffix_list() -> None:
    """tldextract reads its bundled list (or its cache), unless the environment names lists of its own."""
    os.environ.setdefault(URLS, "")
