"""The salary texts farm reads, and the numbers each must give: (low, high, months, period).

The numbers are the text's own, in yuan of its own pay period (``hour``, ``day``,
``month``, ``year``), rounded to the yuan: ``30-50元/时`` is (30, 50, None, "hour"),
never a month's pay; ``10-20万/年`` is the year's (100000, 200000). ``NONE`` is a text
that says there is no figure (period ``none``; ``面议·13薪`` still gives its months);
``UNKNOWN`` a text no rule knows, which must give no number (and be counted), never
a guess. One table per site, in the forms that site writes: every form
docs/sites.md shows for it first, then the forms seen on the site, then odd ones.
"""

NONE = (None, None, None, "none")
UNKNOWN = "unknown"


def month(low, high, months=None):
    return (low, high, months, "month")


def day(low, high):
    return (low, high, None, "day")


def hour(low, high):
    return (low, high, None, "hour")


def year(low, high, months=None):
    return (low, high, months, "year")


BOSS = [
    # docs/sites.md
    ("8-13K", month(8000, 13000)),
    ("25-50K·19薪", month(25000, 50000, 19)),
    ("15-25K·13薪", month(15000, 25000, 13)),
    ("25-50K·16薪", month(25000, 50000, 16)),
    ("15-25K", month(15000, 25000)),
    ("150-200元/天", day(150, 200)),
    ("100元/天", day(100, 100)),
    ("30-50元/时", hour(30, 50)),
    ("面议", NONE),
    # the web page's private-use digit glyphs
    ("\ue031\ue035-\ue032\ue035K", month(15000, 25000)),
    ("\ue032\ue030-\ue033\ue030K·\ue031\ue034薪", month(20000, 30000, 14)),
    # seen on the site
    ("20-30K·14薪", month(20000, 30000, 14)),
    ("3-5K", month(3000, 5000)),
    ("4-6K·13薪", month(4000, 6000, 13)),
    ("1-2K", month(1000, 2000)),
    ("35-60K·15薪", month(35000, 60000, 15)),
    ("40-70K·16薪", month(40000, 70000, 16)),
    ("50-80K·20薪", month(50000, 80000, 20)),
    ("60-90K·24薪", month(60000, 90000, 24)),
    ("30-60K·25薪", month(30000, 60000, 25)),
    ("10-15K·11薪", month(10000, 15000, 11)),
    ("12-24K·12薪", month(12000, 24000, 12)),
    ("13-20K·17薪", month(13000, 20000, 17)),
    ("18-35K·18薪", month(18000, 35000, 18)),
    ("20-40K·21薪", month(20000, 40000, 21)),
    ("20-40K·22薪", month(20000, 40000, 22)),
    ("20-40K·23薪", month(20000, 40000, 23)),
    ("200-300元/天", day(200, 300)),
    ("120-150元/天", day(120, 150)),
    ("500元/天", day(500, 500)),
    ("20-25元/时", hour(20, 25)),
    ("500元/时", hour(500, 500)),
    ("100-200元/时", hour(100, 200)),
    ("15-25K•13薪", month(15000, 25000, 13)),
    ("15-25K・13薪", month(15000, 25000, 13)),
    ("15-25K･13薪", month(15000, 25000, 13)),
    ("15〜25K", month(15000, 25000)),
    ("面议·13薪", (None, None, 13, "none")),
    ("面议・14薪", (None, None, 14, "none")),
    ("12-20K·13薪 ", month(12000, 20000, 13)),
    # odd ones
    ("15-25k", month(15000, 25000)),
    ("15k-25k", month(15000, 25000)),
    ("15K-25K·13薪", month(15000, 25000, 13)),
    ("１５－２５Ｋ", month(15000, 25000)),
    ("15 - 25 K · 13 薪", month(15000, 25000, 13)),
    ("15~25K", month(15000, 25000)),
    ("15～25K", month(15000, 25000)),
    ("15至25K", month(15000, 25000)),
    ("15-25K*13薪", month(15000, 25000, 13)),
    ("15-25K 14薪", month(15000, 25000, 14)),
    ("10K以上", month(10000, None)),
    ("5K以下", month(None, 5000)),
    ("1.5-2.5K", month(1500, 2500)),
    ("", NONE),
    ("  ", NONE),
    ("15-25", UNKNOWN),  # no unit: thousands or yuan?
    ("15K-25", UNKNOWN),  # the high end's unit is a guess
    ("25-15K", UNKNOWN),  # low above high
    ("15-25K·99薪", UNKNOWN),
    ("15-25K·6薪", UNKNOWN),
    ("15-25K·10薪", UNKNOWN),
    ("15-25K·26薪", UNKNOWN),
    ("0-0K", UNKNOWN),  # below any month's pay
    ("99999-100000万", UNKNOWN),  # above any month's pay
    ("10-20K以上", UNKNOWN),  # which end?
    ("年薪20-30K/月", UNKNOWN),  # a year or a month?
    ("0.1元/时", UNKNOWN),  # below any month's pay
    ("薪资保密", UNKNOWN),
    ("-", UNKNOWN),
    ("K", UNKNOWN),
    ("15-25K-35K", UNKNOWN),
    ("面议·6薪", UNKNOWN),
    ("100-150元/周", UNKNOWN),  # a week: a period farm does not keep
]

