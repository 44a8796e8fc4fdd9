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


def test_new_diags_ignores_line_numbers_in_messages():
    """coccinelle's returnvar names a line in its message: the finding
    moved by a later patch is not new (seen on net-next-3, whose patches
    moved the code returnvar reports), a different message is."""
    f = "drivers/net/ethernet/microchip/lan743x_main.c"
    msg = 'returnvar.cocci: Unneeded variable: "retval". Return "X" on line {}'
    assert not check.new_diags([(f, 2116, msg.format(2217))],
                               [(f, 2126, msg.format(2227))])
    assert check.new_diags([(f, 2116, msg.format(2217))],
                           [(f, 2116, msg.format(2217).replace("X", "Y"))])


def test_spatch_and_kernel_doc_73_reports_parse():
    """spatch's "file:line:col-col: message" and 7.3's kernel-doc
    "Warning: file:line message" are read (before, neither was)."""
    src = "/src"
    out = ("drivers/net/ethernet/microchip/lan743x_main.c:25:34-35: "
           "WARNING: Use ARRAY_SIZE\n")
    assert check.parse_cocci(out, src) == [
        ("drivers/net/ethernet/microchip/lan743x_main.c", 25,
         "WARNING: Use ARRAY_SIZE")]
    out = ("Warning: drivers/net/ethernet/microchip/lan743x_main.c:24 "
           "function parameter 'x' not described in 'f'\n")
    f = "drivers/net/ethernet/microchip/lan743x_main.c"
    assert check.parse_kdoc(out, src, f) == [
        (f, 24, "warning: function parameter 'x' not described in 'f'")]
    # a line number alone is a finding in the file kernel-doc was given
    assert check.parse_kdoc("Warning: 174\n", src, f) == [
        (f, 174, "warning: ")]


def test_kernel_doc_lines_parse_without_column():
    """kernel-doc's file:line: lines (no column) are parsed too."""
    out = ("drivers/net/ethernet/microchip/lan743x_main.c:55: warning: "
           "Function parameter or struct member 'x' not described in 'f'")
    d = check.parse_diags(out, SRC, only=None)
    assert d[0][1] == 55 and d[0][2].startswith("warning: Function")


def test_tool_failures_are_named():
    """A tool that gave up is a diagnostic of its own: kernel-doc's
    "Error:" line (it exits 0 when it cannot read a file), spatch's
    timeout and exception lines and its non-zero exit status. A clean
    run, and kernel-doc's warnings (a parameter named timeout included),
    are none."""
    f = "drivers/net/ethernet/microchip/lan743x_main.c"
    # kernel-doc 7.3 on a file it cannot read: exit status 0
    assert check.tool_failures(
        "kernel-doc", f, 0, "Error: Cannot find file /nonexistent.c\n") == [
        (f, 0, "kernel-doc failed: Error: Cannot find file /nonexistent.c")]
    assert check.tool_failures("kernel-doc", f, 0, (
        "Traceback (most recent call last):\n  File \"x\", line 1\n")) == [
        (f, 0, "kernel-doc failed: Traceback (most recent call last):")]
    assert not check.tool_failures("kernel-doc", f, 0, (
        f"Warning: {f}:4 function parameter 'timeout' not described in "
        "'foo'\n"))
    # spatch's own words for a timeout (strings of the spatch binary)
    assert check.tool_failures(
        "spatch", f, 0, f"timeout (we abort): {f}\n") == [
        (f, 0, f"spatch failed: timeout (we abort): {f}")]
    assert check.tool_failures("spatch", f, 1, "parse error\n") == [
        (f, 0, "spatch failed: exit status 1: parse error")]
    assert not check.tool_failures("spatch", f, 0, "")
    assert not check.tool_failures(
        "spatch", f, 0, f"{f}:12:1-5: WARNING: opportunity for kzalloc\n")
