"""farm's layout: its modules import one another without a cycle (every import counts, a function's
too; a package's ``__init__`` counts as the package), none is over MAX_LINES lines, and no two of its
classes have one name."""

import ast
from collections import defaultdict
from pathlib import Path

import farm

ROOT = Path(farm.__file__).parent
MAX_LINES = 400
# imports made when a function runs that close a loop: farm.crawl.progress reaches the crawl's parts and
# the pipeline this way (each imports it back at the top)
LOOPS_ALLOWED = {("farm.crawl.progress", "farm.crawl.parts"), ("farm.crawl.progress", "farm.pipelines.sql")}


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
        graph[name] -= {imported for importer, imported in LOOPS_ALLOWED if importer == name}
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
