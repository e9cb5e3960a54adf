"""The work backends' boundary, read from the source: Redis is the Redis backend's alone.

Outside farm/crawl/backends/redis/ nothing imports redis, scrapy-redis or the Redis backend, and the crawl
(farm/crawl/) names Redis nowhere in its code: it asks its backend (FARM_WORK_BACKEND), never which
one it is. The Redis backend imports of the crawl only the contract (farm.crawl.backends.base) and the
small modules of shared types, which themselves import nothing of the crawl. What differs between backends
is a method of the contract: the crawl never asks whether its backend is shared.
"""

import ast
from pathlib import Path

import farm

ROOT = Path(farm.__file__).parent
REDIS_PACKAGE = "farm/crawl/backends/redis/"
REDIS_MODULES = ("redis", "scrapy_redis")
# what the Redis backend may import of the crawl: the contract, a request's farm meta, the site's pace,
# the identities and the proxy pool it builds its shared ones on
SHARED_TYPES = (
    "farm.crawl.backends.base",
    "farm.crawl.meta",
    "farm.crawl.identities",
    "farm.crawl.pace",
    "farm.crawl.proxies",
)


def _sources():
    for path in sorted(ROOT.rglob("*.py")):
        yield f"farm/{path.relative_to(ROOT).as_posix()}", ast.parse(path.read_text(encoding="utf-8"))


def imports_of(tree) -> list[str]:
    """Every module ``tree`` imports, at any depth (a function's own imports, and TYPE_CHECKING's, too);
    ``from farm import name`` also as ``farm.name``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append(node.module or "")
            if node.module == "farm":
                found += [f"farm.{alias.name}" for alias in node.names]
    return found


def _docstrings(tree) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
    }


def _names_redis(tree) -> list[str]:
    """The names and the strings (docstrings and comments aside) of ``tree`` that say Redis."""
    docstrings = _docstrings(tree)
    said = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            text = node.name
        else:
            continue
        if "redis" in text.lower():
            said.append(f"line {node.lineno}: {text!r}")
    return said


def test_nothing_outside_the_redis_backend_imports_redis():
    outside = {
        path: [name for name in imports_of(tree) if _is_redis(name)]
        for path, tree in _sources()
        if not path.startswith(REDIS_PACKAGE)
    }
    assert {path: names for path, names in outside.items() if names} == {}


def test_the_crawl_never_names_redis_in_its_code():
    crawl = {
        path: _names_redis(tree)
        for path, tree in _sources()
        if path.startswith("farm/crawl/") and not path.startswith("farm/crawl/backends/")
    }
    assert {path: said for path, said in crawl.items() if said} == {}


def test_the_redis_backend_imports_no_spider():
    # it asks of its spider what the contract's PageSpider says, not a spider class of farm's
    spiders = {
        path: [name for name in imports_of(tree) if name.startswith(("farm.spiders", "farm.sites"))]
        for path, tree in _sources()
        if path.startswith(REDIS_PACKAGE)
    }
    assert {path: names for path, names in spiders.items() if names} == {}


def test_the_redis_backend_imports_of_the_crawl_only_the_contract_and_shared_types():
    crawl_parts = {
        path: [
            name
            for name in imports_of(tree)
            if name.startswith("farm.crawl.") and not name.startswith("farm.crawl.backends.redis")
        ]
        for path, tree in _sources()
        if path.startswith(REDIS_PACKAGE)
    }
    beyond = {path: sorted(set(names) - set(SHARED_TYPES)) for path, names in crawl_parts.items()}
    assert {path: names for path, names in beyond.items() if names} == {}
    # and those import nothing of the crawl themselves: they are not a way in to its parts
    sources = dict(_sources())
    for module in SHARED_TYPES:
        tree = sources[module.replace(".", "/") + ".py"]
        crawl = {name for name in imports_of(tree) if name.startswith("farm.crawl.")}
        assert crawl <= set(SHARED_TYPES), module


def _is_redis(name: str) -> bool:
    return name.split(".")[0] in REDIS_MODULES or name.startswith("farm.crawl.backends.redis")


def _asks_shared(tree) -> list[str]:
    """Where ``tree`` reads a ``shared`` attribute, or passes or takes a ``shared`` argument."""
    said = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "shared":
            said.append(f"line {node.lineno}: .shared")
        elif isinstance(node, ast.keyword) and node.arg == "shared":
            said.append(f"line {node.value.lineno}: shared=")
        elif isinstance(node, ast.arg) and node.arg == "shared":
            said.append(f"line {node.lineno}: a parameter shared")
    return said


def test_the_crawl_never_asks_whether_its_backend_is_shared():
    # what differs between backends is a method of the contract (WorkBackend.fetches_what_it_enqueues),
    # never a branch on which kind of backend the crawl has
    crawl = {
        path: _asks_shared(tree)
        for path, tree in _sources()
        if path.startswith("farm/crawl/") and not path.startswith("farm/crawl/backends/")
    }
    assert {path: said for path, said in crawl.items() if said} == {}
