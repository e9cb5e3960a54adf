"""HireHub's cities: two-letter codes."""

import re

CITY_CODES = {"北京": "bj", "上海": "sh", "深圳": "sz"}
CODE_PATTERN = re.compile(r"[a-z]{2}")
CODE_FORM = "two letters, e.g. bj"
