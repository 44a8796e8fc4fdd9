"""README.md's results tables and docs/design.md's layout table are
generated from measurements/ by lab/bench/tables.py and cannot drift;
every run is in the measurements index once; every run the README and
docs/ name exists."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLES = ROOT / "lab" / "bench" / "tables.py"
MEAS = ROOT / "measurements"


def run_tables(*args):
    """lab/bench/tables.py with ARGS; its CompletedProcess."""
    return subprocess.run([sys.executable, str(TABLES), *args],
                          capture_output=True, text=True, cwd=ROOT,
                          check=False)


def test_readme_tables_match_measurements():
    """The README's blocks are what the runs give."""
    r = run_tables("--check")
    assert r.returncode == 0, r.stdout + r.stderr


def test_hand_edited_figure_fails_check(tmp_path):
    """A figure edited by hand makes --check fail; regenerating restores
    it."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- tables:results begin -->\n(.*?)"
                      r"<!-- tables:results end -->", readme, re.DOTALL)
    assert block, "README.md has no tables:results block"
    row = next(l for l in block.group(1).splitlines()
               if "→" in l and re.search(r"→ [1-9]", l))
    # a series median edited by hand: its first digit changed
    edited = re.sub(r"→ ([1-9])",
                    lambda m: f"→ {int(m.group(1)) % 9 + 1}", row, count=1)
    assert edited != row, row
    copy = tmp_path / "README.md"
    copy.write_text(readme.replace(row, edited))
    r = run_tables("--check", "--readme", str(copy))
    assert r.returncode == 1
    assert "stale" in r.stderr
    assert "-" + edited in r.stdout and "+" + row in r.stdout
    # regenerating restores the figure
    assert run_tables("--readme", str(copy)).returncode == 0
    assert copy.read_text() == readme



def test_design_layout_table_is_generated(tmp_path):
    """docs/design.md's layout comparison is a generated block too: a
    figure edited by hand in it makes --check fail, and a design.md
    without the block fails as well."""
    design = (ROOT / "docs" / "design.md").read_text()
    block = re.search(r"<!-- tables:layouts begin -->\n(.*?)"
                      r"<!-- tables:layouts end -->", design, re.DOTALL)
    assert block, "docs/design.md has no tables:layouts block"
    row = next(l for l in block.group(1).splitlines()
               if l.startswith("| unbound") and re.search(r"\| [1-9]", l))
    edited = re.sub(r"\| ([1-9])",
                    lambda m: f"| {int(m.group(1)) % 9 + 1}", row, count=1)
    copy = tmp_path / "design.md"
    copy.write_text(design.replace(row, edited))
    r = run_tables("--check", "--design", str(copy))
    assert r.returncode == 1 and "stale" in r.stderr, r.stdout + r.stderr
    copy.write_text(design.replace(block.group(0), ""))
    r = run_tables("--check", "--design", str(copy))
    assert r.returncode == 1 and "lacks the block(s) layouts" in r.stderr

def runs():
    """Every run directory, archived ones as archive/NAME."""
    top = [p.name for p in MEAS.iterdir()
           if p.is_dir() and p.name != "archive"]
    arch = ["archive/" + p.name for p in (MEAS / "archive").iterdir()
            if p.is_dir()] if (MEAS / "archive").is_dir() else []
    return top + arch


def test_index_has_one_line_per_run():
    """measurements/README.md lists every run exactly once."""
    index = (MEAS / "README.md").read_text().splitlines()
    for run in runs():
        lines = [l for l in index if l.startswith(f"| `{run}/` |")]
        assert len(lines) == 1, f"{run}: {len(lines)} index lines"
    listed = re.findall(r"^\| `([\w./-]+)/` \|", "\n".join(index), re.MULTILINE)
    assert sorted(listed) == sorted(runs())


def test_quoted_runs_exist():
    """Every measurements/ path that README.md or docs/ name exists."""
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for doc in docs:
        for ref in re.findall(r"measurements/([\w.-]+(?:/[\w.-]+)*)",
                              doc.read_text()):
            ref = ref.rstrip(".")
            assert (MEAS / ref).exists(), f"{doc.name}: measurements/{ref}"
