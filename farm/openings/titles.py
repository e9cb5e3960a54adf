"""Titles without what sites decorate them with (【急招】, （双休）, +五险一金), and how alike two are:
the Jaccard index of their character bigrams."""

import re
from functools import lru_cache

BRACKETED = re.compile(r"【[^】]*】|\[[^\]]*\]|[(（][^()（）]*[)）]|<[^>]*>")
# a trailing "+五险一金" / "-包吃住" / "/双休" run of perks
PERKS_AFTER = re.compile(
    r"\s*[+＋/|｜-]\s*[^+＋/|｜-]*(五险|双休|包吃|包住|年终|周末|六险|补贴|急招|高薪|可实习|应届).*$"
)
DECORATIONS = ("急招", "急聘", "诚聘", "高薪", "双休", "直招", "五险一金", "包吃住", "可实习", "应届生可投")
NOT_WORD = re.compile(r"[\s\W_]+")


def title_key(title: str | None) -> str:
    """The title's words only, lower case: '【急招】Python开发工程师（双休）+五险一金' → 'python开发工程师'."""
    if not title:
        return ""
    text = BRACKETED.sub(" ", title)
    text = PERKS_AFTER.sub("", text)
    for word in DECORATIONS:
        text = text.replace(word, " ")
    return NOT_WORD.sub("", text).lower()


@lru_cache(maxsize=1 << 16)  # an opening's title is compared again and again
def bigrams(key: str) -> frozenset:
    return frozenset(key[i : i + 2] for i in range(len(key) - 1)) if len(key) > 1 else frozenset((key,))


def similarity(a: str, b: str) -> float:
    """Jaccard index of the two keys' character bigrams, 0..1."""
    if a == b:
        return 1.0
    first, second = bigrams(a), bigrams(b)
    return len(first & second) / len(first | second) if first or second else 0.0
