"""The repository documents itself: no file points to design documents kept outside it, and
every reference to a docs/ page (and to a section of one) resolves inside the repository."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

# The four design documents the project was specified with live outside the repository.
OUTSIDE = re.compile(r"(?<![\w./-])(?:algorithms|radio-models|studies|design)\.md\b")
# A page ("docs/<page>.md"), optionally followed by ", " and a section named by a heading's start.
DOC_REF = re.compile(r"\bdocs/([a-z0-9-]+\.md)(?:, (?!docs/)([A-Za-z0-9][A-Za-z0-9+ -]*))?")
MD_LINK = re.compile(r"\]\(([^)#\s]+\.md)(#[^)\s]*)?\)")


def _text_files() -> list[Path]:
    listed = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    files = []
    for name in filter(None, listed):
        path = ROOT / name
        if not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        files.append(path)
    return files


def _headings(page: Path) -> list[str]:
    out = []
    for line in page.read_text().splitlines():
        if line.startswith("#"):
            title = re.sub(r"\(.*?\)", "", line.lstrip("#")).strip().lower()
            out.append(title)
    return out


def test_no_file_points_to_documents_outside_the_repository() -> None:
    hits = []
    for path in _text_files():
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not hits, "references to documents outside the repository:\n" + "\n".join(hits)


def test_every_docs_reference_resolves() -> None:
    headings: dict[str, list[str]] = {}
    broken = []
    for path in _text_files():
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for page, section in DOC_REF.findall(line):
                target = DOCS / page
                where = f"{path.relative_to(ROOT)}:{n}"
                if not target.is_file():
                    broken.append(f"{where}: docs/{page} does not exist")
                    continue
                if section:
                    titles = headings.setdefault(page, _headings(target))
                    want = section.strip().lower()
                    if not any(want.startswith(t) or t.startswith(want) for t in titles if t):
                        broken.append(f"{where}: docs/{page} has no section {section.strip()!r}")
    assert not broken, "\n".join(broken)


def test_links_between_docs_pages_resolve() -> None:
    broken = []
    for page in sorted(DOCS.glob("*.md")):
        for target, _ in MD_LINK.findall(page.read_text()):
            if "://" in target:
                continue
            if not (page.parent / target).resolve().is_file():
                broken.append(f"{page.name}: link to {target}")
    assert not broken, "\n".join(broken)


def test_validation_labels_used_by_tests_are_defined() -> None:
    defined = (DOCS / "validation.md").read_text()
    used = set()
    for path in _text_files():
        if path.suffix in {".rs", ".py"}:
            used.update(re.findall(r"\b([MW]1[0-3]|[MW][1-9])\b", path.read_text(errors="replace")))
    missing = sorted(label for label in used if f"| {label} |" not in defined)
    assert not missing, f"labels used in code but not defined in docs/validation.md: {missing}"


def _tables(markdown: str) -> list[str]:
    """Every table of a Markdown page: its consecutive lines that start with "|"."""
    tables, current = [], []
    for line in markdown.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append("\n".join(current) + "\n")
            current = []
    if current:
        tables.append("\n".join(current) + "\n")
    return tables


def test_the_outputs_page_lists_exactly_the_columns_the_recorder_declares() -> None:
    from tcplab import series

    page = (DOCS / "outputs.md").read_text(encoding="utf-8")
    names = ["flows", "flow_groups", "links", "rtt", "radio", "wifi"]
    assert set(names) == set(series.series_names()), "docs/outputs.md has a section per series"
    assert _tables(page) == [series.markdown_table(name) for name in names]
    headings = [line.removeprefix("## ") for line in page.splitlines() if line.startswith("## ")]
    assert headings == [f"{name}.parquet" for name in names]
