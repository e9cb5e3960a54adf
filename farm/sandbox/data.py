"""Deterministic job postings: the same (seed, site, city, keyword) always gives the same postings.

Nothing is random at run time: every choice comes from a blake2b hash of the seed and what is being chosen,
so ids are stable across requests and across restarts, and two processes with one seed serve one world.

A keyword's result list is a sequence of *slots*. Most slots are postings of that keyword alone; a few are
taken from a small per-(site, city) pool of generic postings (储备干部, 项目经理 …) that every keyword of that
site and city may show, which is what makes de-duplication matter. Slot 0 of the pool is in every list of two
or more postings, so any two such keywords of one site and city share at least one id.
"""

import base64
import hashlib
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .cities import LOCAL_CITIES, NATIONWIDE
from . import vocab

CST = timezone(timedelta(hours=8))
SHARED_POOL = 40
# Default per-keyword totals when no --postings range is given: (weight, low, high). Includes empty
# keywords and keywords past every site's reachable cap (boss 300, zhilian 300, qcwy 1000).
DEFAULT_SPREAD = ((8, 0, 0), (30, 1, 60), (30, 61, 300), (20, 301, 1000), (12, 1001, 1600))


def stable_hash(*parts):
    """A 64-bit hash of the parts that does not change between processes (unlike hash())."""
    raw = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "big")


def rng_for(*parts):
    return random.Random(stable_hash(*parts))


class Draws:
    """random.Random's choice/uniform/randint/sample, drawn from one 512-bit hash of the parts.

    A posting makes about forty choices and is generated for every page served; taking them off one big
    integer is several times cheaper than seeding and calling random.Random, and just as deterministic.
    """

    __slots__ = ("n",)

    def __init__(self, *parts):
        raw = "\x1f".join(str(p) for p in parts).encode()
        self.n = int.from_bytes(hashlib.blake2b(raw, digest_size=64).digest(), "big")

    def below(self, k):
        self.n, value = divmod(self.n, k)
        return value

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def randint(self, low, high):
        return low + self.below(high - low + 1)

    def uniform(self, low, high):
        return low + (high - low) * self.below(1 << 16) / (1 << 16)

    def sample(self, seq, k):
        """k distinct items: a run of the sequence from a drawn start, wrapping (cheaper than shuffling)."""
        start = self.below(len(seq))
        return [seq[(start + i) % len(seq)] for i in range(k)]


@dataclass(frozen=True)
class Company:
    full_name: str
    short_name: str
    number: int  # 9 digits; the site ids of the company derive from it
    industry: tuple  # (boss, qcwy, zhilian) names
    size: int  # bucket index into vocab.SIZES
    kind: int  # index into vocab.KINDS
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
    experience: int  # index into vocab.EXPERIENCE
    degree: int  # index into vocab.DEGREE
    skills: tuple
    welfare: tuple
    published: datetime
    hr_name: str
    hr_title: str
    lat: float
    lng: float
    token: str  # a long url-safe string for boss securityId and similar


