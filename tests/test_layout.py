"""The package's shape: no import cycle, no private name imported or private attribute used across packages, no module
over ~400 lines.

Reads src/medlink with ast (nothing is imported): every ``import`` and ``from ... import`` counts, at module level
or inside a function, so a cycle hidden behind a late import is found too.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "medlink"
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def package_of(module: str, path: Path) -> str:
    """The package a module belongs to (a package's ``__init__`` belongs to the package itself)."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a ``from`` import reads from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = package_of(module, path).split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports(known: dict[str, Path]) -> dict[str, list[tuple[str, str | None, int]]]:
    """module -> [(imported medlink module, name imported from it or None, line)] for every import in its source."""
    found: dict[str, list[tuple[str, str | None, int]]] = {}
    for module, path in known.items():
        edges = found.setdefault(module, [])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                edges.extend((alias.name, None, node.lineno) for alias in node.names if alias.name.split(".")[0] == "medlink")
            elif isinstance(node, ast.ImportFrom):
                source = resolve(module, path, node)
                if source.split(".")[0] != "medlink":
                    continue
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    # ``from medlink.kb import default`` imports the module medlink.kb.default
                    edges.append((submodule, None, node.lineno) if submodule in known else (source, alias.name, node.lineno))
    return found


def graph(known: dict[str, Path]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, targets in imports(known).items():
        for target, name, _line in targets:
            # importing medlink.a.b runs medlink.a's __init__ first, unless the importer is inside medlink.a (then it already ran);
            # but a name taken from an ancestor package's __init__ (from medlink.a import X inside medlink.a.b) is a real edge
            parts = target.split(".")
            for depth in range(2, len(parts) + 1):
                prefix = ".".join(parts[:depth])
                named_from_ancestor = name is not None and prefix == target
                if prefix in known and prefix != module and (named_from_ancestor or not module.startswith(prefix + ".")):
                    edges.setdefault(module, set()).add(prefix)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted; self-imports are not cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def is_private(dotted: str) -> bool:
    return any(part.startswith("_") for part in dotted.split("."))


def test_no_import_cycle():
    known = modules()
    # a package's __init__ importing its own modules is how re-exports work; a module importing its package's
    # __init__ back is then the cycle, and it is counted
    assert cycles(graph(known)) == []


def test_no_private_name_imported_from_another_package():
    known = modules()
    offenders = []
    for module, targets in imports(known).items():
        own = package_of(module, known[module])
        for target, name, line in targets:
            target_path = known.get(target)
            target_package = package_of(target, target_path) if target_path else target.rpartition(".")[0]
            if target_package == own:
                continue
            if is_private(target) or (name is not None and name.startswith("_")):
                offenders.append(f"{known[module].relative_to(SRC)}:{line}: {target}" + (f".{name}" if name else ""))
    assert offenders == []


OWN = {"self", "cls"}  # a method's own object: its private attributes are its class's business


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def private_members(tree: ast.Module) -> set[str]:
    """Private attribute names a module gives objects: class members (methods, class attributes, fields) and
    ``self._name`` / ``cls._name`` assignments."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(statement.name)
                elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
                    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                    names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and is_own(node.value):
            names.add(node.attr)
    return {name for name in names if name.startswith("_") and not is_dunder(name)}


def is_own(receiver: ast.expr) -> bool:
    """``self``, ``cls``, ``super()`` or ``type(self)``: the object whose method this is."""
    if isinstance(receiver, ast.Name):
        return receiver.id in OWN
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name):
        return receiver.func.id == "super" or (
            receiver.func.id == "type" and len(receiver.args) == 1 and isinstance(receiver.args[0], ast.Name) and receiver.args[0].id in OWN
        )
    return False


def module_aliases(module: str, path: Path, tree: ast.Module, known: dict[str, Path]) -> dict[str, str]:
    """Names a module binds to medlink modules (``import medlink.kb.store as store``, ``from medlink.kb import store``)."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({alias.asname: alias.name for alias in node.names if alias.asname and alias.name in known})
        elif isinstance(node, ast.ImportFrom):
            source = resolve(module, path, node)
            aliases.update({alias.asname or alias.name: f"{source}.{alias.name}" for alias in node.names if f"{source}.{alias.name}" in known})
    return aliases


def private_attribute_uses(tree: ast.Module) -> list[tuple[ast.expr, str, int]]:
    """(receiver, name, line) of every ``obj._name`` and ``getattr / setattr / hasattr / delattr(obj, "_name")`` whose
    ``obj`` is not the method's own object."""
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not is_dunder(node.attr) and not is_own(node.value):
            uses.append((node.value, node.attr, node.lineno))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value.startswith("_")
            and not is_dunder(node.args[1].value)
            and not is_own(node.args[0])
        ):
            uses.append((node.args[0], node.args[1].value, node.lineno))
    return sorted(uses, key=lambda use: use[2])


def cross_package_private_attributes(known: dict[str, Path]) -> list[str]:
    """Private attributes a module uses on another package's objects: a module's (``store._helper``, the module imported),
    or an object's whose private member only other medlink packages define (``kb._db`` from ``align``). Whose object it
    is, ast cannot know: the packages giving objects that member stand for it (a name one's own package gives too
    passes; one no medlink class gives is a library's, as ``torch._int_mm``, and out of this check's reach)."""
    trees = {module: ast.parse(path.read_text(encoding="utf-8"), str(path)) for module, path in known.items()}
    members: dict[str, set[str]] = {}
    for module, tree in trees.items():
        for name in private_members(tree):
            members.setdefault(name, set()).add(package_of(module, known[module]))
    offenders = []
    for module, tree in trees.items():
        own = package_of(module, known[module])
        aliases = module_aliases(module, known[module], tree, known)
        for receiver, name, line in private_attribute_uses(tree):
            dotted = ast.unparse(receiver)
            target = aliases.get(dotted) or (dotted if dotted in known else None)
            owners = {package_of(target, known[target])} if target else members.get(name, set())
            if owners and own not in owners:
                offenders.append(f"{module}:{line}: {dotted}.{name} (of {', '.join(sorted(owners))})")
    return offenders


def test_no_private_attribute_used_across_packages():
    assert cross_package_private_attributes(modules()) == []


def test_the_private_attribute_check_catches_a_planted_case(tmp_path):
    """medlink.fake.store gives its objects ``_db``; medlink.other reads it three ways and the store module's ``_helper``
    once: caught; its own ``self._db``, a library's ``lib._private`` and ``p._version`` (a name medlink gives a module,
    not an object) are not, nor medlink.fake.view's ``store._db`` (the store's own package)."""
    (tmp_path / "store.py").write_text("def _helper():\n    pass\n\n\nclass Store:\n    def __init__(self, db):\n        self._db = db\n")
    (tmp_path / "view.py").write_text("def rows(store):\n    return store._db.execute('SELECT 1')\n")
    other = [
        "import lib",
        "from medlink.fake import store as kb_store",
        "class Reader:",
        "    def __init__(self, store):",
        "        self.store = store",
        "    def rows(self):",
        "        return self.store._db.execute('x'), getattr(self.store, '_db'), lib._private, self._own",  # line 7
        "def peek(kb, p):",
        "    return kb._db, kb_store._helper(), p._version, kb_store.Store",  # line 9
        "def _version():",
        "    pass",
    ]
    (tmp_path / "other.py").write_text("\n".join(other) + "\n")
    known = {"medlink.fake.store": tmp_path / "store.py", "medlink.fake.view": tmp_path / "view.py", "medlink.other": tmp_path / "other.py"}
    assert cross_package_private_attributes(known) == [
        "medlink.other:7: self.store._db (of medlink.fake)",
        "medlink.other:7: self.store._db (of medlink.fake)",
        "medlink.other:9: kb._db (of medlink.fake)",
        "medlink.other:9: kb_store._helper (of medlink.fake)",
    ]
    # the check's limit, said: once medlink.other gives its own objects a _db, its uses of the name pass as its own
    (tmp_path / "other.py").write_text("\n".join([*other[:5], "        self._db = None", *other[5:]]) + "\n")
    assert cross_package_private_attributes(known) == ["medlink.other:10: kb_store._helper (of medlink.fake)"]


def test_no_module_over_400_lines():
    long = {str(path.relative_to(SRC)): n for path in PACKAGE.rglob("*.py") if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_the_checks_see_a_cycle_and_a_private_import():
    """The graph code on a made-up graph: a cycle through a late import is found, a chain is not a cycle."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}}) == []
    assert is_private("medlink.kb.readers._io") and not is_private("medlink.kb.readers.files")


def test_a_cycle_through_a_package_reexport_is_caught(tmp_path):
    """medlink.fake's __init__ re-exports b's name, and b takes a name back from medlink.fake: a cycle the check must see."""
    (tmp_path / "__init__.py").write_text("from medlink.fake.b import thing\n")
    (tmp_path / "b.py").write_text("from medlink.fake import other\nthing = 1\n")
    (tmp_path / "c.py").write_text("import medlink.fake.b\n")  # a submodule import from inside the package: no cycle
    known = {"medlink.fake": tmp_path / "__init__.py", "medlink.fake.b": tmp_path / "b.py", "medlink.fake.c": tmp_path / "c.py"}
    assert cycles(graph(known)) == [["medlink.fake", "medlink.fake.b"]]
