"""HireHub's salary texts: bare yuan a month (``8000-12000``), and 薪资待定 where it gives none."""

from farm.salary.rules import Grammar

GRAMMAR = Grammar(no_figure=frozenset({"薪资待定"}), bare_yuan=True)
