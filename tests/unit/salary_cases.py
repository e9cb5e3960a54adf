"""The salary texts farm reads, and the numbers each must give (CNY a month, months, period).

One table per site: every form docs/sites.md shows for it first, then odd ones.
``NONE`` is a text that says there is no figure; ``UNKNOWN`` a text no rule
knows, which must give no number (and be counted), never a guess.
"""

NONE = "no figure"
UNKNOWN = "unknown"

BOSS = [
    # docs/sites.md
    ("8-13K", (8000, 13000, None, "month")),
    ("25-50K·19薪", (25000, 50000, 19, "month")),
    ("15-25K·13薪", (15000, 25000, 13, "month")),
    ("25-50K·16薪", (25000, 50000, 16, "month")),
    ("15-25K", (15000, 25000, None, "month")),
    ("150-200元/天", (3262, 4350, None, "day")),
    ("100元/天", (2175, 2175, None, "day")),
    ("30-50元/时", (5220, 8700, None, "hour")),
    ("面议", NONE),
    # the web page's private-use digit glyphs
    ("\ue031\ue035-\ue032\ue035K", (15000, 25000, None, "month")),
    # odd ones
    ("15-25k", (15000, 25000, None, "month")),
    ("15k-25k", (15000, 25000, None, "month")),
    ("15K-25K·13薪", (15000, 25000, 13, "month")),
    ("１５－２５Ｋ", (15000, 25000, None, "month")),
    ("15 - 25 K · 13 薪", (15000, 25000, 13, "month")),
    ("15~25K", (15000, 25000, None, "month")),
    ("15～25K", (15000, 25000, None, "month")),
    ("15至25K", (15000, 25000, None, "month")),
    ("15-25K*13薪", (15000, 25000, 13, "month")),
    ("15-25K 14薪", (15000, 25000, 14, "month")),
    ("10K以上", (10000, None, None, "month")),
    ("5K以下", (None, 5000, None, "month")),
    ("1.5-2.5K", (1500, 2500, None, "month")),
    ("", NONE),
    ("  ", NONE),
    ("15-25", UNKNOWN),  # no unit: thousands or yuan?
    ("15K-25", UNKNOWN),  # the high end's unit is a guess
    ("25-15K", UNKNOWN),  # low above high
    ("15-25K·99薪", UNKNOWN),
    ("15-25K·6薪", UNKNOWN),
    ("0-0K", UNKNOWN),  # below any month's pay
    ("99999-100000万", UNKNOWN),  # above any month's pay
    ("10-20K以上", UNKNOWN),  # which end?
    ("年薪20-30K/月", UNKNOWN),  # a year or a month?
    ("薪资保密", UNKNOWN),
    ("-", UNKNOWN),
    ("K", UNKNOWN),
    ("15-25K-35K", UNKNOWN),
]

QCWY = [
    # docs/sites.md
    ("7-9千", (7000, 9000, None, "month")),
    ("8千-1.2万", (8000, 12000, None, "month")),
    ("1.5-2.5万·13薪", (15000, 25000, 13, "month")),
    ("1-1.5万", (10000, 15000, None, "month")),
    ("10-20万/年", (8333, 16667, None, "year")),
    ("150元/天", (3262, 3262, None, "day")),
    ("200-300元/天", (4350, 6525, None, "day")),
    ("20-30元/小时", (3480, 5220, None, "hour")),
    ("1.5千以下", (None, 1500, None, "month")),
    ("1万以上", (10000, None, None, "month")),
    ("面议", NONE),
    # odd ones
    ("１万以上", (10000, None, None, "month")),
    ("１．５－２．５万", (15000, 25000, None, "month")),
    ("1-1.5w", (10000, 15000, None, "month")),
    ("1-1.5W", (10000, 15000, None, "month")),
    ("年薪20-30万", (16667, 25000, None, "year")),
    ("年薪 20-30 万", (16667, 25000, None, "year")),
    ("20-30万每年", (16667, 25000, None, "year")),
    ("日薪200元", (4350, 4350, None, "day")),
    ("200/天", (4350, 4350, None, "day")),
    ("200-300元/日", (4350, 6525, None, "day")),
    ("3000元起", (3000, None, None, "month")),
    ("5000元/月", (5000, 5000, None, "month")),
    ("8千-1.2万·14薪", (8000, 12000, 14, "month")),
    ("1.2-0.8万", UNKNOWN),
    ("8000", UNKNOWN),  # a bare number on a site that writes its unit
    ("5-8元", UNKNOWN),  # a month's pay of eight yuan
    ("薪资面议", NONE),
    ("1万以上以下", UNKNOWN),
    ("一万到两万", UNKNOWN),
]

ZHILIAN = [
    # docs/sites.md
    ("8000-16000元", (8000, 16000, None, "month")),
    ("1.5-2.5万·20薪", (15000, 25000, 20, "month")),
    ("1.5-2.5万", (15000, 25000, None, "month")),
    ("9K-16K", (9000, 16000, None, "month")),
    ("8000-16000", (8000, 16000, None, "month")),  # salaryReal: bare yuan
    ("**-**元", NONE),  # masked: not logged in
    ("薪资面议", NONE),
    # odd ones
    ("８０００－１６０００元", (8000, 16000, None, "month")),
    ("8000 - 16000 元", (8000, 16000, None, "month")),
    ("6001-8000元", (6001, 8000, None, "month")),
    ("1万-1.5万", (10000, 15000, None, "month")),
    ("1.5-2.5万·13薪", (15000, 25000, 13, "month")),
    ("4000元以下", (None, 4000, None, "month")),
    ("5万以上", (50000, None, None, "month")),
    ("15-25", UNKNOWN),  # bare, but below a thousand: not yuan a month
    ("**-**", NONE),
    ("**-16000元", UNKNOWN),
    ("16000-8000元", UNKNOWN),
    ("8000元-", UNKNOWN),
    ("面议 ", NONE),
]

SITES = {"boss": BOSS, "qcwy": QCWY, "zhilian": ZHILIAN}