QCWY = [
    # docs/sites.md
    ("7-9千", month(7000, 9000)),
    ("8千-1.2万", month(8000, 12000)),
    ("1.5-2.5万·13薪", month(15000, 25000, 13)),
    ("1-1.5万", month(10000, 15000)),
    ("10-20万/年", year(100000, 200000)),
    ("150元/天", day(150, 150)),
    ("200-300元/天", day(200, 300)),
    ("20-30元/小时", hour(20, 30)),
    ("1.5千以下", month(None, 1500)),
    ("1万以上", month(10000, None)),
    ("面议", NONE),
    # seen on the site
    ("1-1.5万元", month(10000, 15000)),
    ("4-6千元", month(4000, 6000)),
    ("10-20万元/年", year(100000, 200000)),
    ("1.5-2万 元", month(15000, 20000)),
    ("1-1.5万/月", month(10000, 15000)),
    ("6-8千/月", month(6000, 8000)),
    ("4.5-6千", month(4500, 6000)),
    ("1.2-2万/月", month(12000, 20000)),
    ("1-1.5万·14薪", month(10000, 15000, 14)),
    ("2-3万·15薪", month(20000, 30000, 15)),
    ("1.5-2万·16薪", month(15000, 20000, 16)),
    ("6千-1万", month(6000, 10000)),
    ("5-7千·13薪", month(5000, 7000, 13)),
    ("20-40万/年", year(200000, 400000)),
    ("30-50万元/年", year(300000, 500000)),
    ("15-25万/年·14薪", year(150000, 250000, 14)),  # the year's pay already holds the 14 months
    ("年薪30-50万·15薪", year(300000, 500000, 15)),
    ("100元/天", day(100, 100)),
    ("15-20元/小时", hour(15, 20)),
    ("3000元以上/月", month(3000, None)),
    ("5000元以下/月", month(None, 5000)),
    ("8千以上", month(8000, None)),
    ("1-1.5万•13薪", month(10000, 15000, 13)),
    ("1-1.5万・13薪", month(10000, 15000, 13)),
    ("1〜1.5万", month(10000, 15000)),
    ("1,5000-2,0000", month(15000, 20000)),
    ("8,000-12,000", month(8000, 12000)),
    ("1,0000-1,5000元/月", month(10000, 15000)),
    ("面议·13薪", (None, None, 13, "none")),
    ("1-1.5万·11薪", month(10000, 15000, 11)),
    ("1-1.5万·25薪", month(10000, 15000, 25)),
    ("1.8-3万·24薪", month(18000, 30000, 24)),
    ("1-1.5万·12薪", month(10000, 15000, 12)),
    ("0.8-1万", month(8000, 10000)),
    # odd ones
    ("１万以上", month(10000, None)),
    ("１．５－２．５万", month(15000, 25000)),
    ("1-1.5w", month(10000, 15000)),
    ("1-1.5W", month(10000, 15000)),
    ("年薪20-30万", year(200000, 300000)),
    ("年薪 20-30 万", year(200000, 300000)),
    ("20-30万每年", year(200000, 300000)),
    ("日薪200元", day(200, 200)),
    ("200/天", day(200, 200)),
    ("200-300元/日", day(200, 300)),
    ("时薪25元", hour(25, 25)),
    ("月薪1-1.5万", month(10000, 15000)),
    ("3000元起", month(3000, None)),
    ("5000元/月", month(5000, 5000)),
    ("8千-1.2万·14薪", month(8000, 12000, 14)),
    ("1.2-0.8万", UNKNOWN),
    ("8000", UNKNOWN),  # a bare number on a site that writes its unit
    ("5-8元", UNKNOWN),  # a month's pay of eight yuan
    ("薪资面议", NONE),
    ("1万以上以下", UNKNOWN),
    ("一万到两万", UNKNOWN),
    ("1,5-2万", UNKNOWN),  # a decimal comma or a grouping? neither reads
    ("1万以上/年/月", UNKNOWN),
    ("3000元以上/月以上", UNKNOWN),
    ("10-20万/年·30薪", UNKNOWN),
]

