"""The device model is built as separate compilation units by concern
(emulator/lan7430*.c sharing emulator/lan7430-int.h), not as parts
#included into one unit, and no function of it is longer than 150 lines.
Pure Python: reads the sources, builds nothing."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EMU = ROOT / "emulator"
MAX_LINES = 150

def functions(path):
    """[(name, first line, lines)] of the function definitions in PATH.

    QEMU style: a definition's body opens with "{" alone at column 0 and
    closes with "}" alone at column 0; its signature (from the first line
    after a blank line, comment or preprocessor line) names it.
    """
    lines = path.read_text().split("\n")
    out = []
    for i, line in enumerate(lines):
        if line != "{":
            continue
        start = i
        while start > 0 and lines[start - 1].strip() and \
                not lines[start - 1].startswith(("#", "/*", " *", "}")):
            start -= 1
        sig = " ".join(lines[start:i])
        names = re.findall(r"(\w+)\s*\(", sig)
        assert names, f"{path.name}:{i + 1}: a body without a signature"
        end = lines.index("}", i)
        out.append((names[0], start + 1, end - start + 1))
    return out


def all_functions():
    """{name: (file, first line, lines)} over every emulator/*.c."""
    found = {}
    for path in sorted(EMU.glob("*.c")):
        for name, first, n in functions(path):
            assert name not in found, f"{name} defined twice"
            found[name] = (path.name, first, n)
    return found


def test_no_c_inc_parts():
    """No part is #included into another unit: every part is a unit."""
    parts = sorted(p.name for p in EMU.rglob("*.c.inc"))
    assert not parts, f"#included parts instead of units: {parts}"
    for path in sorted(EMU.glob("*.[ch]")):
        inc = re.findall(r'^#include "([^"]+\.c)"', path.read_text(), re.MULTILINE)
        assert not inc, f"{path.name} #includes {inc}"


def test_units_share_one_internal_header():
    """Every unit of the model includes lan7430-int.h and defines no name
    table in a header (one definition, extern declarations)."""
    units = sorted(EMU.glob("lan7430*.c"))
    assert len(units) > 2, units
    for path in units:
        assert '#include "lan7430-int.h"' in path.read_text(), path.name
    for path in sorted(EMU.glob("*.h")):
        text = path.read_text()
        assert not re.search(r"^(static )?const char \*const \w+\[[^]]*\] =",
                             text, re.MULTILINE), f"{path.name} defines a table"


def test_parser_sees_the_functions():
    """The parser finds the model's functions (the size check below rests
    on it), with their lengths."""
    found = all_functions()
    for name in ("l7_rx_dma", "lan7430_mmio_write", "l7_tx_process",
                 "lan7430_realize"):
        assert name in found, name
        assert found[name][2] > 5, (name, found[name])


def test_functions_at_most_150_lines():
    """Every function is at most MAX_LINES long."""
    over = [f"{name} ({file}:{first}) {n} lines"
            for name, (file, first, n) in sorted(all_functions().items())
            if n > MAX_LINES]
    assert not over, over
