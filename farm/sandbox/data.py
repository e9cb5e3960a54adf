"""Deterministic job postings: the same (seed, site, city, keyword) always gives the same postings.

Nothing is random at run time: every choice comes from the seed and what is being chosen, so ids are stable
across requests and across restarts, and two processes with one seed serve one world.

A keyword's result list is a sequence of *slots* ``(id, bits, company, shared)``. Most slots are postings of
that keyword alone; a few are taken from a small per-(site, city) pool of generic postings (储备干部, 项目经理 …)
that every keyword of that site and city may show, which is what makes de-duplication matter. Slot 0 of the
pool is in every list of two or more postings, so any two such keywords of one site and city share at least
one id. A share of the positions are cross-posted: one opening on two or three sites (crossposts.py).

Speed (a crawl asks for pages never served before, so every page is generated on request):

- A keyword's list comes from one ``random.Random`` seeded by a hash of (seed, site, city, keyword). It is
  drawn lazily, only as far as the pages asked for, and kept in an LRU of keywords, so paging through a
  keyword draws each slot once. Each slot carries its id, its company and 128 random ``bits``.
- A posting is made from its slot's bits by a few integer divisions (no hashing per posting or per field);
  per-keyword work (titles built around the keyword) is done once per keyword, and the generic pool's
  postings are made once per site and city.
"""

import base64
import hashlib
import random
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from . import crossposts, vocab
from .cities import LOCAL_CITIES, NATIONWIDE
from .market import Market
from .sites import imitation

CST = timezone(timedelta(hours=8))
SHARED_POOL = 40
KEYWORD_CACHE = 4096  # keywords whose drawn lists are kept (LRU)
# Default per-keyword totals when no --postings range is given: (weight, low, high). Includes empty
# keywords and keywords past every site's reachable cap (300 to 1000 postings).
DEFAULT_SPREAD = ((8, 0, 0), (30, 1, 60), (30, 61, 300), (20, 301, 1000), (12, 1001, 1600))
MAX_AGE = 30 * 86400  # publish times count back up to 30 days
_EXPERIENCE = (0, 2, 3, 3, 4, 4, 5, 6)
_MONTHS = (12, 12, 12, 12, 13, 13, 14, 15, 16)
_DEGREE = (0, 1, 2, 2, 2, 2, 3, 5, 6)
_HR_GIVEN2 = ("", *vocab.GIVEN)
_CLOCK = tuple(f"{m // 60:02d}:{m % 60:02d}" for m in range(24 * 60))  # "HH:MM" by minute of the day
# Every combination a posting may draw, made once: one remainder of the posting's bits picks one.
_HR_NAMES = tuple(s + g1 + g2 for s in vocab.SURNAMES for g1 in vocab.GIVEN for g2 in _HR_GIVEN2)
_MISC = tuple((m, d, t) for m in _MONTHS for d in _DEGREE for t in vocab.HR_TITLES)  # months, degree, HR title
_WELFARES = tuple((vocab.WELFARE * 2)[start : start + k] for start in range(len(vocab.WELFARE)) for k in range(6))
_SHARED_SKILLS = tuple((vocab.SOFT_SKILLS * 2)[start : start + 3] for start in range(len(vocab.SOFT_SKILLS)))


def _pay_table(base):
    """1024 (low, high) monthly pays around one experience level's base."""
    table = []
    for i in range(32):
        low = _round_pay(max(3000, base * (0.7 + 0.8 * (i + 0.5) / 32)))
        table += [(low, _round_pay(low * (1.3 + 0.7 * (j + 0.5) / 32))) for j in range(32)]
    return tuple(table)


def _round_pay(yuan):
    """Sites show pay as 8-13K / 1.5-2.5万: round to 500 yuan, or to 1000 from ten thousand up."""
    step = 1000 if yuan >= 10000 else 500
    return int(yuan // step * step)


_PAY = tuple(_pay_table(base) for base in vocab.SALARY_BASE)


def stable_hash(*parts):
    """A 64-bit hash of the parts that does not change between processes (unlike hash())."""
    raw = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "big")


def fraction(h):
    """A 64-bit hash as a float in [0, 1): `fraction(h) < rate` draws with probability `rate`."""
    return (h >> 11) / float(1 << 53)


