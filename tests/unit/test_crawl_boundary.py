"""The crawl's boundary with the spiders, read from the source: farm/crawl/ imports nothing of farm/spiders/
nor of the site packages (farm/sites/), whose spiders they hold.

A site spider says what to ask and how to read an answer; the crawl owns each keyword's lease and its
pages (farm.crawl.paging). So the spiders import the crawl, never the other way: a site author's base
class (farm.spiders.base.LeaseSpider) knows no registry, and the crawl knows no spider class.
"""

import ast
from pathlib import Path

import farm
from tests.unit.test_backend_boundary import imports_of

ROOT = Path(farm.__file__).parent


def _spiders_imported(tree: ast.AST) -> list[str]:
    return [
        name
        for name in imports_of(tree)
        if name in ("farm.spiders", "farm.sites") or name.startswith(("farm.spiders.", "farm.sites."))
    ]


def test_the_crawl_imports_nothing_of_the_spiders():
    crawl = {
        path.relative_to(ROOT).as_posix(): _spiders_imported(ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted((ROOT / "crawl").rglob("*.py"))
    }
    assert {path: names for path, names in crawl.items() if names} == {}


def test_the_check_finds_an_import_of_a_spider_anywhere():
    source = (
        "from farm.spiders.base import LeaseSpider\n"
        "import farm.sites.qcwy.spider\n"
        "from farm import spiders\n"
        "def f():\n    from farm.spiders import boss\n"
    )
    assert _spiders_imported(ast.parse(source)) == [
        "farm.spiders.base",
        "farm.sites.qcwy.spider",
        "farm.spiders",
        "farm.spiders",
    ]


def test_the_spiders_base_names_no_registry():
    # the site author's base class asks the crawl's paging, never the keyword registry
    source = (ROOT / "spiders" / "base.py").read_text(encoding="utf-8")
    names = {node.attr for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Attribute)}
    names |= {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)}
    assert not {name for name in names if "registry" in name.lower() or name == "runs"}
