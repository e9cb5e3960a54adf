"""Titles without what sites decorate them with, and how alike two are: the Jaccard index of their
character bigrams.

A title is first put in Unicode's compatibility form (NFKC: full-width letters, digits, brackets and
spaces become their plain forms), then its decorations go, by their form rather than a list of them:

- a bracketed tag anywhere (【急招】, [双休], (五险一金), 「远程」, <热招>);
- everything after a ``+`` (benefits joined on: ``+五险一金+带薪年假``; C++ and C# are kept);
- a leading tag closed by a colon or an exclamation mark (``急招：``), and a leading urgency word: a few
  characters ending in 招 or 聘 before the title (急聘, 名企直招);
- a trailing part after a dash, slash, bar or space that names a perk, a work mode or urgency (``-包吃住``,
  ``/远程``, `` 驻场``): a part with one of PERK_ROOTS.

What is left may still carry a decoration the forms do not catch (``-可转正``, ``大厂直推 ``): those the
postings show are learnt from them (farm.openings.decorations) as ``Decorations``, the affixes taken off a
title's key after the forms.
"""

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

BRACKETED = re.compile(r"【[^】]*】|\[[^\]]*\]|\([^()]*\)|「[^」]*」|『[^』]*』|<[^>]*>|〔[^〕]*〕|《[^》]*》")
PLUS_TAIL = re.compile(r"\+(?![+#]).*$")
LEADING_TAG = re.compile(r"^[^:!]{1,6}[:!]+")
URGENT_LEAD = re.compile(r"^(?:[急热诚直速]|高薪|名企|紧急|火速|大量|长期)[\u4e00-\u9fff]{0,3}?[招聘]+")
TAIL_PART = re.compile(r"[\s\-—–/|~]+([^\s\-—–/|~]+)$")
# what a perk, a work mode or an urgency word holds: a trailing part with one is a decoration
PERK_ROOTS = ("险", "金", "休", "假", "餐", "薪", "补", "包吃", "包住", "福利", "弹性", "远程", "居家", "驻场",
              "坐班", "办公", "急", "招", "聘")  # fmt: skip
PROTECTED = (("c++", "cpp"), ("c#", "csharp"))
NOT_WORD = re.compile(r"[\s\W_]+")
KEPT = 3  # characters a key keeps, at least, once a learnt affix is off


@lru_cache(maxsize=1 << 16)
def title_key(title: str | None) -> str:
    """The title's words only, lower case: '【急招】Python开发工程师（双休）+五险一金' → 'python开发工程师'."""
    if not title:
        return ""
    text = unicodedata.normalize("NFKC", title).lower()
    for plain, safe in PROTECTED:
        text = text.replace(plain, safe)
    text = BRACKETED.sub(" ", text).strip()
    text = PLUS_TAIL.sub("", text).strip() or text
    lead = LEADING_TAG.match(text)
    if lead and len(text) > lead.end() + 1:
        text = text[lead.end() :].strip()
    lead = URGENT_LEAD.match(text)
    if lead and len(text) > lead.end() + 1:
        text = text[lead.end() :].strip()
    while True:
        tail = TAIL_PART.search(text)
        if tail is None or tail.start() < 2 or not any(root in tail.group(1) for root in PERK_ROOTS):
            break
        text = text[: tail.start()].strip()
    return NOT_WORD.sub("", text)


@dataclass(frozen=True)
class Decorations:
    """Affixes of title keys learnt as decorations: a key loses any of them at its start or its end, the
    longest first, as long as KEPT characters are left."""

    prefixes: frozenset[str] = frozenset()
    suffixes: frozenset[str] = frozenset()

    def key(self, title: str | None) -> str:
        """``title_key`` without the learnt affixes."""
        key = title_key(title)
        return _strip(key, self) if self.prefixes or self.suffixes else key

    def rows(self) -> list[tuple[str, str]]:
        """(where, affix), ``where`` 'title_prefix' or 'title_suffix', sorted."""
        return sorted([("title_prefix", a) for a in self.prefixes] + [("title_suffix", a) for a in self.suffixes])

    @classmethod
    def from_rows(cls, rows) -> "Decorations":
        rows = list(rows)
        return cls(
            frozenset(a for where, a in rows if where == "title_prefix"),
            frozenset(a for where, a in rows if where == "title_suffix"),
        )


NO_DECORATIONS = Decorations()


@lru_cache(maxsize=1 << 16)
def _strip(key: str, decorations: Decorations) -> str:
    prefixes = sorted(decorations.prefixes, key=lambda a: (-len(a), a))
    suffixes = sorted(decorations.suffixes, key=lambda a: (-len(a), a))
    changed = True
    while changed:
        changed = False
        for affix in suffixes:
            if key.endswith(affix) and len(key) - len(affix) >= KEPT:
                key, changed = key[: -len(affix)], True
                break
        for affix in prefixes:
            if key.startswith(affix) and len(key) - len(affix) >= KEPT:
                key, changed = key[len(affix) :], True
                break
    return key


@lru_cache(maxsize=1 << 16)  # an opening's title is compared again and again
def bigrams(key: str) -> frozenset:
    return frozenset(key[i : i + 2] for i in range(len(key) - 1)) if len(key) > 1 else frozenset((key,))


def similarity(a: str, b: str) -> float:
    """Jaccard index of the two keys' character bigrams, 0..1."""
    if a == b:
        return 1.0
    first, second = bigrams(a), bigrams(b)
    return len(first & second) / len(first | second) if first or second else 0.0
