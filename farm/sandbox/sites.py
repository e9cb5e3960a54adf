"""The sites the sandbox imitates: each registered site's imitation (its package's sandbox.py), and its wall
(its package's wall.py), by name.

A site module knows its paths, page size, page cap and rendering (``SITE``, ``PATHS``, ``PAGE_SIZE``,
``MAX_PAGE_SIZE``, ``MAX_PAGES``, ``CONTENT_TYPE``, ``parse``, ``render``; ``reject``, ``finish`` and
``STALE_VARIANTS`` where it has them) and, in its ``IMITATION`` (imitation.py), what the shared parts of
the sandbox make of it: its words, ids, cross-posts, hostile fields, own faults and kind of search. A wall
module's ``WALL`` is its shape (wallshape.py). The registry (farm.sites) names the modules; a site
registered after the sandbox's start (``farm sandbox --site``) is served from the app made after it.
"""

from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING

from farm.sites import find, sites

from .imitation import DEFAULT, Imitation

if TYPE_CHECKING:
    from .wallshape import WallShape


def site_modules() -> dict[str, ModuleType]:
    """Every registered site's imitation, by the site's name; a site without one is not served."""
    return {site.name: import_module(site.sandbox) for site in sites() if site.sandbox}


def site_module(name: str) -> ModuleType:
    """The imitation of site ``name``; KeyError when the sandbox does not imitate it."""
    site = find(name)
    if site is None or site.sandbox is None:
        raise KeyError(name)
    return import_module(site.sandbox)


def imitation(name: str) -> Imitation:
    """What site ``name``'s imitation adds to the shared world (its ``IMITATION``, else DEFAULT); KeyError
    when the sandbox does not imitate it."""
    return imitation_of(site_module(name))


def imitation_of(module: ModuleType) -> Imitation:
    """The ``IMITATION`` of a site's imitation module, else DEFAULT."""
    return getattr(module, "IMITATION", DEFAULT)


def served_sites() -> tuple[str, ...]:
    """The names of the registered sites the sandbox imitates, in the registry's order."""
    return tuple(site.name for site in sites() if site.sandbox)


def walled_sites() -> tuple[str, ...]:
    """The names of the registered sites the sandbox imitates behind a wall of their own."""
    return tuple(site.name for site in sites() if site.sandbox and site.sandbox_wall)


def wall_shapes() -> "dict[str, WallShape]":
    """Every walled site's shape (its wall module's ``WALL``), by the site's name."""
    return {site.name: import_module(wall).WALL for site in sites() if site.sandbox and (wall := site.sandbox_wall)}
