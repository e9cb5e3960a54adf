"""智联招聘's salary texts (``salary60``, and ``salaryReal``'s bare yuan).

Forms: ``8000-16000元``, ``1.5-2.5万``, ``1.5-2.5万·20薪`` (a month),
``9K-16K`` (its newer search API), ``8000-16000`` (``salaryReal``: bare yuan a
month), ``薪资面议``, and ``**-**元``, the masked figure of a visitor who is
not logged in, which says no number.
"""

from farm.salary.rules import Grammar

GRAMMAR = Grammar(no_figure=frozenset({"**-**元", "**-**"}), bare_yuan=True)
