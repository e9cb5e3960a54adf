"""Postings into openings, incrementally and deterministically, each join explained.

A posting joins an opening when all hold:

- the same city;
- the same company: equal keys (farm.openings.names), a known brand ↔ legal-name pair, or one key the
  start of the other (腾讯 / 腾讯计算机系统);
- a like title: character-bigram Jaccard of the undecorated titles at least ``title_threshold``;
- overlapping salary ranges (a posting without a salary figure overlaps any);
- the opening has no posting of the posting's site yet (a site's own ids already tell its postings apart).

Among the openings that qualify it joins the one with the most alike title, then the oldest; with none, it
opens a new one. Postings are added in the order given (farm reads them by first seen, site, id), so the
same postings give the same openings. Where a (city, company) holds many openings, candidates come from a
MinHash LSH over the titles' bigrams (datasketch), not from reading them all.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from datasketch import MinHash, MinHashLSH

from farm.openings.names import CompanyNames, company_key
from farm.openings.titles import bigrams, similarity, title_key

LSH_FROM = 64  # openings in one (city, company) before candidates come from the LSH
PERMUTATIONS = 32


@dataclass(frozen=True)
class Posting:
    source: str
    job_id: str
    title: str | None
    company: str | None
    city: str | None
    salary_min: int | None = None
    salary_max: int | None = None


@dataclass
class Opening:
    id: int
    city: str
    company_key: str
    title_key: str
    salary_min: int | None
    salary_max: int | None
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
        self._blocks: dict[tuple[str, str], list[int]] = defaultdict(list)
        self._keys_by_start: dict[tuple[str, str], set[str]] = defaultdict(set)  # (city, 2 chars) -> keys
        self._lsh: dict[tuple[str, str], MinHashLSH] = {}

    def add(self, posting: Posting) -> Why:
        """Put the posting in its opening (a posting added twice keeps its first)."""
        key = (posting.source, posting.job_id)
        if key in self.why:
            return self.why[key]
        city = posting.city or ""
        company = self.names.key(posting.company)
        same = "paired" if company != company_key(posting.company) else "equal"
        title = title_key(posting.title)
        best = None
        for opening, how in self._candidates(city, company, title, same):
            if posting.source in opening.sources:
                continue
            if not salaries_overlap(posting.salary_min, posting.salary_max, opening.salary_min, opening.salary_max):
                continue
            alike = similarity(title, opening.title_key)
            if alike < self.title_threshold:
                continue
            rank = (-alike, opening.id)
            if best is None or rank < best[0]:
                best = (rank, opening, how, alike)
        if best is None:
            opening = self._open(city, company, title, posting)
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

    def _open(self, city: str, company: str, title: str, posting: Posting) -> Opening:
        opening = Opening(len(self.openings) + 1, city, company, title, posting.salary_min, posting.salary_max)
        self.openings.append(opening)
        block = self._blocks[(city, company)]
        block.append(opening.id)
        if company:
            self._keys_by_start[(city, company[:2])].add(company)
        lsh = self._lsh.get((city, company))
        if lsh is None and len(block) >= LSH_FROM:
            lsh = self._lsh[(city, company)] = MinHashLSH(threshold=self.title_threshold * 0.8, num_perm=PERMUTATIONS)
            for earlier in block:
                lsh.insert(earlier, _minhash(self.openings[earlier - 1].title_key))
        elif lsh is not None:
            lsh.insert(opening.id, _minhash(title))
        return opening

    def _candidates(self, city: str, company: str, title: str, same: str):
        """(opening, how the company matched): the same key's (equal, or through a pair), then the prefix keys'."""
        if not company:
            return
        keys = [(company, same)]
        for other in sorted(self._keys_by_start.get((city, company[:2]), ())):
            if other != company and (other.startswith(company) or company.startswith(other)):
                keys.append((other, "prefix"))
        for key, how in keys:
            lsh = self._lsh.get((city, key))
            ids = sorted(lsh.query(_minhash(title))) if lsh is not None else self._blocks.get((city, key), ())
            for opening_id in ids:
                yield self.openings[opening_id - 1], how


def _minhash(title: str) -> MinHash:
    minhash = MinHash(num_perm=PERMUTATIONS, seed=1)
    minhash.update_batch([gram.encode() for gram in sorted(bigrams(title))])
    return minhash
