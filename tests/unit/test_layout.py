"""farm's modules import one another without a cycle: each module's top-level imports form a graph
with no loop (a package's ``__init__`` counts as the package); the crawl's modules have none either
counting the imports made inside functions, which only put a cycle off until it is called. And the
keyword registry (farm.crawl.registry) is the only code that changes a keyword's run."""

import ast
import dataclasses
import re
from pathlib import Path

import farm
from farm.crawl.keywordrun import KeywordRun

ROOT = Path(farm.__file__).parent


def _modules() -> dict[str, Path]:
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = ("farm", *path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


# the crawl's machinery and the components Scrapy builds from it
CRAWL = ("farm.addon", "farm.crawl", "farm.spiders", "farm.extensions", "farm.middlewares", "farm.pipelines")


def _statements(tree: ast.Module, inside_functions: bool):
    """The statements whose imports count: the top level (what runs at import), or every one but
    those under ``if TYPE_CHECKING`` (never run)."""
    if not inside_functions:
        yield from tree.body
        return
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _imports(modules: dict[str, Path], inside_functions: bool = False) -> dict[str, set[str]]:
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        for node in _statements(ast.parse(path.read_text(encoding="utf-8")), inside_functions):
            if isinstance(node, ast.Import):
                graph[name].update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules.keys()
                graph[name].update(submodules or ({node.module} & modules.keys()))
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A loop of imports, or None."""
    done, path = set(), []

    def visit(name):
        if name in path:
            return path[path.index(name) :] + [name]
        if name in done:
            return None
        path.append(name)
        for imported in sorted(graph[name]):
            if found := visit(imported):
                return found
        path.pop()
        done.add(name)
        return None

    for name in sorted(graph):
        if found := visit(name):
            return found
    return None


def test_no_module_imports_itself_through_others():
    assert _cycle(_imports(_modules())) is None


def test_the_crawls_modules_import_one_another_without_a_cycle_even_inside_functions():
    graph = _imports(_modules(), inside_functions=True)
    crawl = {name: imported for name, imported in graph.items() if name.startswith(CRAWL)}
    assert _cycle({name: imported & crawl.keys() for name, imported in crawl.items()}) is None


def test_the_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


# --- the registry is the only code that changes a keyword's run ---------------------------

# KeywordRun's methods that change it; its fields, which no one else assigns or grows
RUN_CHANGES = {"ask", "tell_last", "taken", "handed_over", "settled"}
RUN_FIELDS = {field.name for field in dataclasses.fields(KeywordRun)} - {"lease"}
SET_CHANGES = {"add", "discard", "update", "clear", "remove", "pop", "difference_update"}
# the one module that changes runs, and the one that defines them
RUN_OWNERS = {"farm.crawl.registry", "farm.crawl.keywordrun"}


def _is_run(node: ast.expr) -> bool:
    """Whether an expression names a keyword's run: ``run``, ``self.runs[key]``, ``runs.get(key)``..."""
    return re.search(r"\bruns?\b", ast.unparse(node)) is not None


def _run_changes(source: str) -> list[str]:
    """Every place ``source`` changes a KeywordRun, as ``line: code``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner, name = node.func.value, node.func.attr
            if name in RUN_CHANGES and _is_run(owner):
                found.append(node)
            elif name in SET_CHANGES and isinstance(owner, ast.Attribute) and owner.attr in RUN_FIELDS:
                if _is_run(owner.value):
                    found.append(node)
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr in RUN_FIELDS and _is_run(target.value):
                    found.append(node)
    return [f"{node.lineno}: {ast.unparse(node)}" for node in found]


def test_only_the_registry_changes_a_keywords_run():
    changes = {
        name: found
        for name, path in _modules().items()
        if name not in RUN_OWNERS and (found := _run_changes(path.read_text(encoding="utf-8")))
    }
    assert changes == {}


def test_the_check_finds_a_run_changed_elsewhere():
    source = "run.ask([1])\nself.runs[key].taken(2)\nrun.outcome = None\nrun.pending.add(3)\npace.taken()\n"
    assert len(_run_changes(source)) == 4
