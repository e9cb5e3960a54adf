"""docs/layout.md is true to the tree: every path it names exists, every module under farm/ is named in
it, and the names a line gives (classes, functions, signals, settings, modules) are found in the files
that line names."""

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYOUT = REPO / "docs" / "layout.md"
FARM = REPO / "farm"

# a line of the tree: its indentation, its names (one space apart), two spaces or more, what they are
LINE = re.compile(r"^(?P<indent> *)(?P<names>\S+(?: \S+)*?)(?: {2,}(?P<description>.*))?$")
# names of code in a description: CamelCase classes, snake_case functions and signals, FARM_ settings
CODE = re.compile(r"\b(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|FARM_[A-Z0-9_]*[A-Z0-9])\b")
MODULE = re.compile(r"(?<![\w/-])farm(?:\.[a-z_][a-z0-9_]*)+")  # not a file: JOBDIR/farm.lock
DOCS_PAGE = re.compile(r"\bdocs/[\w./-]+\.md\b")
QUOTED_PATH = re.compile(r"`((?:farm|docs|tests|bench|deploy)/[^`\s]*)`")


@dataclass(frozen=True)
class Entry:
    line: str
    paths: tuple[str, ...]  # the line's names as paths from the repository's root (globs kept)
    description: str


def tree(text: str) -> list[str]:
    blocks = re.findall(r"^```\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) == 1, "docs/layout.md holds its tree in one code block"
    return [line for line in blocks[0].splitlines() if line.strip()]


def entries(lines: list[str]) -> list[Entry]:
    """The tree's lines: a name ending in ``/`` is a folder, and the lines indented under it name
    what it holds."""
    folders: list[tuple[int, str]] = []  # (indentation, path) of the folders open at this line
    found = []
    for line in lines:
        match = LINE.match(line)
        indent = len(match["indent"])
        while folders and folders[-1][0] >= indent:
            folders.pop()
        names = match["names"].split(" ")
        paths = tuple((folders[-1][1] if folders else "") + name for name in names)
        found.append(Entry(line, paths, match["description"] or ""))
        if len(names) == 1 and names[0].endswith("/"):
            folders.append((indent, paths[0]))
    return found


def files_of(path: str) -> list[Path]:
    """The files a name stands for: itself, what its glob matches, or all a folder holds."""
    found = sorted(REPO.glob(path)) if "*" in path else [REPO / path] if (REPO / path).exists() else []
    return [file for each in found for file in ([each] if each.is_file() else sorted(each.rglob("*.py")))]


def layout() -> list[Entry]:
    return entries(tree(LAYOUT.read_text(encoding="utf-8")))


def modules() -> set[str]:
    return {str(path.relative_to(REPO)) for path in FARM.rglob("*.py") if "__pycache__" not in path.parts}


def test_every_path_the_tree_names_exists():
    missing = [
        f"{path} (in: {entry.line.strip()})"
        for entry in layout()
        for path in entry.paths
        if not files_of(path) and not (REPO / path).is_dir()
    ]
    assert not missing, f"docs/layout.md names paths that do not exist: {missing}"


def test_every_module_under_farm_is_in_the_tree():
    named = set()
    for entry in layout():
        for path in entry.paths:
            if path.endswith("/"):
                named.add(path + "__init__.py")  # a package is named by its folder
            elif "*" in path:
                named.update(str(file.relative_to(REPO)) for file in REPO.glob(path))
            else:
                named.add(path)
    unnamed = sorted(modules() - named)
    assert not unnamed, f"modules docs/layout.md does not name: {unnamed}"


def test_the_code_a_line_names_is_in_the_files_it_names():
    wrong = []
    for entry in layout():
        if not entry.paths[0].startswith("farm/"):
            continue
        text = "\n".join(file.read_text(encoding="utf-8") for path in entry.paths for file in files_of(path))
        absent = [name for name in CODE.findall(entry.description) if not re.search(rf"\b{name}\b", text)]
        if absent:
            wrong.append(f"{entry.line.strip()}: {absent}")
    assert not wrong, f"docs/layout.md names code its lines' files do not hold: {wrong}"


def test_the_modules_and_pages_the_page_names_exist():
    text = LAYOUT.read_text(encoding="utf-8")
    modules_named = set(MODULE.findall(text))
    missing = [name for name in modules_named if not _module_exists(name)]
    missing += [path for path in DOCS_PAGE.findall(text) + QUOTED_PATH.findall(text) if not (REPO / path).exists()]
    assert not missing, f"docs/layout.md names what does not exist: {missing}"


def _module_exists(name: str) -> bool:
    path = REPO.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_the_tree_is_read_by_its_indentation():
    lines = [
        "farm/",
        "  a.py b.py             two modules",
        "  crawl/                a folder",
        "    parts.py            CrawlParts",
        "    redis/",
        "      scripts/*.lua     scripts",
        "  heap.py",
        "setup.py",
    ]
    read = [(entry.paths, entry.description) for entry in entries(lines)]
    assert read == [
        (("farm/",), ""),
        (("farm/a.py", "farm/b.py"), "two modules"),
        (("farm/crawl/",), "a folder"),
        (("farm/crawl/parts.py",), "CrawlParts"),
        (("farm/crawl/redis/",), ""),
        (("farm/crawl/redis/scripts/*.lua",), "scripts"),
        (("farm/heap.py",), ""),
        (("setup.py",), ""),
    ]
    assert CODE.findall("KeywordRun and Outcome; keyword_ended, page_parsed; FARM_REDIS_URL and FARM_*") == [
        "KeywordRun",
        "keyword_ended",
        "page_parsed",
        "FARM_REDIS_URL",
    ]
