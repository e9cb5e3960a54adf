"""Postings into openings, incrementally and deterministically, each join explained by its evidence.

A posting's candidates are the openings

- of its city;
- of its company: equal keys (farm.openings.names), a known brand ↔ legal-name pair, or one key the start
  of the other (腾讯 / 腾讯计算机系统);
- of a like title: character-bigram Jaccard of the undecorated titles at least ``title_threshold``;
- with no posting of the posting's site yet (a site's own ids already tell its postings apart).

Each candidate is scored by the evidence (farm.openings.evidence): the company's match, the title's being
equal, the place, the pay, the degree and the experience, each for or against; the posting joins the
candidate of the highest score above 0, then the most alike title, then the oldest, and opens a new opening
when none scores above 0. Postings are added in the order given (farm reads them by first seen, site, id),
so the same postings give the same openings. Where a (city, company) holds many titles, candidates come from
a MinHash LSH over the titles' bigrams (datasketch), not from reading them all; of one title's openings, at
most SAME_TITLE of those without the posting's site are scored, oldest first, so one title posted many
times at one company costs no more than a few.
"""

import json
import math
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice

from datasketch import MinHash, MinHashLSH

from farm.openings.details import degree_of, experience_of, place_of
from farm.openings.evidence import SET_BY_HAND, Side, Weights, evidence
from farm.openings.names import CompanyNames, company_key
from farm.openings.titles import NO_DECORATIONS, Decorations, bigrams, similarity
from farm.sites import known_sources

LSH_FROM = 64  # titles in one (city, company) before candidates come from the LSH
PERMUTATIONS = 32
SAME_TITLE = 64  # of one title's openings without the posting's site, those scored


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
    district: str  # the place (farm.openings.details.place_of) of the posting that opened it
    degree: str
    experience: str = ""
    postings: list = field(default_factory=list)  # (source, job_id), in joining order
    sources: set = field(default_factory=set)

    @property
    def side(self) -> Side:
        return Side(self.title_key, self.salary_min, self.salary_max, self.district, self.degree, self.experience)


def side_of(posting: PostingSeen, decorations: Decorations = NO_DECORATIONS) -> Side:
    """The posting's values as the evidence compares them, its title without ``decorations`` too."""
    city = posting.city or ""
    return Side(
        decorations.key(posting.title),
        posting.salary_min,
        posting.salary_max,
        place_of(posting.area, city),
        degree_of(posting.degree),
        experience_of(posting.experience),
    )


def blocking_keys(city: str, company: str, title: str, threshold: float) -> list[str]:
    """The keys an opening is stored under and a posting looks its candidates up by: the city, the company
    key's first two characters and each of the title's first bigrams in one fixed order (by CRC-32), as
    many as prefix filtering needs (|x| − ⌈t·|x|⌉ + 1): two titles whose bigrams' Jaccard index is at least
    ``threshold`` share one of them, and a key that starts another shares its first two characters."""
    grams = sorted(bigrams(title), key=lambda gram: (zlib.crc32(gram.encode()), gram))
    prefix = max(1, len(grams) - math.ceil(threshold * len(grams) - 1e-9) + 1)
    return [f"{city}|{company[:2]}|{gram}" for gram in grams[:prefix]]


