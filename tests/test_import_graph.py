"""No import circle in our packages but the two documented idioms (docs/architecture.md, "Import
circles"), counting the imports inside functions as well as those at the top of a module: a lazy
import that closes a loop is as much a circle as one at the top. The arrows back up between packages
and layers are import-linter's contracts (``.importlinter``, run by scripts/test.sh), which count
imports inside functions too. And no module of them past 400 lines."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("contract", "dashboard", "detection", "runner", "workloads")
MAX_LINES = 400  # docs/architecture.md: a module past it is split

# The circles a design keeps on purpose, each as its set of modules (docs/architecture.md):
ALLOWED = {
    # service <-> task: a service sends its own app's task after the commit, and the task calls the service.
    frozenset({"dashboard.alerts.services", "dashboard.alerts.tasks"}),
    frozenset({"dashboard.pipeline.services", "dashboard.pipeline.tasks"}),
    # ... dispatch's sends (broker) and their in-process stand-in for a worker (inprocess), which calls
    # the services back as a worker's messages do.
    frozenset({"dashboard.dispatch.broker", "dashboard.dispatch.inprocess", "dashboard.dispatch.services",
               "dashboard.dispatch.services.builds", "dashboard.dispatch.services.cases", "dashboard.dispatch.services.runs"}),
    # plugin: the deploy paths register in their package, which imports them to know them all.
    frozenset({"runner.engine.paths", "runner.engine.paths.aoti", "runner.engine.paths.export_path"}),
}


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def import_graph(found: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the modules of ours it imports, wherever in the file (functions included)."""

    def ours(name: str) -> str | None:
        while name and name not in found:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for module, path in found.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets |= {ours(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                targets |= {ours(f"{base}.{alias.name}") or ours(base) for alias in node.names}
        graph[module] = targets - {None, module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_no_import_circle_but_the_documented_idioms():
    graph = import_graph(modules())
    unexpected = [c for c in circles(graph) if c not in ALLOWED]
    described = ["; ".join(f"{a} -> {b}" for a in sorted(c) for b in sorted(graph[a] & c)) for c in unexpected]
    assert not unexpected, "import circles (a lazy import counts too): " + " | ".join(described)


def test_the_check_sees_a_circle_closed_inside_a_function(tmp_path):
    """The graph counts an import inside a function and a relative one: a planted loop is found."""
    (tmp_path / "a.py").write_text("from . import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from .a import x\n")
    (tmp_path / "c.py").write_text("import os\n")
    found = {f"p.{name}": tmp_path / f"{name}.py" for name in "abc"}
    assert circles(import_graph(found)) == [frozenset({"p.a", "p.b"})]


def test_no_module_past_400_lines():
    """docs/architecture.md, "Where new code goes": a module past 400 lines is split."""
    long = {str(path.relative_to(ROOT)): lines for path in modules().values()
            if (lines := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, f"split these modules: {long}"
