"""README.md's table of the stacks gives each stack's patch count: it
must be the number of patches in patches/<stack>/ (the cover letter
left out), so that a patch moved between stacks shows in the README."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_counts(text):
    """{stack: count} from the README's '| `patches/<stack>/` | base |
    count |' rows."""
    rows = re.finditer(r"^\| `patches/([^/`]+)/` \| [^|]+ \| (\d+) \|",
                       text, re.MULTILINE)
    return {m[1]: int(m[2]) for m in rows}


def test_readme_counts_match_patch_dirs():
    """Every stack directory has a row, with its number of patches."""
    counts = readme_counts((ROOT / "README.md").read_text())
    dirs = sorted(p.name for p in (ROOT / "patches").iterdir()
                  if p.is_dir())
    assert sorted(counts) == dirs, (sorted(counts), dirs)
    for stack, n in counts.items():
        have = len([p for p in (ROOT / "patches" / stack).glob("0*.patch")
                    if not p.name.startswith("0000-")])
        assert n == have, f"README says {n} patches in {stack}, it has {have}"


def test_readme_counts_parse_a_wrong_count():
    """The parser sees a row's count, so a wrong one fails above."""
    row = "| `patches/net-next-1/` | 7.3 + net | 10 | the RX path | checks |\n"
    assert readme_counts(row) == {"net-next-1": 10}
