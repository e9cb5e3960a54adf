"""Client pace: the sandbox holds each client to a pace and bans one that goes faster, as a real site does.

A client is the address a search request comes from (the peer's IP: each forward proxy in front of the
sandbox connects from an address of its own), and it is held to ``rate`` search requests a second (a
client named in ``rates`` to its own) by a token bucket that holds ``burst`` requests: a request that
finds the bucket empty is judged too fast and answered HTTP 429. ``strikes`` too-fast requests in a row
ban the client for ``ban_seconds``: every request it sends meanwhile is answered HTTP 403 (counted as
banned). Too-fast and banned requests are the refusals a crawl drew for its pace; neither is counted
as served.

Off until set (POST /_sandbox/pace {"rate": R, ...}; rate 0 turns it off); GET /_sandbox/pace shows the
config and, for each client, ``served``, ``too_fast``, ``banned``, ``bans``, ``fastest`` (the most
search requests it sent in one second, served or not), and ``first`` and ``last`` (when its first and its
latest request came, unix time).
"""

import time
from collections import Counter
from dataclasses import asdict, dataclass, field

from aiohttp import web

BANNED = (
    b"<html><head><title>403 Forbidden</title></head><body><center><h1>403 Forbidden</h1></center>"
    b"<hr><center>nginx</center></body></html>"
)


@dataclass
class PaceConfig:
    rate: float = 0.0  # search requests a second each client may make (0: no limit, the mode off)
    burst: float = 2.0  # requests the bucket holds: what a client may send at once after a pause
    strikes: int = 3  # too-fast requests in a row that ban a client
    ban_seconds: float = 5.0
    rates: dict = field(default_factory=dict)  # client address -> its own rate

    @classmethod
    def from_json(cls, data):
        if not isinstance(data, dict):
            raise ValueError("a client pace config is a JSON object")
        unknown = set(data) - {"rate", "burst", "strikes", "ban_seconds", "rates"}
        if unknown:
            raise ValueError(f"unknown client pace settings: {', '.join(sorted(unknown))}")
        config = cls(
            rate=float(data.get("rate", 0.0)),
            burst=float(data.get("burst", 2.0)),
            strikes=int(data.get("strikes", 3)),
            ban_seconds=float(data.get("ban_seconds", 5.0)),
            rates={str(k): float(v) for k, v in (data.get("rates") or {}).items()},
        )
        if config.rate < 0 or config.burst < 1 or config.strikes < 1 or config.ban_seconds < 0:
            raise ValueError("rate >= 0, burst >= 1, strikes >= 1 and ban_seconds >= 0, please")
        if any(rate <= 0 for rate in config.rates.values()):
            raise ValueError("each client's own rate must be above 0")
        return config

    def to_json(self):
        return asdict(self)


class Client:
    def __init__(self, now):
        self.tokens = None  # a full bucket, once the rate is known
        self.at = now  # when the bucket was last filled
        self.in_a_row = 0  # too-fast requests since the last one served
        self.banned_until = 0.0
        self.counts: Counter[str] = Counter()  # served, too_fast, banned, bans
        self.seconds: Counter[int] = Counter()  # requests by the second they came
        self.first = self.last = 0.0  # when (unix time) its first and its latest request came


class ClientPace:
    def __init__(self, config=None, clock=time.monotonic):
        self.config = config or PaceConfig()
        self.clock = clock
        self.clients = {}

    @property
    def on(self):
        return self.config.rate > 0

    def replace(self, config):
        self.config = config
        self.clients.clear()

    def reset_counts(self):
        self.clients.clear()

    def judge(self, request):
        """None: the client's request may be served; else the answer that refuses it (and counts it)."""
        if not self.on:
            return None
        name = request.remote or "?"
        now = self.clock()
        client = self.clients.get(name)
        if client is None:
            client = self.clients[name] = Client(now)
        arrived = time.time()
        client.seconds[int(arrived)] += 1
        client.first = client.first or arrived
        client.last = arrived
        config = self.config
        if now < client.banned_until:
            client.counts["banned"] += 1
            return web.Response(status=403, body=BANNED, headers={"Content-Type": "text/html"})
        rate = config.rates.get(name, config.rate)
        tokens = config.burst if client.tokens is None else client.tokens
        client.tokens = min(config.burst, tokens + (now - client.at) * rate)
        client.at = now
        if client.tokens >= 1:
            client.tokens -= 1
            client.in_a_row = 0
            client.counts["served"] += 1
            return None
        client.counts["too_fast"] += 1
        client.in_a_row += 1
        if client.in_a_row >= config.strikes:
            client.in_a_row = 0
            client.banned_until = now + config.ban_seconds
            client.counts["bans"] += 1
        return web.Response(status=429, body=b"Too Many Requests", headers={"Content-Type": "text/html"})

    def status(self):
        return {
            "config": self.config.to_json(),
            "clients": {
                name: {
                    "served": c.counts["served"],
                    "too_fast": c.counts["too_fast"],
                    "banned": c.counts["banned"],
                    "bans": c.counts["bans"],
                    "fastest": max(c.seconds.values(), default=0),
                    "first": c.first,
                    "last": c.last,
                }
                for name, c in sorted(self.clients.items())
            },
        }
