"""Imitation: what one site's imitation adds to the world every site shares (docs/addon.md, *A site package*).

The world (data.py) draws each posting once, site-neutral: random bits for its id, a company of the shared
pool, and levels (of experience, degree, a company's size, kind and industry) as indices. A site's imitation
(its package's sandbox.py) shows them its own way, and its ``IMITATION`` says how, so that nothing here
names a site:

- ``experience``, ``degree``, ``sizes``, ``kinds``, ``industries``: its words for each level, as many as
  vocab.py's, which are the words of a site that gives none;
- ``make_id``: its id of a posting, from the posting's random bits and its company;
- ``id_salt`` and ``decorations``: its part in cross-posts (crossposts.py): the odd number its ids of a
  cross-post are drawn with (None: it shows no cross-post), the forms of its titles (``{}`` the title);
- ``hostile``: the fields of its items that hostile postings spoil (hostile.py; None: none are);
- ``faults``: its own fault kinds (faults.py), each a FaultKind;
- ``search``: what its search request is to a WAF (coherence.py): ``fetch``, the API a page fetches, or
  ``navigate``, a page of its own.

A site's sandbox.py without an ``IMITATION`` is shown by DEFAULT.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import vocab

if TYPE_CHECKING:
    from .data import Company, World
    from .faults import FaultConfig
    from .hostile import Fields
    from .results import Query

# a fault's answer: (the query, the fault's hash, the world, the fault config) -> (status, content type, body)
Answer = Callable[["Query", int, "World", "FaultConfig"], tuple[int, str, bytes]]
SEARCHES = ("fetch", "navigate")


@dataclass(frozen=True)
class FaultKind:
    """One fault of a site's own: ``name`` is its kind in a fault config, ``description`` its line in `farm
    sandbox --help`, ``answer`` what the site sends. A ``shape`` (a refusal shape no spider may be tested
    against by default) is drawn only when a config names it."""

    name: str
    description: str
    answer: Answer
    shape: bool = False


def plain_id(n: int, company: "Company") -> str:
    """The id of a posting on a site that gives no form of its own: its company's number and 12 digits."""
    return f"{company.number}-{n % 10**12:012d}"


@dataclass(frozen=True)
class Imitation:
    """One site's words, ids, cross-posts, hostile fields, faults and kind of search (the module's docstring)."""

    experience: tuple[str, ...] = vocab.EXPERIENCE
    degree: tuple[str, ...] = vocab.DEGREE
    sizes: tuple[str, ...] = vocab.SIZES
    kinds: tuple[str, ...] = vocab.KINDS
    industries: tuple[str, ...] = tuple(name for name, _ in vocab.INDUSTRIES)
    make_id: Callable[[int, "Company"], str] = plain_id
    id_salt: int | None = None
    decorations: tuple[str, ...] = ("{}",)
    hostile: "Fields | None" = None
    faults: tuple[FaultKind, ...] = ()
    search: str = "navigate"

    def __post_init__(self) -> None:
        levels = {"experience": vocab.EXPERIENCE, "degree": vocab.DEGREE, "sizes": vocab.SIZES, "kinds": vocab.KINDS}
        for name, words in {**levels, "industries": vocab.INDUSTRIES}.items():
            if len(getattr(self, name)) != len(words):
                raise ValueError(f"imitation {name}: one word for each of its {len(words)} levels (vocab.py)")
        if self.id_salt is not None and not self.id_salt & 1:
            raise ValueError(f"imitation id_salt {self.id_salt:#x}: an odd number, so that no two bits give one id")
        if self.search not in SEARCHES:
            raise ValueError(f"imitation search {self.search!r}: one of {', '.join(SEARCHES)}")

    def fault(self, name: str) -> FaultKind | None:
        """Its own fault kind of ``name``, or None."""
        return next((kind for kind in self.faults if kind.name == name), None)


DEFAULT = Imitation()
