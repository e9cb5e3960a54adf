"""Postings into openings, incrementally and deterministically, each join explained.

A posting joins an opening when all hold:

- the same city;
- the same company: equal keys (farm.openings.names), a known brand ↔ legal-name pair, or one key the
  start of the other (腾讯 / 腾讯计算机系统);
- a like title: character-bigram Jaccard of the undecorated titles at least ``title_threshold``;
- overlapping salary ranges (a posting without a salary figure overlaps any);
- the same district and the same degree asked for, where both name one (farm.openings.details);
- the opening has no posting of the posting's site yet (a site's own ids already tell its postings apart).

Among the openings that qualify it joins the one with the most alike title, then the oldest; with none, it
opens a new one. Postings are added in the order given (farm reads them by first seen, site, id), so the
same postings give the same openings. Where a (city, company) holds many titles, candidates come from a
MinHash LSH over the titles' bigrams (datasketch), not from reading them all; a title's MinHash is made once.
"""

import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from functools import lru_cache

from datasketch import MinHash, MinHashLSH

from farm.openings.details import agree, degree_of, district_of
from farm.openings.names import CompanyNames, company_key
from farm.openings.titles import bigrams, similarity, title_key

LSH_FROM = 64  # titles in one (city, company) before candidates come from the LSH
PERMUTATIONS = 32


@dataclass(frozen=True)
class PostingSeen:
    """A posting as the clustering compares it."""

    source: str
    job_id: str
    title: str | None
    company: str | None
    city: str | None
    salary_min: int | None = None
    salary_max: int | None = None
    area: str | None = None
    degree: str | None = None
    experience: str | None = None


@dataclass
class Opening:
    id: int
    city: str
    company_key: str
    title_key: str
    salary_min: int | None
    salary_max: int | None
    district: str
    degree: str
    postings: list = field(default_factory=list)  # (source, job_id), in joining order
    sources: set = field(default_factory=set)


@dataclass(frozen=True)
class Why:
    """Why a posting is in its opening: the rule that matched, with the values compared."""

    opening: int
    joined: bool  # False: it opened the opening
    company: str  # "equal", "paired", "prefix", or "" for a new opening
    company_keys: tuple[str, str]
    title_keys: tuple[str, str]
    title_similarity: float
    salary: tuple  # (posting's min, max, opening's min, max)
    district: str = ""  # the district both name, or ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "Why":
        fields = json.loads(text)
        return cls(**{name: tuple(value) if isinstance(value, list) else value for name, value in fields.items()})

    def text(self) -> str:
        if not self.joined:
            return (
                f"opened opening {self.opening}: no opening in its city of company {self.company_keys[0]!r} "
                f"with a title like {self.title_keys[0]!r} and an overlapping salary"
            )
        return (
            f"joined opening {self.opening}: company {self.company} ({self.company_keys[0]!r} ~ "
            f"{self.company_keys[1]!r}), title {self.title_similarity:.2f} alike ({self.title_keys[0]!r} ~ "
            f"{self.title_keys[1]!r}), salary {_range(*self.salary[:2])} overlaps {_range(*self.salary[2:])}"
            + (f", district {self.district}" if self.district else "")
        )


def _range(low, high) -> str:
    return "none" if low is None and high is None else f"{low}-{high}"


def salaries_overlap(low: int | None, high: int | None, other_low: int | None, other_high: int | None) -> bool:
    if low is None or other_low is None:
        return True
    return low <= (other_high or other_low) and other_low <= (high or low)


