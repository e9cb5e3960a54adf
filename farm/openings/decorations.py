"""Title decorations learnt from the postings: the affixes one job's title carries on one site and not on
another, where their form does not give them away.

farm.openings.titles takes decorations off by their form (a bracketed tag, a ``+`` tail, an urgency word
before the title, a perk or work mode after a dash). What a site adds in another form stays in the key:
``Python开发工程师-可转正`` is ``python开发工程师可转正``, and its pair with ``Python开发工程师`` on another
site is alike, not equal, or not even alike. A simple model finds them in the postings:

- in each (city, company), a title key that is another key of the block with 2 to MOST_CHARS characters
  more at its start or its end proposes that affix (a prefix or a suffix);
- each pair of postings of the two titles on two sites is weighed by the rest of its evidence (the prior,
  place, pay, degree and experience, with the weights set by hand): for a join, it is one job's pair;
- an affix is a decoration where one job's pairs are seen at FEWEST companies at least and make at least
  SHARE of its pairs. A word that tells two jobs apart (高级, 实习生) meets its plain title at one company
  too, but between postings whose pay, place, degree or experience differ.

At most PER_TITLE postings of a title in a block are weighed, so a title posted a thousand times costs no
more than a few. The same postings give the same decorations; farm.openings.stored learns them with the
evidence's weights and stores them beside them, since every opening's title key and blocking keys are
made with them.
"""

from collections import defaultdict
from collections.abc import Iterable

from farm.openings.cluster import PostingSeen, side_of
from farm.openings.evidence import SET_BY_HAND, Side, evidence
from farm.openings.names import CompanyNames
from farm.openings.titles import KEPT, Decorations, title_key

MOST_CHARS = 6  # an affix's length, at most
FEWEST = 3  # companies with one job's pairs across an affix
SHARE = 0.6  # of an affix's pairs, one job's at least
PER_TITLE = 8
WHERE = ("title_prefix", "title_suffix")


def decorations_of(postings: Iterable[PostingSeen], names: CompanyNames) -> Decorations:
    """The decorations the postings show (see the module's docstring)."""
    blocks: dict[tuple[str, str], dict[str, list[tuple[str, Side]]]] = defaultdict(dict)
    for posting in postings:
        company, title = names.key(posting.company), title_key(posting.title)
        if company and title:
            same = blocks[(posting.city or "", company)].setdefault(title, [])
            if len(same) < PER_TITLE:
                same.append((posting.source, side_of(posting)))
    pairs: dict[tuple[str, str], int] = defaultdict(int)
    one_job: dict[tuple[str, str], int] = defaultdict(int)
    companies: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (_, company), titles in blocks.items():
        for title, sides in titles.items():
            for n in range(2, min(MOST_CHARS, len(title) - KEPT) + 1):
                for where, affix, rest in zip(WHERE, (title[:n], title[-n:]), (title[n:], title[:-n]), strict=True):
                    for site, side in sides if rest in titles else ():
                        for other_site, other_side in titles[rest]:
                            if site != other_site:
                                pairs[(where, affix)] += 1
                                if _for_a_join(side, other_side):
                                    one_job[(where, affix)] += 1
                                    companies[(where, affix)].add(company)
    return Decorations.from_rows(
        found for found, n in pairs.items() if len(companies[found]) >= FEWEST and one_job[found] >= SHARE * n
    )


def _for_a_join(side: Side, other: Side) -> bool:
    """Whether the evidence but the company's and the title's is for a join."""
    score, weighed = evidence("equal", side, other, SET_BY_HAND)
    return score - sum(weight for name, _, weight in weighed if name in ("company", "title")) > 0
