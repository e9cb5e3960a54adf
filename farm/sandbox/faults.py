"""Which search request fails, and how, plus the site-neutral ways to fail (HTTP errors, slow, drop, truncate).

Deterministic: the n-th request for one (site, city, keyword, page) fails or not by a hash of the fault seed,
that key and n. So a given seed and request sequence give the same faults even when concurrent requests arrive
in a different order, and a retried page gets a fresh draw. A keyword in `keywords` fails every time.

A drawn fault is one of the configured kinds that applies to the request's site: a site's own kinds (its
imitation's ``faults``, farm.sandbox.imitation: its blocks, its WAF pages) hit it alone, the generic ones every
site. When none applies the request is served normally. `keywords` maps a keyword, or `site:keyword`, to one
kind. The kinds are asked of the registry when a config is made, so a site registered later brings its own.

The refusal shapes (a site's kinds marked ``shape``: answers farm's spiders must name, such as an unknown
block code or an HTML page where JSON was due) are drawn only when named in `kinds` (or `keywords`): the
default kinds stay the faults a crawl has always been tested against.

Two faults change what a served page *says*, drawn per keyword and per posting rather than per request, from
the same fault seed: `stale_totals` (stale.py) and `hostile_rate` (hostile.py).
"""

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from aiohttp import web

from .data import fraction, stable_hash
from .imitation import FaultKind
from .sites import imitation, served_sites

GENERIC = {
    "http403": "HTTP 403",
    "http429": "HTTP 429 + Retry-After",
    "http500": "HTTP 500",
    "http502": "HTTP 502",
    "http503": "HTTP 503",
    "slow": "the right page after --slow-ms (counted as served)",
    "drop": "close the socket, no response",
    "truncate": "Content-Length of the full page, half of it sent, then close",
}
GENERIC_KINDS = tuple(GENERIC)
_REASONS = {
    403: "Forbidden",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Temporarily Unavailable",
}


def site_kinds() -> tuple[FaultKind, ...]:
    """Every served site's own fault kinds, in the registry's order."""
    return tuple(kind for site in served_sites() for kind in imitation(site).faults)


def all_kinds() -> tuple[str, ...]:
    """The names of every fault kind a config may name: the sites' own, then the generic ones."""
    return tuple(kind.name for kind in site_kinds()) + GENERIC_KINDS


def shape_kinds() -> tuple[str, ...]:
    """The kinds drawn only when named: the sites' refusal shapes."""
    return tuple(kind.name for kind in site_kinds() if kind.shape)


def default_kinds() -> tuple[str, ...]:
    """The kinds a config draws from unless it names its own: every kind but the refusal shapes."""
    return tuple(kind.name for kind in site_kinds() if not kind.shape) + GENERIC_KINDS


def descriptions() -> dict[str, str]:
    """Each kind's line in `farm sandbox --help`."""
    return {**{kind.name: kind.description for kind in site_kinds()}, **GENERIC}


def applies(kind, site):
    return kind in GENERIC or imitation(site).fault(kind) is not None


@dataclass
class FaultConfig:
    rate: float = 0.0
    seed: int = 0
    kinds: tuple = field(default_factory=default_kinds)
    keywords: dict = field(default_factory=dict)
    slow_ms: int = 1500
    retry_after: int = 1
    stale_totals: float = 0.0  # share of keywords whose page 1 reports wrong totals
    hostile_rate: float = 0.0  # share of postings whose fields carry hostile values

    @classmethod
    def from_json(cls, data):
        """Validate a control-endpoint or CLI config; ValueError names what is wrong."""
        if not isinstance(data, dict):
            raise ValueError("the fault config must be a JSON object")
        unknown = set(data) - {
            "rate",
            "seed",
            "kinds",
            "keywords",
            "slow_ms",
            "retry_after",
            "stale_totals",
            "hostile_rate",
        }
        if unknown:
            raise ValueError(f"unknown fault config keys: {', '.join(sorted(unknown))}")
        rate, stale_totals, hostile_rate = (_share(data, name) for name in ("rate", "stale_totals", "hostile_rate"))
        kinds = data.get("kinds") or default_kinds()
        if isinstance(kinds, str):
            kinds = [k.strip() for k in kinds.split(",") if k.strip()]
        keywords = dict(data.get("keywords") or {})
        known = all_kinds()
        for kind in (*kinds, *keywords.values()):
            if kind not in known:
                raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(known)}")
        slow_ms, retry_after = int(data.get("slow_ms", cls.slow_ms)), int(data.get("retry_after", cls.retry_after))
        if slow_ms < 0 or retry_after < 0:
            raise ValueError("slow_ms and retry_after must not be negative")
        return cls(
            rate, int(data.get("seed", 0)), tuple(kinds), keywords, slow_ms, retry_after, stale_totals, hostile_rate
        )

    def to_json(self):
        return {
            "rate": self.rate,
            "seed": self.seed,
            "kinds": list(self.kinds),
            "keywords": self.keywords,
            "slow_ms": self.slow_ms,
            "retry_after": self.retry_after,
            "stale_totals": self.stale_totals,
            "hostile_rate": self.hostile_rate,
        }


def _share(data, name):
    value = float(data.get(name, 0.0))
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be between 0 and 1, not {value}")
    return value


class Faults:
    def __init__(self, config=None):
        self.replace(config or FaultConfig())

    def replace(self, config):
        """A new config also restarts the request sequence, so its faults repeat from the start."""
        self.config = config
        self._attempts = Counter()

    def choose(self, query):
        """(kind, hash) for this request, or (None, 0) to serve it normally."""
        c = self.config
        kind = c.keywords.get(f"{query.site}:{query.keyword}") or c.keywords.get(query.keyword)
        if kind and applies(kind, query.site):
            return kind, stable_hash(c.seed, "keyword", *query.key)
        if c.rate <= 0:
            return None, 0
        n = self._attempts[query.key]
        self._attempts[query.key] = n + 1
        h = stable_hash(c.seed, *query.key, n)
        if fraction(h) >= c.rate:
            return None, 0
        options = [k for k in c.kinds if applies(k, query.site)]
        if not options:
            return None, 0
        return options[stable_hash(h, "kind") % len(options)], h


def drop(request):
    """Close the connection without a response."""
    request.transport.close()
    return web.Response()  # never written: the transport is gone


async def generic(kind, request, body, content_type, config):
    """Answer with a site-neutral fault; `body` is the page that should have been served."""
    if kind == "drop":
        return drop(request)
    if kind == "truncate":
        response = web.StreamResponse(headers={"Content-Type": content_type})
        response.content_length = len(body)
        await response.prepare(request)
        await response.write(body[: len(body) // 2])
        await asyncio.sleep(0)  # let the half body reach the socket before it closes
        request.transport.close()
        return response
    status = int(kind[4:])
    reason = _REASONS[status]
    headers = {"Retry-After": str(config.retry_after)} if status == 429 else {}
    page = (
        f"<html><head><title>{status} {reason}</title></head><body><center><h1>{status} {reason}</h1>"
        f"</center><hr><center>nginx</center></body></html>"
    )
    return web.Response(status=status, text=page, content_type="text/html", headers=headers)
