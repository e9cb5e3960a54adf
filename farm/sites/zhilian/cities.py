"""智联招聘's cities: the names farm takes and the site's own codes; what a code looks like.

Keyword validation and the spider read the same (farm.sites.cities).
"""

import re

CITY_CODES = {  # docs/sites.md §3.5
    "全国": "489",
    "北京": "530",
    "上海": "538",
    "广州": "763",
    "深圳": "765",
    "杭州": "653",
    "成都": "801",
    "武汉": "736",
    "南京": "635",
    "苏州": "639",
    "天津": "531",
    "重庆": "551",
    "西安": "854",
    "佛山": "768",
}
CODE_PATTERN = re.compile(r"\d{3,6}")  # a site code, passed through as is
CODE_FORM = "3 to 6 digits, e.g. 530"  # what a code looks like, for messages
