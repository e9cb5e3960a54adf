"""Sessions a site grants: earned once in a real browser, carried on plain requests.

The real sites stand a wall before their search (Boss直聘's security check, 51job's Aliyun WAF, 智联's
verification): a page whose JavaScript computes a cookie. farm fetches plainly first, with a browser's TLS
and HTTP/2 fingerprint (``identity``: one record of the client; ``handler``: curl_cffi, connections kept).
When a site answers with a wall its spider knows how to pass (``LeaseSpider.browser_wall``), farm opens the
wall's page in headless Chromium (``browser``, dressed as the identity by ``disguise``), takes the cookies the
page earns, and carries them on plain requests (``pool``) until the site refuses
them or they grow old; then a new one is earned. ``middleware`` is the downloader middleware that does it.

A wall no spider names (an HTML page with scripts where data was due, or a redirect away from it: ``wall``)
is opened where it was met; ``watch`` says when the browser has passed it, and the first answer to the
session it earns proves it.

A wall the browser cannot pass (a slider, a puzzle) is never solved: it stays a block (farm.middlewares.blocks).
See docs/walls.md.
"""
