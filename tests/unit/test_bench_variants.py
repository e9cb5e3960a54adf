"""bench.variants: experiments kept as patches still apply to HEAD, and leave no worktree behind."""

import py_compile
import re
import subprocess

import pytest

from bench import variants
from bench.crawl_bench import REPO

pytestmark = pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs a git checkout")


def _worktrees() -> str:
    return subprocess.run(["git", "worktree", "list"], cwd=REPO, capture_output=True, text=True, check=True).stdout


def _documented_variants() -> dict:
    """The variants bench/experiments/README.md tells how to run."""
    readme = (variants.EXPERIMENTS / "README.md").read_text()
    specs = [spec for line in re.findall(r'^ +make bench-variants VARIANTS="([^"]+)"', readme, re.M) for spec in line.split()]
    return variants.parse_variants(specs)


def test_every_patch_in_experiments_is_documented_with_a_command():
    documented = {patch.name for patches in _documented_variants().values() for patch in patches}
    assert documented == {path.name for path in variants.EXPERIMENTS.glob("*.patch")}


@pytest.mark.parametrize("name", sorted(_documented_variants()))
def test_a_documented_variant_applies_to_head_and_compiles(name):
    patches = _documented_variants()[name]
    with variants.variant_tree(patches) as tree:
        changed = subprocess.run(["git", "diff", "--name-only"], cwd=tree, capture_output=True, text=True,
                                 check=True).stdout.split()  # fmt: skip
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


@pytest.mark.parametrize("spec, error", [
    ("page", "NAME=PATCH"),
    ("=postings_from_page.patch", "NAME=PATCH"),
    ("farm=postings_from_page.patch", "taken"),
])  # fmt: skip
def test_a_malformed_variant_is_refused_by_name(spec, error):
    with pytest.raises(SystemExit, match=error):
        variants.parse_variants([spec])


def test_an_unknown_patch_is_named():
    with pytest.raises(FileNotFoundError, match="no_such.patch"):
        variants.parse_variants(["x=no_such.patch"])
