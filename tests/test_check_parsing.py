"""Unit tests of check.py's diagnostic parsing and comparison."""
import check

SRC = "/cache/src/linux"


def test_parse_gcc_and_sparse_paths_are_normalised():
    """gcc's and sparse's paths become tree-relative; notes, make's lines
    and files outside the driver are left out."""
    out = "\n".join([
        (f"{SRC}/drivers/net/ethernet/microchip/lan743x_main.c:10:5: "
         "warning: unused variable 'x' [-Wunused-variable]"),
        ("../drivers/net/ethernet/microchip/lan743x_ptp.c:7:1: warning: "
         "symbol 'y' was not declared. Should it be static?"),
        f"{SRC}/include/linux/skbuff.h:3:3: warning: not ours",
        "drivers/net/ethernet/microchip/lan743x_main.c:11:2: note: ignored",
        "make[2]: *** [Makefile:1] Error 1",
    ])
    d = check.parse_diags(out, SRC)
    assert d == [
        ("drivers/net/ethernet/microchip/lan743x_main.c", 10,
         "warning: unused variable 'x' [-Wunused-variable]"),
        ("drivers/net/ethernet/microchip/lan743x_ptp.c", 7,
         "warning: symbol 'y' was not declared. Should it be static?"),
    ]


def test_new_diags_ignores_moved_lines_but_counts_duplicates():
    """A diagnostic that only moved is not new; a second copy is."""
    f = "drivers/net/ethernet/microchip/lan743x_main.c"
    before = [(f, 10, "warning: a"), (f, 20, "warning: b")]
    after = [(f, 14, "warning: a"), (f, 24, "warning: b"),
             (f, 30, "warning: b"), (f, 40, "warning: c")]
    assert check.new_diags(before, after) == [
        (f, 30, "warning: b"), (f, 40, "warning: c")]
    # the other way round, nothing is new
    assert not check.new_diags(before=after, after=before)


def test_kernel_doc_lines_parse_without_column():
    """kernel-doc's file:line: lines (no column) are parsed too."""
    out = ("drivers/net/ethernet/microchip/lan743x_main.c:55: warning: "
           "Function parameter or struct member 'x' not described in 'f'")
    d = check.parse_diags(out, SRC, only=None)
    assert d[0][1] == 55 and d[0][2].startswith("warning: Function")
