"""farm's layout: its modules import one another without a cycle (every import counts, a function's
too; a package's ``__init__`` counts as the package), none is over MAX_LINES lines, and no two of its
classes have one name. And the keyword registry (farm.crawl.registry) is the only code that changes
a keyword's run."""

import ast
import dataclasses
import re
from collections import defaultdict
from pathlib import Path

import farm
from farm.crawl.keywordrun import KeywordRun

ROOT = Path(farm.__file__).parent
MAX_LINES = 400


def _modules() -> dict[str, Path]:
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = ("farm", *path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):  # anywhere: at import or when called
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


def test_the_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_an_import_in_a_function_counts(tmp_path):
    (tmp_path / "a.py").write_text("import farm.b\n")
    (tmp_path / "b.py").write_text("def f():\n    from farm.a import x\n")
    graph = _imports({"farm.a": tmp_path / "a.py", "farm.b": tmp_path / "b.py"})
    assert _cycle(graph) == ["farm.a", "farm.b", "farm.a"]


def test_no_module_is_over_max_lines():
    long = {
        str(path.relative_to(ROOT)): lines
        for path in ROOT.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def _classes() -> dict[str, list[str]]:
    """Each class name defined under farm/, and where."""
    where = defaultdict(list)
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return where


def test_no_two_classes_have_one_name():
    twice = {name: places for name, places in _classes().items() if len(places) > 1}
    assert not twice, f"classes of one name defined more than once: {twice}"


# --- the registry is the only code that changes a keyword's run ---------------------------

# KeywordRun's methods that change it; its fields, which no one else assigns or grows
RUN_CHANGES = {"ask", "tell_last", "taken", "sent_to_writer", "handled"}
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
