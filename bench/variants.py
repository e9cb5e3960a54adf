"""farm's crawl with experimental changes, in paired rounds against plain Scrapy and farm as it is.

``python -m bench.variants [--rounds N] [--as-filed] NAME=[@COMMIT+]PATCH[+PATCH...] NAME=@COMMIT
...`` (``make bench-variants VARIANTS="..."``). Each variant is this checkout's HEAD (or
COMMIT: farm as it was, to show whether a change made the crawl slower) in a git
worktree of its own with the patches (``git apply``, in order, paths relative to
bench/experiments/ or to the repository) applied; each farm side makes its state
database with its own tree's `farm` command (an older commit has its own migrations).
Farm as it is runs from HEAD too (uncommitted changes are in no side: make them a
patch). Each round crawls the crawl benchmark's 1,600 pages with every side, in an order
that turns each round, as ``make bench`` does: plain Scrapy with ``LeanProcess`` (the
like-for-like baseline), farm as it is, farm with its postings not stored
(bench.unstored), then the variants; with ``--as-filed``, plain Scrapy with
``LeanProcess`` at Scrapy's CONCURRENT_ITEMS too (the less strict like-for-like baseline)
and each farm side's ratio to it. Printed: each side's median ratio to plain Scrapy
and to farm, where each median lies (bench.rounds: an interval that holds it with a
stated probability), the rounds' ratios, and the postings each farm side stored, so that
a variant that stores fewer says so.

An experiment that was tried and not kept stays here as its patch, so that the figure
docs/benchmarks.md gives for it can be measured again (bench/experiments/README.md).
"""

import argparse
import sqlite3
import statistics
import subprocess
import tempfile
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.crawl_bench import CITIES, JOBS, REPO, UNSTORED, farm, plain
from bench.rounds import median_interval
from farm.sandbox.testing import SandboxProcess

EXPERIMENTS = REPO / "bench" / "experiments"


def patch_path(name: str) -> Path:
    """A patch named as given: under bench/experiments/, or a path from the repository."""
    for path in (EXPERIMENTS / name, REPO / name):
        if path.is_file():
            return path
    raise FileNotFoundError(f"no patch {name!r} in {EXPERIMENTS} or {REPO}")


@dataclass(frozen=True)
class Variant:
    commit: str  # what git names it by: HEAD, or a commit's id
    patches: list[Path]


@contextmanager
def variant_tree(patches: list[Path], commit: str = "HEAD"):
    """A worktree of ``commit`` with ``patches`` applied in order; removed on leaving."""
    with tempfile.TemporaryDirectory(prefix="farm-variant-") as parent:
        tree = Path(parent) / "farm"
        _git("worktree", "add", "--detach", "--quiet", str(tree), commit)
        try:
            for patch in patches:
                _git("apply", str(patch), cwd=tree)
            yield tree
        finally:
            _git("worktree", "remove", "--force", str(tree))


def _git(*args: str, cwd: Path = REPO) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def _farm_side(tree: Path, sandbox_url: str, keywords, db: Path, extra=()):
    rate = farm(sandbox_url, keywords, f"sqlite:///{db}", extra, cwd=tree)[1]
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT count(*) FROM job_posting").fetchone()[0]
    return rate, stored


# the less strict like-for-like baseline: plain Scrapy + LeanProcess at Scrapy's
# CONCURRENT_ITEMS (100), which leaves farm what its own CONCURRENT_ITEMS gains
AS_FILED = "lean100"


