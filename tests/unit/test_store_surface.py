"""The store exposes what its jobs use: outside farm/state/store.py no module reads a private member of a
store (``store._x``, ``self.store._x``, ``parts.store._x``): farm.state.storeview.StoreView lists what they may."""

import ast
from pathlib import Path

import farm

ROOT = Path(farm.__file__).parent


def _private_store_reads(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
            continue
        owner = node.value
        name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
        if name == "store":
            found.append(f"line {node.lineno}: store.{node.attr}")
    return found


def test_no_module_but_the_store_reads_its_private_members():
    reads = {
        str(path.relative_to(ROOT)): said
        for path in sorted(ROOT.rglob("*.py"))
        if path.name != "store.py" or path.parent.name != "state"
        if (said := _private_store_reads(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert reads == {}


def test_the_check_finds_a_private_read():
    assert _private_store_reads(ast.parse("def f(self):\n    return self.store._retrying()\n")) == [
        "line 2: store._retrying"
    ]
