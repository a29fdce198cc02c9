"""The package stays legible: small classes and functions, no import cycles, and names that
mean one thing across the HAS half and DocuTeam (docs/architecture.md)."""

import ast
import functools
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parents[1] / "hasbench"
MAX_CLASS_LINES = 500
MAX_FUNCTION_LINES = 150
EXEMPT = (
    "build/airline_tasks.py",  # generated-task builders: one seeded generator per domain
    "build/bargaining_tasks.py",
    "build/coding_tasks.py",
    "build/research_tasks.py",
    "build/retail_tasks.py",
    "build/telecom_tasks.py",
    "envs/coding/repos/",  # the coding repositories' catalogue: source text, not our code
)


@functools.cache
def modules() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if not relative.startswith(EXEMPT):
            found.append((relative, ast.parse(path.read_text(), filename=str(path))))
    return found


def longer_than(kinds: tuple[type, ...], limit: int) -> list[str]:
    return [
        f"{relative}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for relative, tree in modules()
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.end_lineno - node.lineno + 1 > limit
    ]


def test_the_exempt_paths_exist():
    for exempt in EXEMPT:
        assert (PACKAGE / exempt).exists(), exempt


def test_no_class_is_longer_than_500_lines():
    assert longer_than((ast.ClassDef,), MAX_CLASS_LINES) == []


def test_no_function_is_longer_than_150_lines():
    assert longer_than((ast.FunctionDef, ast.AsyncFunctionDef), MAX_FUNCTION_LINES) == []


def test_the_measure_finds_a_long_class_and_a_long_function():
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    tree = ast.parse(f"class Big:\n    def long(self):\n{body}\n        return 0\n")
    sizes = {n.name: n.end_lineno - n.lineno + 1 for n in ast.walk(tree) if hasattr(n, "name")}
    assert sizes == {"Big": MAX_FUNCTION_LINES + 3, "long": MAX_FUNCTION_LINES + 2}


def test_no_module_imports_itself_through_others():
    """Typing-only imports count too: a cycle is a cycle to a reader."""
    graph = grimp.build_graph("hasbench", cache_dir=None)
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back and module < imported:
                cycles.append(" -> ".join([module, *back]))
    assert cycles == []


def public_type_names(tree: ast.Module) -> set[str]:
    """Classes and type aliases (capitalised names) a module defines at its top level."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and target.id[:1].isupper() and not target.id.isupper():
                names.add(target.id)
    return {name for name in names if not name.startswith("_")}


def test_has_and_docuteam_name_their_types_apart():
    """A type in DocuTeam and one in the HAS half never share a name: the concepts differ
    (a session log's event types are not a trace's)."""
    docuteam: dict[str, str] = {}
    has: dict[str, str] = {}
    for relative, tree in modules():
        side = docuteam if relative.startswith("docuteam/") else has
        for name in public_type_names(tree):
            side.setdefault(name, relative)
    shared = sorted(
        f"{name}: {has[name]} and {docuteam[name]}" for name in set(has) & set(docuteam)
    )
    assert shared == []
