"""Boss直聘's salary texts (``salaryDesc``).

Forms: ``8-13K``, ``15-25K·13薪``, ``25-50K·19薪`` (thousands a month, and the
months paid a year), ``150-200元/天`` and ``100元/天`` (interns, by the day),
``30-50元/时`` (part-time, by the hour), ``面议``. The site's web page draws
salary digits with private-use glyphs U+E030 to U+E039 for 0 to 9; the JSON
farm reads has plain digits, but a text copied from the page is read too.
"""

from farm.salary.rules import Grammar

GRAMMAR = Grammar(translate=str.maketrans({chr(0xE030 + digit): str(digit) for digit in range(10)}))
