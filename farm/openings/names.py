"""Company names to one key: the brand a site shows (字节跳动) and the legal name another shows
(北京字节跳动科技有限公司) meet once places, legal forms and the business words are taken off.

A name is first put in Unicode's compatibility form (NFKC: full-width letters and brackets become their
plain forms), then loses a bracketed region on either side of its trade words (字节跳动(北京)科技有限公司,
聚力软件有限公司(上海)), a leading province or city with its 省 or 市, and its trailing legal forms and
business words in any number and order.

``CompanyNames`` also holds brand ↔ legal-name pairs: a user's own, from a file of ``brand,legal name``
lines, and those learnt from postings that carry both (qcwy's companyName beside fullCompanyName).
"""

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

from farm.sites import sites

# longest first: 股份有限公司 before 有限公司
LEGAL_FORMS = ("股份有限公司", "有限责任公司", "集团有限公司", "有限公司", "集团", "股份", "公司", "分公司", "控股",
               "工作室", "事务所")  # fmt: skip
# what a legal name says of the trade after the name, and a brand often leaves off
BUSINESS_WORDS = (
    "网络科技", "信息技术", "智能科技", "教育科技", "医疗科技", "金融信息服务", "企业管理咨询", "电子商务",
    "互动娱乐", "微电子", "科技", "网络", "软件", "信息", "技术", "贸易", "咨询", "服务", "发展", "数据", "智能",
    "文化", "传媒", "实业", "电子", "投资", "管理", "商务", "数字", "云计算",
)  # fmt: skip
PLACE_IN_BRACKETS = re.compile(r"\([^()]{1,12}\)")
NOT_NAME = re.compile(r"[\s·・.,，、&＆'\"“”-]+")
CITY_NAMES = {name for site in sites() for name in site.cities if not name.isdigit()}
PROVINCES = ("中国", "河北", "山西", "辽宁", "吉林", "黑龙江", "江苏", "浙江", "安徽", "福建", "江西", "山东", "河南",
             "湖北", "湖南", "广东", "海南", "四川", "贵州", "云南", "陕西", "甘肃", "青海", "台湾", "内蒙古", "广西",
             "西藏", "宁夏", "新疆", "香港", "澳门")  # fmt: skip
PLACES = frozenset({*CITY_NAMES, *PROVINCES})
PLACE_LENGTHS = sorted({len(place) for place in PLACES}, reverse=True)  # the longest place first


@lru_cache(maxsize=1 << 16)  # a day's postings name far fewer companies than they are
def company_key(name: str | None) -> str:
    """The name without places, legal forms, business words, brackets and punctuation; '' for none."""
    if not name:
        return ""
    key = NOT_NAME.sub("", PLACE_IN_BRACKETS.sub("", unicodedata.normalize("NFKC", name))).lower()
    for length in PLACE_LENGTHS:  # a leading place, with its 市 or 省 (a set: thousands of city names)
        if len(key) > length + 1 and key[:length] in PLACES:
            key = key[length:].removeprefix("市").removeprefix("省")
            break
    changed = True
    while changed:  # trailing legal forms and business words, any number, in any order
        changed = False
        for word in (*LEGAL_FORMS, *BUSINESS_WORDS):
            if key.endswith(word) and len(key) > len(word) + 1:
                key, changed = key[: -len(word)], True
    return key


class CompanyNames:
    """Company keys with the pairs known: a pair's brand takes its legal name's key."""

    def __init__(self, pairs: dict[str, str] | None = None):
        self._aliases: dict[str, str] = {}
        for brand, legal in sorted((pairs or {}).items()):
            self.learn(brand, legal)

    @classmethod
    def from_file(cls, path: str | Path) -> "CompanyNames":
        """``brand,legal name`` a line; blank lines and lines starting with # are skipped."""
        pairs = {}
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            brand, comma, legal = line.partition(",")
            if not comma or not brand.strip() or not legal.strip():
                raise ValueError(f"{path}:{number}: expected 'brand,legal name', got {line!r}")
            pairs[brand.strip()] = legal.strip()
        return cls(pairs)

    def learn(self, brand: str, legal: str) -> tuple[str, str] | None:
        """Pair the brand with the legal name (a brand paired already keeps its first); the keys paired."""
        return self.know(company_key(brand), company_key(legal))

    def know(self, brand_key: str, legal_key: str) -> tuple[str, str] | None:
        """Pair two keys, as ``learn`` pairs two names; the keys, or None for no pair."""
        if brand_key and legal_key and brand_key != legal_key:
            self._aliases.setdefault(brand_key, legal_key)
            return brand_key, legal_key
        return None

    def key(self, name: str | None) -> str:
        key = company_key(name)
        return self._aliases.get(key, key)

    def pair_of(self, name: str | None) -> str | None:
        """The legal name's key a brand's name was paired with, if it was."""
        return self._aliases.get(company_key(name))
