"""The layout of the code (docs/architecture.md): no import cycle in either language, and the
Python package's folders in layers, each importing only from the layers below it.

The import graphs are read from the source text: Python's `import` statements (those inside
functions too) with the `ast` module, Rust's `use` declarations and `crate::`/`super::`/`self::`
paths (and child modules named without `self::`). A Rust folder's `mod.rs` naming its own
children is not counted (it is the folder's front). A cycle found is listed, file by file, in
the failure message.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY_SRC = ROOT / "python" / "src"
RUST_CRATES = [ROOT / "crates" / "aqmlab" / "src", ROOT / "crates" / "aqmlab-py" / "src"]

# The Python package's layers, bottom up: a module may import from its own layer's folder and
# from the layers below, never from above. `aqmlab/__init__.py` (the public API) sits above
# the layers it re-exports and below the command line.
PY_LAYERS = [
    {"aqmlab.errors", "aqmlab._core"},
    {"aqmlab.scenario"},
    {"aqmlab.analysis"},
    {"aqmlab.runs"},
    {"aqmlab.study"},
    {"aqmlab.report"},
    {"aqmlab.tune"},
    {"aqmlab"},
    {"aqmlab.reproduce", "aqmlab.rfc7928"},
    {"aqmlab.cli", "aqmlab.__main__"},
]


# --- graphs and their cycles ---------------------------------------------------------------


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node, or with a self-loop
    (Tarjan's algorithm, iterative), each sorted; the list sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)


def test_cycles_finds_what_it_should():
    # The check itself: a circle of three, a self-loop, and a chain that is no circle.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}, "e": {"f"}, "f": set()}
    assert cycles(graph) == [["a", "b", "c"], ["d"]]


# --- Python ---------------------------------------------------------------------------------


def python_modules() -> dict[str, Path]:
    out = {}
    for path in (PY_SRC / "aqmlab").rglob("*.py"):
        parts = list(path.relative_to(PY_SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    out["aqmlab._core"] = PY_SRC / "aqmlab" / "_core"
    return out


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def python_imports(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """Module → the package modules it imports (a `from P import x` names the submodule
    `P.x` when there is one, else `P`)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        if path.suffix != ".py":
            graph[name] = set()
            continue
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = _package_of(name, path).split(".")
                    pkg = pkg[: len(pkg) - node.level + 1]
                    base = ".".join([*pkg, base] if base else pkg)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.add(sub if sub in modules else base)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _layer(module: str) -> int:
    best, depth = -1, -1
    for i, layer in enumerate(PY_LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = i, len(prefix)
    return best


def test_python_has_no_import_cycle():
    found = cycles(python_imports(python_modules()))
    assert not found, "import cycles in python/src: " + "; ".join(" <-> ".join(c) for c in found)


def test_python_folders_import_only_downwards():
    modules = python_modules()
    upward = [
        f"{a} -> {b}"
        for a, targets in sorted(python_imports(modules).items())
        for b in sorted(targets)
        if _layer(b) > _layer(a)
    ]
    unplaced = sorted(m for m in modules if _layer(m) < 0)
    assert not unplaced, f"modules in no layer of PY_LAYERS: {unplaced}"
    assert not upward, "imports from a higher layer: " + "; ".join(upward)


# --- Rust -----------------------------------------------------------------------------------

_RUST_PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
_USE_GROUP = re.compile(r"\buse\s+(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\};")


def rust_modules(src: Path) -> dict[tuple[str, ...], Path]:
    """Module path → file, for one crate's `src` (lib.rs is the root, `x/mod.rs` is `x`)."""
    out = {}
    for path in src.rglob("*.rs"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] in ("mod", "lib"):
            parts.pop()
        out[tuple(parts)] = path
    return out


def _strip_comments(text: str) -> str:
    """The code without comments and without its unit tests (a `#[cfg(test)]` module, by
    custom at the end of the file: tests may reach across modules without making the code's
    structure circular)."""
    text = re.sub(r"#\[cfg\(test\)\]\s*(pub(\(crate\))?\s+)?mod\s+\w+\s*;", "", text)
    text = text.split("#[cfg(test)]", 1)[0]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _resolve(modules, here: tuple[str, ...], kind: str, names: list[str]) -> tuple[str, ...]:
    base = {"crate": (), "self": here, "super": here[:-1]}[kind]
    while names and names[0] == "super":  # super::super::x
        base, names = base[:-1], names[1:]
    path = base
    for name in names:  # the deepest module the path names (the rest are items in it)
        if (*path, name) in modules:
            path = (*path, name)
        else:
            break
    return path


def _after(text: str, name: str) -> list[str]:
    """The longest path that follows `name::` in `text` (to reach a grandchild module)."""
    paths = re.findall(rf"(?<![:\w]){name}((?:::[A-Za-z_][A-Za-z0-9_]*)+)", text)
    return max((p.strip(":").split("::") for p in paths), key=len, default=[])


def rust_imports(src: Path) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    modules = rust_modules(src)
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for here, path in modules.items():
        text = _strip_comments(path.read_text(encoding="utf-8"))
        refs = [(k, rest.strip(":").split("::")) for k, rest in _RUST_PATH.findall(text)]
        for kind, prefix, group in _USE_GROUP.findall(text):
            head = prefix.strip(":").split("::") if prefix else []
            for item in re.split(r"[,\s]+", re.sub(r"\{[^}]*\}", "", group)):
                if item and item not in ("self", "*"):
                    refs.append((kind, [*head, item.split("::")[0]]))
        targets = {_resolve(modules, here, k, [n for n in names if n]) for k, names in refs}
        # A child module named without `self::` (`use browsers::Browser`, `codel::Codel`).
        for child in (m for m in modules if len(m) == len(here) + 1 and m[:-1] == here):
            if re.search(rf"(?<![:\w]){child[-1]}::", text):
                targets.add(_resolve(modules, here, "self", [child[-1], *_after(text, child[-1])]))
        # A folder's `mod.rs` declares its children and re-exports or dispatches to them: it
        # is the folder's front, and what a child takes from it (`super::Decision`) is the
        # folder's shared vocabulary. So edges to a module's own descendants are not counted;
        # a child's edges to its parent, between siblings and across folders are.
        graph[here] = {t for t in targets if t[: len(here)] != here}
    return graph


def _show_rust(src: Path, component: list[tuple[str, ...]]) -> str:
    modules = rust_modules(src)
    return " <-> ".join(str(modules[m].relative_to(ROOT)) for m in component)


def test_rust_reader_sees_uses():
    # The reader itself, on the core: `sim` uses `tcp`, `net::queue` uses `aqm`.
    graph = rust_imports(RUST_CRATES[0])
    assert ("tcp",) in graph[("sim",)]
    assert ("aqm",) in graph[("net", "queue")] or any(
        t[:1] == ("aqm",) for t in graph[("net", "queue")]
    )


def test_rust_has_no_import_cycle():
    problems = []
    for src in RUST_CRATES:
        graph = rust_imports(src)
        # The crate root (lib.rs) declares every module; what it names is declaration, not use.
        graph[()] = set()
        problems += [_show_rust(src, c) for c in cycles(graph)]
    assert not problems, "import cycles in the Rust crates: " + "; ".join(problems)
