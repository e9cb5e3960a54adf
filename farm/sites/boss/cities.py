"""Boss直聘's cities: the names farm takes and the site's own codes; what a code looks like.

Keyword validation and the spider read the same (farm.sites.cities).
"""

import re

CITY_CODES = {  # docs/sites.md §1.4
    "全国": "100010000",
    "北京": "101010100",
    "上海": "101020100",
    "广州": "101280100",
    "深圳": "101280600",
    "杭州": "101210100",
    "成都": "101270100",
    "武汉": "101200100",
    "南京": "101190100",
    # not in docs/sites.md: Boss' usual codes for the cities the other two sites list
    "天津": "101030100",
    "重庆": "101040100",
    "西安": "101110100",
    "苏州": "101190400",
    "佛山": "101280800",
}
CODE_PATTERN = re.compile(r"\d{9}")  # a site code, passed through as is
CODE_FORM = "9 digits, e.g. 101010100"  # what a code looks like, for messages
