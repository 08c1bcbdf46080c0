"""The house as docs/architecture.md draws it, checked against the code: its package table lists
exactly the packages of triagebot/, each package imports exactly the packages its row names
(torch and transformers included), the rows form layers, and no two modules import each other,
directly or around a loop."""

from __future__ import annotations

import ast
import graphlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "triagebot"
DOC = ROOT / "docs" / "architecture.md"
TABLE_HEADER = "| package | owns | imports |"
MODEL_CODE = {"torch", "transformers"}
ENTRY_POINTS = {"__init__", "__main__"}  # triagebot/__init__.py and `python -m triagebot`


@dataclass(frozen=True)
class Row:
    """One row of the document's package table."""

    cell: str  # `name/` for a package, `name.py` for a module
    imports: frozenset[str]  # triagebot packages and model code, as the row names them


def read_table() -> dict[str, Row]:
    """The package table of docs/architecture.md: name -> row. Text in parentheses in the
    imports column is commentary; every other word there must be a package or model code."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    rows = {}
    for line in lines[lines.index(TABLE_HEADER) + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        assert len(cells) == 3, f"a row of the package table has {len(cells)} cells: {line}"
        cell = cells[0].strip("`")
        named = re.sub(r"\([^)]*\)", "", cells[2])
        imports = {word.strip() for word in named.split(",")} - {"nothing", ""}
        rows[cell.removesuffix("/").removesuffix(".py")] = Row(cell, frozenset(imports))
    return rows


TABLE = read_table()
MODULES = {
    ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
    for path in sorted(PACKAGE.rglob("*.py"))
}


def package_of(module: str) -> str:
    """`triagebot.report.site` -> `report`; the top-level `triagebot` -> `__init__`."""
    return module.split(".")[1] if "." in module else "__init__"


def type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def import_nodes(tree: ast.AST, *, type_checking: bool):
    """Every import statement, function bodies included; those under `if TYPE_CHECKING:` only
    when `type_checking`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif type_checking_block(node) and not type_checking:
            for branch in node.orelse:
                yield from import_nodes(ast.Module(body=[branch], type_ignores=[]), type_checking=False)
        else:
            yield from import_nodes(node, type_checking=type_checking)


def imported(module: str, *, type_checking: bool = True) -> tuple[set[str], set[str]]:
    """(the triagebot modules `module` imports, the other top-level packages it imports)."""
    path = MODULES[module]
    here = module if path.name == "__init__.py" else module.rpartition(".")[0]
    ours, theirs = set(), set()
    for node in import_nodes(ast.parse(path.read_text(encoding="utf-8")), type_checking=type_checking):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                parts = here.split(".")[: len(here.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        for target in targets:
            if target.split(".")[0] != "triagebot":
                theirs.add(target.split(".")[0])
                continue
            while target not in MODULES:  # `import triagebot.x.name` of a name, not a module
                target = target.rpartition(".")[0]
            if target != module:
                ours.add(target)
    return ours, theirs


def package_imports(module: str) -> set[str]:
    """The packages (and model code) `module` imports, besides its own."""
    ours, theirs = imported(module)
    return ({package_of(target) for target in ours} | (theirs & MODEL_CODE)) - {package_of(module)}


CHECKED = [module for module in MODULES if package_of(module) not in ENTRY_POINTS]


def test_the_table_lists_exactly_the_packages_that_exist():
    """A new package needs a row; a module that becomes a package, or goes, changes its row."""
    existing = set()
    for path in PACKAGE.iterdir():
        if path.is_dir() and (path / "__init__.py").is_file():
            existing.add(f"{path.name}/")
        elif path.suffix == ".py" and path.stem not in ENTRY_POINTS:
            existing.add(path.name)
    assert {row.cell for row in TABLE.values()} == existing


def test_every_name_in_the_imports_column_is_a_package_or_model_code():
    for name, row in TABLE.items():
        assert row.imports <= set(TABLE) | MODEL_CODE, f"{name}: {sorted(row.imports - set(TABLE))}"


@pytest.mark.parametrize("module", CHECKED)
def test_each_module_imports_only_what_its_package_may(module: str):
    row = TABLE.get(package_of(module))
    assert row is not None, f"docs/architecture.md has no row for {package_of(module)}"
    assert package_imports(module) - row.imports == set(), f"{module} imports outside its row"


@pytest.mark.parametrize("package", sorted(TABLE))
def test_every_import_a_row_names_is_made(package: str):
    """The table draws the house as it is: an import no module makes any more leaves its row."""
    made = set().union(*(package_imports(m) for m in CHECKED if package_of(m) == package))
    assert TABLE[package].imports - made == set()


def test_the_table_is_layered():
    """No two packages import each other, even through others."""
    graphlib.TopologicalSorter({name: row.imports - MODEL_CODE for name, row in TABLE.items()}).prepare()


def test_no_module_imports_itself_around_a_loop():
    """Module-level and function-level imports alike (an import inside a function only defers a
    cycle); imports under `if TYPE_CHECKING:` never run and are left out."""
    graph = {module: imported(module, type_checking=False)[0] for module in MODULES}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")