def rng_for(*parts):
    return random.Random(stable_hash(*parts))


@dataclass(frozen=True, eq=False)  # hashed by identity: the sites key their per-company parts by it, cheaply
class Company:
    full_name: str
    short_name: str
    number: int  # 9 digits; the site ids of the company derive from it
    industry: int  # index into vocab.INDUSTRIES (each site's imitation names it: its industries)
    size: int  # bucket index into vocab.SIZES (and each imitation's sizes)
    kind: int  # index into vocab.KINDS (and each imitation's kinds)
    stage: str


@dataclass(slots=True)  # not frozen: a frozen dataclass is several times slower to build, and we build many
class Posting:
    """One posting, site-neutral; each site module renders it in its own format."""

    id: str
    title: str
    company: Company
    city: object  # cities.City where the job is
    district: str
    district_abbr: str
    area: str
    salary_min: int  # yuan a month
    salary_max: int
    months: int
    experience: int  # index into vocab.EXPERIENCE (and each imitation's experience)
    degree: int  # index into vocab.DEGREE (and each imitation's degree)
    skills: tuple
    welfare: tuple
    published_ts: int  # epoch seconds
    published_text: str  # "YYYY-MM-DD HH:MM:SS" in UTC+8
    hr_name: str
    hr_title: str
    lat: float
    lng: float

    @property
    def published(self):
        return datetime.fromtimestamp(self.published_ts, CST)

    @property
    def token(self):
        """A long url-safe string, for a site's security id and the like."""
        return base64.urlsafe_b64encode(hashlib.blake2b(self.id.encode(), digest_size=36).digest()).decode()