@dataclass(frozen=True)
class Why:
    """Why a posting is in its opening: the company and title matched, and the evidence with its weights."""

    opening: int
    joined: bool  # False: it opened the opening
    company: str  # "equal", "paired", "prefix", or "" for a new opening
    company_keys: tuple[str, str]
    title_keys: tuple[str, str]
    title_similarity: float
    salary: tuple  # (posting's min, max, opening's min, max)
    evidence: tuple = ()  # (field, outcome, weight) of the opening joined
    score: float = 0.0

    def to_json(self) -> str:
        # the fields by hand: dataclasses.asdict deep-copies every tuple, and an update writes a row a posting
        return json.dumps({name: getattr(self, name) for name in self.__dataclass_fields__}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "Why":
        fields = json.loads(text)
        known = {name for name in cls.__dataclass_fields__}
        return cls(
            **{
                name: tuple(tuple(v) if isinstance(v, list) else v for v in value) if isinstance(value, list) else value
                for name, value in fields.items()
                if name in known
            }
        )

    def text(self) -> str:
        if not self.joined:
            return (
                f"opened opening {self.opening}: no opening in its city of company {self.company_keys[0]!r} "
                f"with a title like {self.title_keys[0]!r} that the evidence joins it to"
            )
        weighed = ", ".join(f"{name} {outcome} {weight:+g}" for name, outcome, weight in self.evidence)
        return (
            f"joined opening {self.opening}: company {self.company} ({self.company_keys[0]!r} ~ "
            f"{self.company_keys[1]!r}), title {self.title_similarity:.2f} alike ({self.title_keys[0]!r} ~ "
            f"{self.title_keys[1]!r}), salary {_range(*self.salary[:2])} ~ {_range(*self.salary[2:])}"
            + (f"; evidence {self.score:+g}: {weighed}" if self.evidence else "")
        )


def _range(low, high) -> str:
    return "none" if low is None and high is None else f"{low}-{high}"


class Clusterer:
    def __init__(
        self,
        names: CompanyNames | None = None,
        title_threshold: float = 0.85,
        next_id: int = 1,
        weights: Weights = SET_BY_HAND,
        decorations: Decorations = NO_DECORATIONS,
    ):
        self.names = names or CompanyNames()
        self.decorations = decorations  # the title decorations learnt (farm.openings.decorations)
        self.title_threshold = title_threshold
        self.weights = weights  # the evidence's (farm.openings.estimate learns them from the postings)
        self.openings: dict[int, Opening] = {}  # by id: those restored and those opened
        self.opened: list[Opening] = []  # those opened here, in order
        self.next_id = next_id
        self.why: dict[tuple[str, str], Why] = {}
        self.sites = known_sources()  # the registry's (farm.sites): the sites an opening may lack a posting of
        # (city, company key) -> title key -> site -> the ids of its openings with that title without a
        # posting of the site, oldest first (a dict as an ordered set)
        self._blocks: dict[tuple[str, str], dict[str, dict[str, dict[int, None]]]] = defaultdict(dict)
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
        side = side_of(posting, self.decorations)
        title = side.title
        best = None
        for opening, how, alike in self._candidates(city, company, title, same, posting.source):
            score, weighed = evidence(how, side, opening.side, self.weights)
            if score <= 0:
                continue
            rank = (-score, -alike, opening.id)
            if best is None or rank < best[0]:
                best = (rank, opening, how, alike, score, weighed)
        if best is None:
            opening = self._open(city, company, side)
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
            _, opening, how, alike, score, weighed = best
            why = Why(
                opening.id,
                True,
                how,
                (company, opening.company_key),
                (title, opening.title_key),
                round(alike, 4),
                (posting.salary_min, posting.salary_max, opening.salary_min, opening.salary_max),
                weighed,
                score,
            )
        self._join(opening, key)
        self.why[key] = why
        return why

    def add_all(self, postings) -> None:
        for posting in postings:
            self.add(posting)

    def opening_of(self, source: str, job_id: str) -> int | None:
        why = self.why.get((source, job_id))
        return None if why is None else why.opening

    def restore(self, opening: Opening) -> None:
        """Take back an opening as stored (farm.openings.stored), with its postings, before any posting is
        added; its postings' explanations stay stored (``why`` holds the added ones')."""
        if opening.id >= self.next_id:
            raise ValueError(f"opening {opening.id} restored, but openings from {self.next_id} are to be opened")
        self._register(opening)

    def _open(self, city: str, company: str, side: Side) -> Opening:
        opening = Opening(
            self.next_id,
            city,
            company,
            side.title,
            side.salary_min,
            side.salary_max,
            side.place,
            side.degree,
            side.experience,
        )
        self.next_id += 1
        self.opened.append(opening)
        self._register(opening)
        return opening

    def _join(self, opening: Opening, key: tuple[str, str]) -> None:
        opening.postings.append(key)
        if key[0] not in opening.sources:
            opening.sources.add(key[0])
            waiting = self._blocks[(opening.city, opening.company_key)][opening.title_key].get(key[0])
            if waiting is not None:
                waiting.pop(opening.id, None)

    def _register(self, opening: Opening) -> None:
        self.openings[opening.id] = opening
        city, company, title = opening.city, opening.company_key, opening.title_key
        block = self._blocks[(city, company)]
        same_title = block.get(title)
        new_title = same_title is None
        if same_title is None:
            same_title = block[title] = {}
        for site in self.sites:
            if site not in opening.sources:
                same_title.setdefault(site, {})[opening.id] = None
        if not new_title:
            return
        if company:
            self._keys_by_start[(city, company[:2])].add(company)
        lsh = self._lsh.get((city, company))
        if lsh is None and len(block) >= LSH_FROM:
            lsh = self._lsh[(city, company)] = MinHashLSH(num_perm=PERMUTATIONS, params=_bands(self.title_threshold))
            for earlier in block:
                lsh.insert(earlier, _minhash(earlier))
        elif lsh is not None:
            lsh.insert(title, _minhash(title))

    def _candidates(self, city: str, company: str, title: str, same: str, source: str):
        """(opening, how the company matched, how alike its title is) for the openings of a title alike enough
        without a posting of ``source``: the same key's (equal, or through a pair), then the prefix keys'."""
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
                    waiting = block[other].get(source, {})
                    for opening_id in islice(waiting, SAME_TITLE):
                        yield self.openings[opening_id], how, alike


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
