"""51job's cities: the names farm takes and the site's own codes; what a code looks like.

Keyword validation and the spider read the same (farm.sites.cities).
"""

import re

CITY_CODES = {  # docs/sites.md §2.4
    "全国": "000000",
    "北京": "010000",
    "上海": "020000",
    "广州": "030200",
    "深圳": "040000",
    "杭州": "080200",
    "天津": "050000",
    "重庆": "060000",
    "成都": "090200",
    "南京": "070200",  # the contract's sample posting (南京·江宁区, jobAreaCode 070200)
    "广东": "030000",
    "广东省": "030000",
    "江苏": "070000",
    "江苏省": "070000",
    "浙江": "080000",
    "浙江省": "080000",
    # sources disagree (§2.4); these are 51job's area_array_c.js codes
    "苏州": "070300",
    "武汉": "180200",
    "西安": "200200",
    "佛山": "030600",  # not in docs/sites.md
}
CODE_PATTERN = re.compile(r"\d{6}")  # a site code, passed through as is
CODE_FORM = "6 digits, e.g. 010000"  # what a code looks like, for messages
