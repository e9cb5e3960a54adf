"""bench.variants: experiments kept as patches still apply to HEAD, and leave no worktree behind;
a variant at an earlier commit crawls with that commit's code and schema; each plain Scrapy
baseline of the crawl benches runs with its own tuning."""

import json
import py_compile
import re
import sqlite3
import subprocess

import pytest

from bench import variants
from bench.crawl_bench import LEAN, REPO, farm_command, plain_command

pytestmark = pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs a git checkout")


def _worktrees() -> str:
    return subprocess.run(["git", "worktree", "list"], cwd=REPO, capture_output=True, text=True, check=True).stdout


def _documented_specs() -> list[str]:
    """The variants bench/experiments/README.md tells how to run."""
    readme = (variants.EXPERIMENTS / "README.md").read_text()
    return [
        spec for line in re.findall(r'^ +make bench-variants VARIANTS="([^"]+)"', readme, re.M) for spec in line.split()
    ]


def _documented_variants() -> dict:
    """Those of the documented variants that are patches on HEAD."""
    return variants.parse_variants([spec for spec in _documented_specs() if "=@" not in spec])


def test_every_patch_in_experiments_is_documented_with_a_command():
    documented = {patch.name for variant in _documented_variants().values() for patch in variant.patches}
    assert documented == {path.name for path in variants.EXPERIMENTS.glob("*.patch")}


@pytest.mark.parametrize("name", sorted(_documented_variants()))
def test_a_documented_variant_applies_to_head_and_compiles(name):
    patches = _documented_variants()[name].patches
    with variants.variant_tree(patches) as tree:
        changed = subprocess.run(
            ["git", "diff", "--name-only"], cwd=tree, capture_output=True, text=True, check=True
        ).stdout.split()
        assert changed, "the patches changed nothing"
        for path in changed:
            if path.endswith(".py"):
                py_compile.compile(str(tree / path), doraise=True)
        assert str(tree) in _worktrees()
    assert not tree.exists()
    assert str(tree) not in _worktrees()


def test_a_patch_that_does_not_apply_is_an_error_and_its_worktree_is_removed(tmp_path):
    bad = tmp_path / "bad.patch"
    bad.write_text("--- a/farm/nothing.py\n+++ b/farm/nothing.py\n@@ -1 +1 @@\n-old\n+new\n")
    with pytest.raises(RuntimeError, match="git apply"):
        with variants.variant_tree([bad]):
            pass
    assert "farm-variant-" not in _worktrees()


@pytest.mark.parametrize(
    "spec, error",
    [
        ("page", "NAME=PATCH"),
        ("=postings_from_page.patch", "NAME=PATCH"),
        ("farm=postings_from_page.patch", "taken"),
        ("lean100=postings_from_page.patch", "taken"),
        ("before=@no-such-commit", "no commit 'no-such-commit'"),
    ],
)
def test_a_malformed_variant_is_refused_by_name(spec, error):
    with pytest.raises(SystemExit, match=error):
        variants.parse_variants([spec])


def test_an_unknown_patch_is_named():
    with pytest.raises(FileNotFoundError, match="no_such.patch"):
        variants.parse_variants(["x=no_such.patch"])


def _settings(command) -> dict:
    """The -s settings of a crawl command, the last of each name winning, as Scrapy takes them."""
    return dict(command[i + 1].split("=", 1) for i, arg in enumerate(command) if arg == "-s")


@pytest.mark.parametrize(
    "lean, scrapy_items, extensions, items",
    [
        (False, None, None, "100"),  # plain Scrapy as it comes
        (True, None, LEAN, None),  # like for like: farm's LeanProcess and CONCURRENT_ITEMS (the project's)
        (True, True, LEAN, "100"),  # LeanProcess at Scrapy's CONCURRENT_ITEMS
    ],
)
def test_each_plain_baseline_runs_with_its_own_tuning(lean, scrapy_items, extensions, items):
    command, _ = plain_command("http://sandbox", [("北京", "python")], lean=lean, scrapy_items=scrapy_items)
    settings = _settings(command)
    assert (json.loads(settings["EXTENSIONS"]) if "EXTENSIONS" in settings else None) == extensions
    assert settings.get("CONCURRENT_ITEMS") == items


def _git(*args, cwd=REPO) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def test_a_variant_at_a_commit_is_a_tree_of_that_commit_with_its_patches():
    head = _git("rev-parse", "HEAD")
    variant = variants.parse_variants(["then=@HEAD~0+postings_from_page.patch"])["then"]
    assert variant.commit == head  # named by its id: what HEAD was when the bench began
    assert [patch.name for patch in variant.patches] == ["postings_from_page.patch"]
    with variants.variant_tree(variant.patches, variant.commit) as tree:
        assert _git("rev-parse", "HEAD", cwd=tree) == head
        assert _git("diff", "--name-only", cwd=tree)
    assert "farm-variant-" not in _worktrees()


def test_a_farm_side_in_another_tree_makes_its_state_database_with_that_trees_farm_command(tmp_path):
    keywords = [("北京", "python"), ("上海", "java")]
    with variants.variant_tree([]) as tree:
        # a column only this tree's schema has (the first migration creates the table from this list)
        fields = tree / "farm" / "state" / "posting_fields.py"
        raw = '    Field("raw", JSON),'
        assert raw in fields.read_text()
        fields.write_text(fields.read_text().replace(raw, raw + '\n    Field("only_in_this_tree", TEXT, 8),'))
        db = tmp_path / "state.db"
        command, env = farm_command("http://127.0.0.1:9", keywords, f"sqlite:///{db}", cwd=tree)
    assert command[2:5] == ["scrapy", "crawl", "qcwy"] and env["FARM_DB_URL"] == f"sqlite:///{db}"
    with sqlite3.connect(db) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(job_posting)")}
        rows = conn.execute("SELECT source, city, job FROM keyword ORDER BY id").fetchall()
    assert "only_in_this_tree" in columns
    assert rows == [("qcwy", city, job) for city, job in keywords]


def test_the_breakdown_against_an_earlier_commit_times_each_tree_with_its_own_extensions():
    """farm's parts moved (farm.crawl.parts.CrawlParts was farm.extensions.progress.PageProgress'
    runtime): each side of ``crawl_breakdown --before`` must run its own tree's extensions."""
    from bench.crawl_breakdown import TIMES, _extensions

    today = _extensions(REPO)
    with variants.variant_tree([], variants.commit_of("8a37f09")) as tree:
        earlier = _extensions(tree)
    assert "farm.crawl.parts.CrawlParts" in today and "farm.crawl.parts.CrawlParts" not in earlier
    assert "farm.extensions.progress.PageProgress" in earlier
    assert today.items() >= TIMES.items() and earlier.items() >= TIMES.items()