class KeywordList:
    """One (site, city, keyword)'s slots, drawn lazily from one seeded random.Random as far as asked."""

    __slots__ = (
        "world",
        "site",
        "city",
        "keyword",
        "total",
        "slots",
        "_rng",
        "_cross",
        "_plan",
        "_gone",
        "_drawn",
        "_at",
        "_seen",
        "_pool",
        "titles",
        "skills",
        "technical",
    )

    def __init__(self, world, site, city, keyword):
        self.world, self.site, self.city, self.keyword = world, site, city, keyword
        n = world.total(site, city, keyword)
        # the market's day: the first positions gone, new ones after the last (market.py)
        self._gone = min(world.market.retire.get(keyword, 0), n)
        self._drawn = n + world.market.hire.get(keyword, 0)
        self.total = self._drawn - self._gone
        rng = self._rng = rng_for(world.seed, "slots", site, city.name, keyword)
        self._cross = rng_for(world.seed, "cross", city.name, keyword)  # one stream for every site
        self._plan = crossposts.plan(site)  # its part in the cross-posts
        n_shared = 0 if n < 2 else min(n // 15 + 1, SHARED_POOL)
        shared = [0] + rng.sample(range(1, SHARED_POOL), n_shared - 1) if n_shared else []
        self._at = dict(zip(sorted(rng.sample(range(n), n_shared)), shared))
        self._pool = world.shared_pool(site, city) if n_shared else ()
        self._seen = {self._pool[j][0] for j in shared}
        self.slots = []
        kw = keyword.strip() or "综合岗"
        self.technical = kw.isascii()
        titles = (t.format(kw=kw) for t in (vocab.TECH_TITLES if self.technical else vocab.PLAIN_TITLES))
        self.titles = tuple((t, "实习" in t) for t in titles)  # (title, is an internship)
        pool = vocab.TECH_SKILLS if self.technical else vocab.SOFT_SKILLS
        # the keyword, then a run of one to four skills of the pool from any start, wrapping
        self.skills = tuple((kw, *(pool * 2)[i : i + k]) for i in range(len(pool)) for k in range(1, 5))

    def upto(self, end):
        """The slots [0, end) (fewer if the keyword has fewer), drawing what was not drawn yet."""
        slots = self.slots
        end = min(end + self._gone, self._drawn)
        if len(slots) < end:
            at, pool, seen, site = self._at, self._pool, self._seen, self.site
            getrandbits, make_id = self._rng.getrandbits, self.world.make_id
            cross_bits, draw_cross, plan = self._cross.getrandbits, crossposts.draw, self._plan
            for i in range(len(slots), end):
                cross = draw_cross(cross_bits, plan)  # drawn at every position, so the sites stay in step
                j = at.get(i)
                if j is not None:
                    slots.append(pool[j])
                    continue
                if cross is not None:
                    pid = make_id(site, cross[0], cross[1])
                    if pid not in seen:
                        seen.add(pid)
                        slots.append((pid, cross[2], cross[1], crossposts.CROSS - i))
                        continue
                while True:  # a collision inside one list would make pages disagree: draw again
                    idbits = getrandbits(64)
                    company = idbits % vocab.COMPANY_POOL
                    pid = make_id(site, idbits // vocab.COMPANY_POOL, company)
                    if pid not in seen:
                        break
                seen.add(pid)
                slots.append((pid, getrandbits(128), company, -1))
        return slots[self._gone :] if self._gone else slots


class World:
    """All postings of one seed. `postings=(lo, hi)` fixes the range of per-keyword totals."""

    def __init__(self, seed=0, postings=None, today=None):
        self.seed = seed
        self.postings = postings
        today = today or datetime.now(CST).date()
        # Publish times count back from today's midnight, so they are stable for the day.
        self.anchor = datetime(today.year, today.month, today.day, tzinfo=CST)
        self._anchor_ts = int(self.anchor.timestamp())
        first_day = today - timedelta(days=MAX_AGE // 86400 + 1)
        self._day_base = first_day.toordinal()
        self._days = [(first_day + timedelta(days=d)).isoformat() for d in range(MAX_AGE // 86400 + 2)]
        self._lists = OrderedDict()
        self._pools = {}
        self._shared = {}
        self._places = {}
        self._companies = {}
        self._id_forms = {}  # each site's make_id (its imitation's)
        self.market = Market.from_environment()  # the day's changes (market.py)

    def total(self, site, city, keyword):
        """How many postings the keyword has in the city (before any site cap)."""
        return self.market.total(keyword, self._total(site, city, keyword))

    def _total(self, site, city, keyword):
        h = stable_hash(self.seed, "total", site, city.name, keyword)
        if self.postings is not None:
            lo, hi = self.postings
            return lo + h % (hi - lo + 1)
        pick = h % sum(w for w, _, _ in DEFAULT_SPREAD)
        for weight, lo, hi in DEFAULT_SPREAD:
            if pick < weight:
                return lo + (h >> 16) % (hi - lo + 1)
            pick -= weight
        raise AssertionError("unreachable")

    def keyword(self, site, city, keyword):
        """The keyword's KeywordList (LRU-cached: paging through a keyword draws each slot once)."""
        key = (site, city.name, keyword)
        lists = self._lists
        found = lists.get(key)
        if found is None:
            found = lists[key] = KeywordList(self, site, city, keyword)
            if len(lists) > KEYWORD_CACHE:
                lists.popitem(last=False)
        else:
            lists.move_to_end(key)
        return found

    def slots(self, site, city, keyword, end=None):
        """The keyword's result list (its first `end` slots), in page order."""
        found = self.keyword(site, city, keyword)
        return found.upto(found.total if end is None else end)

    def shared_pool(self, site, city):
        """The per-(site, city) pool of generic postings' slots; they do not depend on any keyword."""
        pool = self._pools.get((site, city.name))
        if pool is None:
            pool = []
            for j in range(SHARED_POOL):
                rng = rng_for(self.seed, "shared", site, city.name, j)
                idbits = rng.getrandbits(64)
                company = idbits % vocab.COMPANY_POOL
                pool.append(
                    (self.make_id(site, idbits // vocab.COMPANY_POOL, company), rng.getrandbits(128), company, j)
                )
            self._pools[(site, city.name)] = pool
        return pool

    def make_id(self, site, n, company):
        """The site's id for a posting from random bits `n` and company `company` (its imitation's form)."""
        form = self._id_forms.get(site)
        if form is None:
            form = self._id_forms[site] = imitation(site).make_id
        return form(n, self.company(site, company))

    def company(self, site, index):
        """Company `index` of the pool the sites share (cached: there are only COMPANY_POOL of them)."""
        company = self._companies.get((site, index))
        if company is None:
            company = self._companies[(site, index)] = self._new_company(index)
        return company

    def _new_company(self, index):
        rng = rng_for(self.seed, "company", index)
        home = rng.choice(LOCAL_CITIES).name
        core = rng.choice(vocab.NAME_CHARS) + rng.choice(vocab.NAME_CHARS)
        industry = rng.randrange(len(vocab.INDUSTRIES))
        # a sixth of the brands are unlike the legal name (抖音 of 北京字节跳动科技有限公司)
        brand = core if rng.randrange(6) else rng.choice(vocab.NAME_CHARS) + rng.choice(vocab.NAME_CHARS)
        return Company(
            full_name=f"{home}{core}{vocab.INDUSTRIES[industry][1]}有限公司",
            short_name=brand + rng.choice(("", "科技", "集团", "网络")),
            number=100_000_000 + rng.randrange(900_000_000),
            industry=industry,
            size=rng.randrange(len(vocab.SIZES)),
            kind=rng.randrange(len(vocab.KINDS)),
            stage=rng.choice(vocab.STAGES),
        )

    def posting(self, site, city, keyword, slot):
        """The full posting behind one slot; shared slots do not depend on the keyword (and are cached)."""
        if slot[3] >= 0:
            key = (site, city.name, slot[3])
            made = self._shared.get(key)
            if made is None:
                made = self._shared[key] = self._posting(site, city, None, slot)
            return made
        return self._posting(site, city, self.keyword(site, city, keyword), slot)

    def _place(self, city):
        """The city's (district, abbr, area) spots and 1024 latitudes and longitudes around it (made once)."""
        made = self._places.get(city.name)
        if made is None:
            spots = tuple((d, abbr, area) for d, abbr, areas in city.districts for area in areas)
            lats = tuple(round(city.lat - 0.15 + 0.3 * (i + 0.5) / 1024, 6) for i in range(1024))
            lngs = tuple(round(city.lng - 0.15 + 0.3 * (i + 0.5) / 1024, 6) for i in range(1024))
            made = self._places[city.name] = (spots, len(spots), lats, lngs)
        return made

    def _posting(self, site, city, words, slot):
        pid, b, company, shared = slot
        # Each choice takes a remainder off the slot's 128 random bits (about 80 are used), mostly as an
        # index into a table of every combination made once at import (pay, welfare, HR names …).
        if city.name == NATIONWIDE:
            b, r = divmod(b, len(LOCAL_CITIES))
            where = LOCAL_CITIES[r]
        else:
            where = city
        spots, n_spots, lats, lngs = self._place(where)
        b, r = divmod(b, n_spots)
        district, abbr, area = spots[r]
        if words is None:
            title, intern = vocab.SHARED_TITLES[shared % len(vocab.SHARED_TITLES)], False
            b, r = divmod(b, len(_SHARED_SKILLS))
            skills = _SHARED_SKILLS[r]
        else:
            b, r = divmod(b, len(words.titles))
            title, intern = words.titles[r]
            if shared <= crossposts.CROSS:
                title = crossposts.decorated(site, pid, title)
            b, r = divmod(b, len(words.skills))
            skills = words.skills[r]
        b, r = divmod(b, len(_EXPERIENCE))
        experience = 1 if intern else _EXPERIENCE[r]
        b, r = divmod(b, 1024)
        low, high = _PAY[experience][r]
        b, r = divmod(b, len(_MISC))
        months, degree, hr_title = _MISC[r]
        b, r = divmod(b, len(_WELFARES))
        welfare = _WELFARES[r]
        b, r = divmod(b, len(_HR_NAMES))
        hr_name = _HR_NAMES[r]
        b, age = divmod(b, MAX_AGE - 600 + 1)
        ts = self._anchor_ts - 600 - age
        days, secs = divmod(ts + 8 * 3600, 86400)
        published = f"{self._days[days + 719163 - self._day_base]} {_CLOCK[secs // 60]}:{secs % 60:02d}"
        return Posting(
            pid,
            title,
            self.company(site, company),
            where,
            district,
            abbr,
            area,
            low,
            high,
            months,
            experience,
            degree,
            skills,
            welfare,
            ts,
            published,
            hr_name,
            hr_title,
            lats[(b >> 10) & 1023],
            lngs[b & 1023],
        )
