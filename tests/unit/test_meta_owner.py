"""A request's farm meta has one owner, read from the source: farm.crawl.meta names its keys, and no other
module of farm reads or writes a ``farm_`` key of a request's meta by its string.

Two ways to be caught: naming one of the owner's keys anywhere (a string, or a keyword argument as
``meta.update(farm_page=2)`` takes it), or naming any ``farm_`` key where a meta is read or written
(``meta["farm_x"]``, ``meta.get("farm_x")``, ``"farm_x" in meta``, a dict literal given as a meta, a
module constant used for one), so a new key cannot begin outside the owner either.
"""

import ast
import re
from pathlib import Path

import farm
from farm.crawl.meta import KEYS

ROOT = Path(farm.__file__).parent
OWNER = "farm/crawl/meta.py"
ACCESSORS = {"get", "pop", "setdefault", "update"}


def _sources():
    for path in sorted(ROOT.rglob("*.py")):
        yield f"farm/{path.relative_to(ROOT).as_posix()}", path.read_text(encoding="utf-8")


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
    }


def _names_meta(node: ast.AST) -> bool:
    return re.search(r"\bmeta\b", ast.unparse(node)) is not None


def _farm_key(node: ast.AST | None, constants: dict[str, str]) -> str | None:
    """The ``farm_`` key ``node`` says, as a string or through a module constant; else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        value = node.value
    elif isinstance(node, ast.Name) and node.id in constants:
        value = constants[node.id]
    else:
        return None
    return value if re.fullmatch(r"farm_\w+", value) else None


def _meta_keys_named(source: str) -> list[str]:
    """Every place ``source`` reads or writes a farm meta key by its string, as ``line: code``."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = set()
    for node in ast.walk(tree):
        keys = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            keys.append(node.value if node.value in KEYS else None)
        elif isinstance(node, ast.keyword) and node.arg is not None:
            keys.append(node.arg if node.arg in KEYS else None)
        if isinstance(node, ast.Subscript) and _names_meta(node.value):
            keys.append(_farm_key(node.slice, constants))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _names_meta(node.func.value):
            if node.func.attr in ACCESSORS:
                keys += [_farm_key(arg, constants) for arg in node.args[:1]]
                keys += [node.arg for node in node.keywords if node.arg and node.arg.startswith("farm_")]
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            if any(_names_meta(comparator) for comparator in node.comparators):
                keys.append(_farm_key(node.left, constants))
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "meta" and isinstance(keyword.value, ast.Dict):
                    keys += [_farm_key(key, constants) for key in keyword.value.keys]
        found.update((getattr(node, "lineno", 0), key) for key in keys if key is not None)
    return [f"{line}: {key}" for line, key in sorted(found)]


def test_only_the_owner_reads_or_writes_a_farm_meta_key():
    named = {path: found for path, source in _sources() if path != OWNER and (found := _meta_keys_named(source))}
    assert named == {}


def test_the_check_finds_each_way_of_naming_a_key():
    source = """
KEPT = "farm_kept"
def f(request, response, meta):
    request.meta["farm_x"] = 1
    response.meta.get("farm_y")
    meta.pop(KEPT, None)
    if "farm_z" in request.meta:
        request.meta.update(farm_w=2)
    request.replace(meta={**request.meta, "farm_v": True})
    note = "farm_page"
"""
    keys = [line.split(": ")[1] for line in _meta_keys_named(source)]
    assert sorted(keys) == ["farm_kept", "farm_page", "farm_v", "farm_w", "farm_x", "farm_y", "farm_z"]


def test_the_check_leaves_other_farm_names_alone():
    source = '''
"""A docstring may say farm_lease."""
READ = "farm_read"
def f(crawler, options, stats):
    crawler.engine.close_spider(crawler.spider, "farm_db_error")
    options.get(READ)
    stats.inc_value("scheduler/enqueued/farm_again")
'''
    assert _meta_keys_named(source) == []
