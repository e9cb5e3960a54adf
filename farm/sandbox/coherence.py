"""What a WAF reads in each search request's headers: is it the Chrome it claims, and a request of its kind?
And how many requests each connection carried.

Drawn from Chromium's rules, not from farm's client (farm.sessions.identity is not imported: this is the
site's view):

- a User-Agent that says Chrome/N must come with the client hints Chromium N sends: sec-ch-ua with the
  brands Chromium derives from N (user_agent_utils.cc: the GREASE brand "Not" c[N%11] "A" c[(N+1)%11]
  "Brand", version {8, 99, 24}[N%3]; with Chromium alone, or with a vendor's brand in the order N%6
  picks), sec-ch-ua-mobile, and sec-ch-ua-platform naming the User-Agent's own platform; no
  HeadlessChrome;
- fetch metadata of the request's kind (its site's imitation says which: ``search``, farm.sandbox.imitation):
  the API a page fetches (a JSON search) is same-origin, cors, empty, with a Referer, without a
  navigation's upgrade-insecure-requests or sec-fetch-user, and priority u=1, i where one is sent; a
  server-rendered page is a navigation: navigate, document, an HTML Accept, priority u=0, i where one is sent;
- a client that claims no Chrome (Scrapy's own) must send no client hints nor fetch metadata.

Requests per connection are counted by the client's address and port (one connection while it is open).
GET /_sandbox/identity shows both.
"""

import re
from collections import Counter, deque

from .sites import imitation

GREASE_CHARS = (" ", "(", ":", "-", ".", "/", ")", ";", "=", "?", "_")
GREASE_VERSIONS = ("8", "99", "24")
PERMUTATIONS = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
VENDOR_BRANDS = ("Google Chrome", "Microsoft Edge")
PLATFORMS = (  # the User-Agent's platform part -> sec-ch-ua-platform
    ("Windows NT", "Windows"),
    ("Android", "Android"),
    ("CrOS", "Chrome OS"),
    ("Macintosh", "macOS"),
    ("Linux", "Linux"),
)
CHROME = re.compile(r"\bChrome/(\d+)\.")
EXAMPLES = 20


def chromium_brands(major: int, vendor: str | None) -> str:
    """The sec-ch-ua Chromium ``major`` sends, with ``vendor``'s brand or Chromium's alone."""
    grease = (
        f"Not{GREASE_CHARS[major % 11]}A{GREASE_CHARS[(major + 1) % 11]}Brand",
        GREASE_VERSIONS[major % 3],
    )
    chromium = ("Chromium", str(major))
    if vendor is None:
        brands = [grease, chromium] if major % 2 == 0 else [chromium, grease]
    else:
        order = PERMUTATIONS[major % 6]
        brands = [("", "")] * 3
        brands[order[0]], brands[order[1]], brands[order[2]] = grease, chromium, (vendor, str(major))
    return ", ".join(f'"{name}";v="{version}"' for name, version in brands)


def judge(site: str, headers) -> list[str]:
    """Why this search request is not the Chrome it claims or not a request of its kind; [] when it is."""
    agent = headers.get("User-Agent", "")
    hints = [name for name in ("sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform") if name in headers]
    claimed = CHROME.search(agent)
    if claimed is None:  # claims no Chrome: must say nothing only a browser says
        told = hints + [name for name in headers if name.lower().startswith("sec-fetch-")]
        return [f"{name.lower()}_without_chrome" for name in told]
    why = []
    major = int(claimed.group(1))
    if "HeadlessChrome" in agent:
        why.append("headless_user_agent")
    if "sec-ch-ua" not in headers:
        why.append("no_client_hints")
    elif headers["sec-ch-ua"] not in [chromium_brands(major, vendor) for vendor in (None, *VENDOR_BRANDS)]:
        why.append(f"brands_not_chrome_{major}")
    platform = next((name for part, name in PLATFORMS if part in agent), None)
    if "sec-ch-ua-platform" in headers and headers["sec-ch-ua-platform"] != f'"{platform}"':
        why.append("platform_not_the_user_agent_s")
    mobile = "?1" if "Mobile" in agent else "?0"
    if "sec-ch-ua-mobile" in headers and headers["sec-ch-ua-mobile"] != mobile:
        why.append("mobile_not_the_user_agent_s")
    why += _of_its_kind(_search(site), headers)
    return why


def _search(site: str) -> str:
    """What the site's search request is: "fetch" or "navigate" (a site the sandbox does not imitate)."""
    try:
        return imitation(site).search
    except KeyError:
        return "navigate"


def _of_its_kind(kind: str, headers) -> list[str]:
    why = []
    site, mode, dest = (headers.get(f"Sec-Fetch-{part}", "") for part in ("Site", "Mode", "Dest"))
    priority = headers.get("Priority")
    if kind == "fetch":
        if (site, mode, dest) != ("same-origin", "cors", "empty"):
            why.append(f"fetch_metadata_{site or '-'}_{mode or '-'}_{dest or '-'}_on_a_fetch")
        why += [
            f"{name.lower()}_on_a_fetch" for name in ("Upgrade-Insecure-Requests", "Sec-Fetch-User") if name in headers
        ]
        if "Referer" not in headers:
            why.append("no_referer_on_a_fetch")
        if priority is not None and priority != "u=1, i":
            why.append("priority_not_a_fetch_s")
    else:
        if (mode, dest) != ("navigate", "document") or site not in ("same-origin", "none", "same-site", "cross-site"):
            why.append(f"fetch_metadata_{site or '-'}_{mode or '-'}_{dest or '-'}_on_a_navigation")
        if "text/html" not in headers.get("Accept", ""):
            why.append("accept_not_html_on_a_navigation")
        if priority is not None and priority != "u=0, i":
            why.append("priority_not_a_navigation_s")
    return why


class Coherence:
    """The counts GET /_sandbox/identity shows."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.incoherent = 0
        self.reasons: Counter = Counter()
        self.examples: deque = deque(maxlen=EXAMPLES)
        self.per_connection: Counter = Counter()  # (client address, port) -> requests it carried

    def seen(self, site: str, request) -> None:
        self.requests += 1
        self.per_connection[request.transport.get_extra_info("peername") if request.transport else None] += 1
        why = judge(site, request.headers)
        if why:
            self.incoherent += 1
            self.reasons.update(why)
            self.examples.append({"site": site, "path": request.path, "why": why})

    def status(self) -> dict:
        connections = len(self.per_connection)
        return {
            "requests": self.requests,
            "incoherent": self.incoherent,
            "reasons": dict(self.reasons),
            "examples": list(self.examples),
            "connections": connections,
            "requests_per_connection": round(self.requests / connections, 2) if connections else 0,
            "most_on_a_connection": max(self.per_connection.values(), default=0),
        }
