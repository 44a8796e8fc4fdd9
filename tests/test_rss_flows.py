"""Host-side checks of lab/guest/rss.py, the RSS check of the guest's e2e
(seconds, no VM):

- its Toeplitz hash gives the values Microsoft publishes for its
  verification key (IPv4 only and IPv4 with TCP ports);
- the table is read from `ethtool -x` output, and a table whose size is
  not a power of two is an error, not a guess;
- verify() fails when the frames land on one queue (the RSS that does not
  spread, what the check exists for), when a queue the hash picks got
  fewer frames than its flows sent, and when a queue it does not pick got
  more than stray frames; it passes on the frames the hash predicts.
"""
import ipaddress
import struct
import sys

import pytest
from conftest import LAB

sys.path.insert(0, str(LAB / "guest"))
import rss


def table_text(entries, per_line=8):
    """`ethtool -x` output of the indirection table ENTRIES."""
    lines = ["RX flow hash indirection table for enp0s9 with 4 RX ring(s):"]
    for r in range(0, len(entries), per_line):
        lines.append(f"{r:5d}: " + " ".join(f"{e:5d}"
                                            for e in entries[r:r + per_line]))
    lines += ["RSS hash key:", "6d:5a:56:da", "RSS hash function:",
              "    toeplitz: on"]
    return "\n".join(lines)


def test_toeplitz_published_vectors():
    """Microsoft's verification vectors, IPv4 with and without ports."""
    src = ipaddress.IPv4Address("66.9.149.187").packed
    dst = ipaddress.IPv4Address("161.142.100.80").packed
    assert rss.toeplitz(rss.KEY, src + dst) == 0x323E8FC2
    assert rss.toeplitz(rss.KEY, src + dst +
                        struct.pack(">HH", 2794, 1766)) == 0x51CCC178
    src = ipaddress.IPv4Address("199.92.111.2").packed
    dst = ipaddress.IPv4Address("65.69.140.83").packed
    assert rss.toeplitz(rss.KEY, src + dst) == 0xD718262A
    assert rss.toeplitz(rss.KEY, src + dst +
                        struct.pack(">HH", 14230, 4739)) == 0xC626B0EA


def test_expect_reads_the_table():
    """The prediction follows the table; a table of 100 entries is an
    error."""
    spread = table_text([i % 4 for i in range(128)])
    e = rss.expect("10.74.30.2", "10.74.30.1", spread)
    assert sum(e) == rss.FLOWS * rss.PER
    assert sum(1 for x in e if x) >= 2
    # a table that sends everything to queue 2: all frames predicted there
    assert rss.expect("10.74.30.2", "10.74.30.1",
                      table_text([2] * 128)) == [0, 0, rss.FLOWS * rss.PER, 0]
    with pytest.raises(SystemExit, match="not a power of two"):
        rss.expect("10.74.30.2", "10.74.30.1", table_text([0] * 100))


def test_verify_fails_what_it_guards(capsys):
    """verify() passes the predicted spread and fails the three wrong ones."""
    e = rss.expect("10.74.30.2", "10.74.30.1",
                   table_text([i % 4 for i in range(128)]))
    before = [1000, 0, 0, 0]
    fmt = " ".join

    def run(after):
        return rss.verify(fmt(map(str, before)), fmt(map(str, after)),
                          fmt(map(str, e)))

    # the frames where the hash puts them (and 3 stray frames on queue 0)
    assert run([b + x + (3 if q == 0 else 0)
                for q, (b, x) in enumerate(zip(before, e))])
    # all on one queue: the RSS that does not spread
    assert not run([before[0] + sum(e), 0, 0, 0])
    assert "differ" in capsys.readouterr().out
    # one queue short of its flows' frames
    short = [b + x for b, x in zip(before, e)]
    short[1] -= 1
    assert not run(short)
    # predicted on one queue only: no spreading shown, a failure
    one = [0, rss.FLOWS * rss.PER, 0, 0]
    assert not rss.verify("0 0 0 0", fmt(map(str, one)), fmt(map(str, one)))
    assert "one queue only" in capsys.readouterr().out