class Clusterer:
    def __init__(self, names: CompanyNames | None = None, title_threshold: float = 0.85):
        self.names = names or CompanyNames()
        self.title_threshold = title_threshold
        self.openings: list[Opening] = []
        self.why: dict[tuple[str, str], Why] = {}
        # (city, company key) -> title key -> the ids of its openings with that title, oldest first
        self._blocks: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(dict)
        self._keys_by_start: dict[tuple[str, str], set[str]] = defaultdict(set)  # (city, 2 chars) -> keys
        self._lsh: dict[tuple[str, str], MinHashLSH] = {}

    def add(self, posting: PostingSeen) -> Why:
        """Put the posting in its opening (a posting added twice keeps its first)."""
        key = (posting.source, posting.job_id)
        if key in self.why:
            return self.why[key]
        city = posting.city or ""
        company = self.names.key(posting.company)
        same = "paired" if company != company_key(posting.company) else "equal"
        title = title_key(posting.title)
        district, degree = district_of(posting.area), degree_of(posting.degree)
        best = None
        for opening, how, alike in self._candidates(city, company, title, same):
            if posting.source in opening.sources:
                continue
            if not salaries_overlap(posting.salary_min, posting.salary_max, opening.salary_min, opening.salary_max):
                continue
            if not agree(district, opening.district) or not agree(degree, opening.degree):
                continue
            rank = (-alike, opening.id)
            if best is None or rank < best[0]:
                best = (rank, opening, how, alike)
        if best is None:
            opening = self._open(city, company, title, (district, degree), posting)
            why = Why(
                opening.id,
                False,
                "",
                (company, company),
                (title, title),
                1.0,
                (posting.salary_min, posting.salary_max) * 2,
            )
        else:
            _, opening, how, alike = best
            why = Why(
                opening.id,
                True,
                how,
                (company, opening.company_key),
                (title, opening.title_key),
                round(alike, 4),
                (posting.salary_min, posting.salary_max, opening.salary_min, opening.salary_max),
                district if district and district == opening.district else "",
            )
        opening.postings.append(key)
        opening.sources.add(posting.source)
        self.why[key] = why
        return why

    def add_all(self, postings) -> None:
        for posting in postings:
            self.add(posting)

    def opening_of(self, source: str, job_id: str) -> int | None:
        why = self.why.get((source, job_id))
        return None if why is None else why.opening

    def restore(self, opening: Opening) -> None:
        """Take back an opening as stored (farm.openings.stored), in the order of their ids, 1 first, before
        any posting is added; its postings' explanations stay stored (``why`` holds the added ones')."""
        if opening.id != len(self.openings) + 1:
            raise ValueError(f"opening {opening.id} restored after {len(self.openings)} openings")
        self._register(opening)

    def _open(self, city: str, company: str, title: str, details: tuple[str, str], posting: PostingSeen) -> Opening:
        opening = Opening(
            len(self.openings) + 1, city, company, title, posting.salary_min, posting.salary_max, *details
        )
        self._register(opening)
        return opening

    def _register(self, opening: Opening) -> None:
        self.openings.append(opening)
        city, company, title = opening.city, opening.company_key, opening.title_key
        block = self._blocks[(city, company)]
        same_title = block.get(title)
        if same_title is not None:
            same_title.append(opening.id)
            return
        block[title] = [opening.id]
        if company:
            self._keys_by_start[(city, company[:2])].add(company)
        lsh = self._lsh.get((city, company))
        if lsh is None and len(block) >= LSH_FROM:
            lsh = self._lsh[(city, company)] = MinHashLSH(num_perm=PERMUTATIONS, params=_bands(self.title_threshold))
            for earlier in block:
                lsh.insert(earlier, _minhash(earlier))
        elif lsh is not None:
            lsh.insert(title, _minhash(title))

    def _candidates(self, city: str, company: str, title: str, same: str):
        """(opening, how the company matched, how alike its title is) for the openings of a title alike enough:
        the same key's (equal, or through a pair), then the prefix keys'."""
        if not company:
            return
        keys = [(company, same)]
        for other in sorted(self._keys_by_start.get((city, company[:2]), ())):
            if other != company and (other.startswith(company) or company.startswith(other)):
                keys.append((other, "prefix"))
        for key, how in keys:
            block = self._blocks.get((city, key), {})
            lsh = self._lsh.get((city, key))
            for other in lsh.query(_minhash(title)) if lsh is not None else block:
                alike = similarity(title, other)
                if alike >= self.title_threshold:
                    for opening_id in block[other]:
                        yield self.openings[opening_id - 1], how, alike


@lru_cache
def _bands(title_threshold: float) -> tuple[int, int]:
    """The LSH's (bands, rows) for the threshold, worked out once (datasketch integrates for them)."""
    lsh = MinHashLSH(threshold=title_threshold * 0.8, num_perm=PERMUTATIONS)
    return lsh.b, lsh.r


@lru_cache(maxsize=1 << 16)  # titles repeat: a day's postings hold far fewer titles than postings
def _minhash(title: str) -> MinHash:
    minhash = MinHash(num_perm=PERMUTATIONS, seed=1)
    minhash.update_batch([gram.encode() for gram in sorted(bigrams(title))])
    return minhash