class World:
    """All postings of one seed. `postings=(lo, hi)` fixes the range of per-keyword totals."""

    def __init__(self, seed=0, postings=None, today=None):
        self.seed = seed
        self.postings = postings
        today = today or datetime.now(CST).date()
        # Publish times count back from today's midnight, so they are stable for the day.
        self.anchor = datetime(today.year, today.month, today.day, tzinfo=CST)
        self._slots = {}
        self._companies = {}

    def total(self, site, city, keyword):
        """How many postings the keyword has in the city (before any site cap)."""
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

    def slots(self, site, city, keyword):
        """The keyword's result list as (key, id) pairs, in page order. Cached: it is read on every page."""
        cache_key = (site, city.name, keyword)
        slots = self._slots.get(cache_key)
        if slots is None:
            if len(self._slots) > 20000:
                self._slots.clear()
            slots = self._slots[cache_key] = self._build_slots(site, city, keyword)
        return slots

    def _build_slots(self, site, city, keyword):
        n = self.total(site, city, keyword)
        rng = rng_for(self.seed, "slots", site, city.name, keyword)
        n_shared = 0 if n < 2 else min(n // 15 + 1, SHARED_POOL)
        shared = [0] + rng.sample(range(1, SHARED_POOL), n_shared - 1) if n_shared else []
        at = dict(zip(sorted(rng.sample(range(n), n_shared)), shared))
        slots, seen, unique = [], set(), 0
        for i in range(n):
            if i in at:
                key = ("s", at[i])
                pid = self._id(site, city, key, 0)
            else:
                key, salt = ("u", keyword, unique), 0
                unique += 1
                pid = self._id(site, city, key, salt)
                while pid in seen:  # a hash collision inside one list would make pages disagree
                    salt += 1
                    pid = self._id(site, city, key, salt)
                key = key + (salt,)
            seen.add(pid)
            slots.append((key, pid))
        return slots

    def _id(self, site, city, key, salt):
        h = hashlib.blake2b(repr((self.seed, site, city.name, key, salt)).encode(), digest_size=16).digest()
        n = int.from_bytes(h, "big")
        if site == "boss":
            suffix = "".join(vocab.ID_CHARS[(n >> (5 * i)) % len(vocab.ID_CHARS)] for i in range(4))
            return f"{h.hex()[:11]}{'0' * 15}{suffix}"
        if site == "qcwy":
            return str(100_000_000 + n % 900_000_000)
        company = self.company(site, self._company_index(site, city, key))
        return f"CC{company.number}J{40_000_000_000 + n % 60_000_000_000}"

    def _company_index(self, site, city, key):
        base = key[:3] if key[0] == "u" else key  # without the collision salt, so id and posting agree
        return stable_hash(self.seed, "company-of", site, city.name, base) % vocab.COMPANY_POOL

    def company(self, site, index):
        """Company `index` of the site's pool (cached: there are only COMPANY_POOL of them)."""
        company = self._companies.get((site, index))
        if company is None:
            company = self._companies[(site, index)] = self._new_company(site, index)
        return company

    def _new_company(self, site, index):
        rng = rng_for(self.seed, "company", site, index)
        home = rng.choice(LOCAL_CITIES).name
        core = rng.choice(vocab.NAME_CHARS) + rng.choice(vocab.NAME_CHARS)
        industry = rng.choice(vocab.INDUSTRIES)
        return Company(
            full_name=f"{home}{core}{industry[3]}有限公司",
            short_name=core + rng.choice(("", "科技", "集团", "网络")),
            number=100_000_000 + rng.randrange(900_000_000),
            industry=industry[:3],
            size=rng.randrange(len(vocab.SIZES["boss"])),
            kind=rng.randrange(len(vocab.KINDS["qcwy"])),
            stage=rng.choice(vocab.STAGES),
        )

    def posting(self, site, city, keyword, slot):
        """The full posting behind one slot; shared slots do not depend on the keyword."""
        key, pid = slot
        rng = Draws(self.seed, "posting", site, city.name, key)
        where = rng.choice(LOCAL_CITIES) if city.name == NATIONWIDE else city
        district, abbr, areas = rng.choice(where.districts)
        if key[0] == "s":
            title = vocab.SHARED_TITLES[key[1] % len(vocab.SHARED_TITLES)]
            skills = tuple(rng.sample(vocab.SOFT_SKILLS, 3))
        else:
            title, skills = vocab.title_and_skills(keyword, rng)
        experience = 1 if "实习" in title else rng.choice((0, 2, 3, 3, 4, 4, 5, 6))
        low = _round_pay(max(3000, vocab.SALARY_BASE[experience] * rng.uniform(0.7, 1.5)))
        high = _round_pay(low * rng.uniform(1.3, 2.0))
        return Posting(
            id=pid,
            title=title,
            company=self.company(site, self._company_index(site, city, key)),
            city=where,
            district=district,
            district_abbr=abbr,
            area=rng.choice(areas),
            salary_min=low,
            salary_max=high,
            months=rng.choice((12, 12, 12, 12, 13, 13, 14, 15, 16)),
            experience=experience,
            degree=rng.choice((0, 1, 2, 2, 2, 2, 3, 5, 6)),
            skills=skills,
            welfare=tuple(rng.sample(vocab.WELFARE, rng.randint(0, 5))),
            published=self.anchor - timedelta(seconds=rng.randint(600, 30 * 86400)),
            hr_name=rng.choice(vocab.SURNAMES) + rng.choice(vocab.GIVEN) + rng.choice(("", *vocab.GIVEN)),
            hr_title=rng.choice(vocab.HR_TITLES),
            lat=round(where.lat + rng.uniform(-0.15, 0.15), 6),
            lng=round(where.lng + rng.uniform(-0.15, 0.15), 6),
            token=base64.urlsafe_b64encode(hashlib.blake2b(pid.encode(), digest_size=36).digest()).decode(),
        )


def _round_pay(yuan):
    """Sites show pay as 8-13K / 1.5-2.5万: round to 500 yuan, or to 1000 from ten thousand up."""
    step = 1000 if yuan >= 10000 else 500
    return int(yuan // step * step)
