"""前程无忧 / 51job's salary texts (``provideSalaryString``).

Forms: ``7-9千``, ``8千-1.2万``, ``1-1.5万``, ``1.5-2.5万·13薪`` (a month),
``10-20万/年`` (a year), ``150元/天``, ``200-300元/天`` (a day), ``20-30元/小时``
(an hour), ``1.5千以下``, ``1万以上`` (one end), ``面议``. The item's
``jobSalaryMin``/``jobSalaryMax`` stay in ``raw``: the text is what every site
gives alike.
"""

from farm.salary.rules import Grammar

GRAMMAR = Grammar()
