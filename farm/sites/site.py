"""Site: what every part of farm asks of one site, in one record (docs/addon.md, *A site package*).

A site package (``farm/sites/boss/``) builds its ``SITE`` from its own modules: its cities, its salary
grammar, the path of its spider and of its sandbox imitation. Nothing here imports Scrapy or the sandbox:
the ``farm`` command, the store and keyword validation read the record, and the spider and the
imitation are imported by name only where a crawl or the sandbox runs.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from farm.salary.rules import Grammar

# a site's name is a keyword's source and the <SITE> of its FARM_<SITE>_* settings
NAME = re.compile(r"[a-z][a-z0-9_]{0,15}")


@dataclass(frozen=True)
class Site:
    """One site. ``name`` is its keywords' ``source``, its spider's ``name`` and its package's name.

    ``cities`` maps the city names farm takes to the site's own codes; ``code_pattern`` matches a code
    given as is, ``code_form`` says what one looks like in a message. ``spider`` and ``sandbox`` are
    dotted paths (the spider class, the imitation's module; None: the sandbox does not serve it);
    ``sandbox_wall`` the module of its wall in the imitation (its ``WALL``; None: it stands behind none).
    ``defaults`` are its ``FARM_<SITE>_*`` settings' own defaults (base_url, rate, max_pages).
    ``slider_shapes`` and ``unread_shapes`` name its spider's refusal shapes for ``farm probe``'s verdict.
    """

    name: str
    title: str = ""
    spider: str | None = None
    cities: Mapping[str, str] = field(default_factory=dict)
    code_pattern: re.Pattern = re.compile(r"(?!)")
    code_form: str = ""
    salary: Grammar = field(default_factory=Grammar)
    colour: str | None = None  # its line in the report's charts (None: the charts' next colour)
    sandbox: str | None = None
    sandbox_wall: str | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    slider_shapes: tuple[str, ...] = ()  # its block shapes of a wall no client passes, beyond "slider"/"captcha"
    unread_shapes: tuple[str, ...] = ()  # the starts of its shapes of an answer farm does not understand

    def __post_init__(self) -> None:
        if not NAME.fullmatch(self.name):
            raise ValueError(f"site name {self.name!r}: it takes a-z, 0-9 and _, at most 16 characters, from a letter")
        # read-only views: a record is shared by every part and never written to
        object.__setattr__(self, "cities", MappingProxyType(dict(self.cities)))
        object.__setattr__(self, "defaults", MappingProxyType(dict(self.defaults)))
        object.__setattr__(self, "title", self.title or self.name)
        object.__setattr__(self, "code_form", self.code_form or f"matching {self.code_pattern.pattern}")

    @property
    def spider_module(self) -> str | None:
        """The module Scrapy finds the spider in (an entry of SPIDER_MODULES)."""
        return None if self.spider is None else self.spider.rpartition(".")[0]