ZHILIAN = [
    # docs/sites.md
    ("8000-16000元", month(8000, 16000)),
    ("1.5-2.5万·20薪", month(15000, 25000, 20)),
    ("1.5-2.5万", month(15000, 25000)),
    ("9K-16K", month(9000, 16000)),
    ("8000-16000", month(8000, 16000)),  # salaryReal: bare yuan
    ("**-**元", NONE),  # masked: not logged in
    ("薪资面议", NONE),
    # seen on the site
    ("4-6千元", month(4000, 6000)),
    ("1-1.5万元", month(10000, 15000)),
    ("1万-2万·13薪", month(10000, 20000, 13)),
    ("1万-2万", month(10000, 20000)),
    ("5000-8000元/月", month(5000, 8000)),
    ("3000元以上/月", month(3000, None)),
    ("4001-6000元", month(4001, 6000)),
    ("10001-15000元", month(10001, 15000)),
    ("15001-20000元", month(15001, 20000)),
    ("25001-35000元", month(25001, 35000)),
    ("50000元以上", month(50000, None)),
    ("2000元以下", month(None, 2000)),
    ("1-1.5万·14薪", month(10000, 15000, 14)),
    ("1.2-1.8万·15薪", month(12000, 18000, 15)),
    ("2-4万·16薪", month(20000, 40000, 16)),
    ("10-20万元/年", year(100000, 200000)),
    ("12-18万/年", year(120000, 180000)),
    ("150-200元/天", day(150, 200)),
    ("200元/天", day(200, 200)),
    ("18-25元/小时", hour(18, 25)),
    ("20元/时", hour(20, 20)),
    ("8000-12000元•13薪", month(8000, 12000, 13)),
    ("8000-12000元・13薪", month(8000, 12000, 13)),
    ("8000〜12000元", month(8000, 12000)),
    ("1,5000-2,0000", month(15000, 20000)),
    ("1,5000-2,0000元", month(15000, 20000)),
    ("面议·13薪", (None, None, 13, "none")),
    ("薪资面议·14薪", (None, None, 14, "none")),
    ("6000-8000元·11薪", month(6000, 8000, 11)),
    ("1.5-2万 元", month(15000, 20000)),
    ("9K-16K·13薪", month(9000, 16000, 13)),
    ("9k-16k", month(9000, 16000)),
    ("12000-24000", month(12000, 24000)),
    ("3500-5000", month(3500, 5000)),
    # odd ones
    ("８０００－１６０００元", month(8000, 16000)),
    ("8000 - 16000 元", month(8000, 16000)),
    ("6001-8000元", month(6001, 8000)),
    ("1万-1.5万", month(10000, 15000)),
    ("1.5-2.5万·13薪", month(15000, 25000, 13)),
    ("4000元以下", month(None, 4000)),
    ("5万以上", month(50000, None)),
    ("8000-16000元/月·13薪", month(8000, 16000, 13)),
    ("15-25", UNKNOWN),  # bare, but below a thousand: not yuan a month
    ("**-**", NONE),
    ("**-16000元", UNKNOWN),
    ("16000-8000元", UNKNOWN),
    ("8000元-", UNKNOWN),
    ("面议 ", NONE),
    ("8000-16000元/周", UNKNOWN),
    ("1,50-2,00", UNKNOWN),  # not a grouping of thousands or ten thousands
    ("8000-16000元·99薪", UNKNOWN),
    ("薪资保密", UNKNOWN),
]

SITES = {"boss": BOSS, "qcwy": QCWY, "zhilian": ZHILIAN}