def run(variants: dict[str, Variant], rounds: int, as_filed: bool = False) -> list[str]:
    keywords = [(city, job) for city in CITIES for job in JOBS]
    with ExitStack() as stack:
        # farm as it is from HEAD too: what the working tree holds uncommitted is in no side
        head = stack.enter_context(variant_tree([]))
        trees = {
            name: stack.enter_context(variant_tree(variant.patches, variant.commit))
            for name, variant in variants.items()
        }
        sandbox = stack.enter_context(SandboxProcess(seed=9, postings=(800, 800)))
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))

        def farm_in(tree, name, extra=()):
            return lambda round_no: _farm_side(tree, sandbox.url, keywords, tmp / f"{name}-{round_no}.db", extra)

        sides = {
            "lean": lambda round_no: (plain(sandbox.url, keywords, lean=True, cwd=head)[1], None),
            **(
                {
                    AS_FILED: lambda round_no: (
                        plain(sandbox.url, keywords, lean=True, cwd=head, scrapy_items=True)[1],
                        None,
                    )
                }
                if as_filed
                else {}
            ),
            "farm": farm_in(head, "farm"),
            "unstored": farm_in(head, "unstored", UNSTORED),
            **{name: farm_in(tree, name) for name, tree in trees.items()},
        }
        rates = {side: [] for side in sides}
        stored = {side: set() for side in sides}
        for round_no in range(rounds):
            for side in sides if round_no % 2 == 0 else reversed(sides):
                rate, postings = sides[side](round_no)
                rates[side].append(rate)
                stored[side].add(postings)
            print(f"round {round_no + 1}: " + ", ".join(f"{side} {rates[side][-1]:.1f}" for side in sides), flush=True)
    lines = []
    for side in sides:
        if side == "lean":
            lines.append(f"{'lean':<14} {statistics.median(rates['lean']):7.1f} pages/s (plain Scrapy + LeanProcess)")
            continue
        baselines = ["lean"]
        if side != AS_FILED:
            baselines += [other for other in (AS_FILED, "farm") if other in sides and other != side]
        ratios = []
        for baseline in baselines:
            each = [a / b for a, b in zip(rates[side], rates[baseline])]
            listed = f" ({' '.join(f'{r:.3f}' for r in each)})" if baseline == "lean" else ""
            ratios.append(f"/ {baseline} {statistics.median(each):.3f} [{_interval(each)}]{listed}")
        what = (
            " (plain Scrapy + LeanProcess at Scrapy's CONCURRENT_ITEMS)"
            if side == AS_FILED
            else f", postings stored {sorted(stored[side])}"
        )
        lines.append(f"{side:<14} {statistics.median(rates[side]):7.1f} pages/s, {', '.join(ratios)}{what}")
    return lines


def _interval(ratios) -> str:
    """Where the median of ``ratios`` lies (bench.rounds), as the output shows it."""
    if len(ratios) < 2:
        return "one round: no interval"
    low, high, coverage = median_interval(ratios)
    return f"{low:.3f} to {high:.3f}, {coverage:.1%} sure"


def parse_variants(specs: list[str]) -> dict[str, Variant]:
    variants = {}
    for spec in specs:
        name, sep, parts = spec.partition("=")
        if not sep or not name or not parts:
            raise SystemExit(f"a variant is NAME=PATCH[+PATCH...] or NAME=@COMMIT[+PATCH...], got {spec!r}")
        if name in ("lean", AS_FILED, "farm", "unstored") or name in variants:
            raise SystemExit(f"variant name {name!r} is taken")
        patches = parts.split("+")
        commit = "HEAD"
        if patches[0].startswith("@"):
            commit = commit_of(patches.pop(0)[1:])
        variants[name] = Variant(commit, [patch_path(patch) for patch in patches])
    return variants


def commit_of(name: str) -> str:
    """The id of the commit ``name`` names (a hash, tag or branch), or a SystemExit saying why not."""
    try:
        return _git("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}")
    except RuntimeError:
        raise SystemExit(f"no commit {name!r} in {REPO}") from None


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.variants", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument(
        "--as-filed",
        action="store_true",
        help=f"also plain Scrapy + LeanProcess at Scrapy's CONCURRENT_ITEMS ({AS_FILED}), the "
        "less strict like-for-like baseline, and each farm side's ratio to it",
    )
    parser.add_argument("variants", nargs="*", metavar="NAME=[@COMMIT+]PATCH[+PATCH...]|NAME=@COMMIT")
    args = parser.parse_args(argv)
    for line in run(parse_variants(args.variants), args.rounds, args.as_filed):
        print(line)


if __name__ == "__main__":
    main()
