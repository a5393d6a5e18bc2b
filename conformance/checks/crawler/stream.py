"""Streaming and scratch: the source never held in memory, spools private and nameless
(CRAWLER-STREAM-*).

What these checks pin: the node's peak memory does not grow with the source's
size (a source twelve times MAX_CRAWLER_RESULT_BYTES against one of that size,
both succeeding), and while the child runs the node's scratch files are
unlinked regular files of mode 0600 under TMPDIR, the source spool among them,
with nothing left in TMPDIR's listing.
"""

import os
import stat

from conformance.checks import check
from conformance.checks.crawler._common import docs, expect_success, wait_for
from conformance.planes import crawler_child
from conformance.planes.crawler import GeneratedJsonl
from conformance.timeouts import LONG_TIMEOUT_S

# stream.memory-flat: the small source is one result bound, the large one
# twelve. GeneratedJsonl pads each line with whitespace, so both normalise to
# small results and only the source's handling can change the node's memory.
# The harness's normaliser is pinned: wait4's peak counts the child too, and
# what a node's own normaliser holds is its example work (CRAWLER-NORM-3), not
# the platform's streaming. Moving 96 MiB through TLS and the child takes
# 2 to 15 s: the one long run this clause needs.
SMALL_SOURCE_BYTES = docs.MAX_CRAWLER_RESULT_BYTES
LARGE_SOURCE_BYTES = 12 * docs.MAX_CRAWLER_RESULT_BYTES
# Peak RSS (node and child, as wait4 reports it) may grow this much between
# the two runs: allocator noise and larger buffers, not a copy of the source.
MAX_RSS_GROWTH_BYTES = 16 * 1024 * 1024

# stream.private-spool: a source size no other scratch file would have.
SPOOL_SOURCE_ROWS = 2345
# How long the scripted child waits before answering: the node's scratch
# files are inspected meanwhile.
CHILD_PAUSE_S = 1.0
# Mode of a private spool (CRAWLER-STREAM-1).
PRIVATE_MODE = 0o600
MiB = 1024.0 * 1024.0


@check("stream.memory-flat", clauses=["CRAWLER-STREAM-1", "CRAWLER-STREAM-2"], level="MUST",
       title="the node's peak memory does not grow with the source's size",
       fakes="two runs: a JSON-lines source of 8 MiB (MAX_CRAWLER_RESULT_BYTES), then one of 96 MiB (12x); "
             "the harness's streaming normaliser pinned; both normalise to small results",
       expected="both succeed; peak RSS of the second at most 16 MiB above the first")
def _(ctx):
    limits = docs.default_limits()
    limits["max_source_bytes"] = 2 * LARGE_SOURCE_BYTES
    peaks = []
    for size in (SMALL_SOURCE_BYTES, LARGE_SOURCE_BYTES):
        plane = ctx.plane(source=GeneratedJsonl(size), limits=limits, child=crawler_child.reference_behaviour())
        plane.run(timeout=LONG_TIMEOUT_S)
        expect_success(ctx, plane)
        peaks.append(plane.result.maxrss_bytes)
        ctx.note("source %d MiB: peak RSS %.1f MiB, wall %.1f s" % (size >> 20, plane.result.maxrss_bytes / MiB,
                                                                  plane.result.wall_s))
    ctx.expect(all(peaks), expected="peak RSS measured for both runs", actual="%s (harness)" % peaks,
               diagnosis="the harness could not measure the node's peak memory here, which is not the node's fault: "
                         "rerun where wait4 reports it")
    growth = peaks[1] - peaks[0]
    ctx.note("peak RSS growth for 12x the source: %.1f MiB" % (growth / MiB))
    ctx.expect(growth <= MAX_RSS_GROWTH_BYTES,
               expected="peak RSS with the %d MiB source at most %d MiB above the %d MiB source's" % (
                   LARGE_SOURCE_BYTES >> 20, MAX_RSS_GROWTH_BYTES >> 20, SMALL_SOURCE_BYTES >> 20),
               actual="%.1f MiB then %.1f MiB (+%.1f MiB)" % (peaks[0] / MiB, peaks[1] / MiB, growth / MiB),
               diagnosis="the source (or the result) is held in memory: stream it to an unlinked spool file "
                         "and feed the child from there in blocks")


def _open_files(pid):
    """[(fd, link text, os.stat of the open file)] for every regular file the process has open."""
    base = "/proc/%d/fd" % pid
    found = []
    for name in os.listdir(base):
        path = os.path.join(base, name)
        try:
            link, info = os.readlink(path), os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            found.append((int(name), link, info))
    return found


@check("stream.private-spool", clauses=["CRAWLER-STREAM-1", "CRAWLER-STREAM-3"], level="MUST",
       title="while the child runs, the node's spools are unlinked 0600 files under TMPDIR",
       fakes="a CSV source of a size nothing else has; the scripted child waits 1 s before answering, while "
             "the harness reads the node's /proc/<pid>/fd",
       expected="an open regular file under TMPDIR with the source's size; every open file under TMPDIR "
                "unlinked (no link) and mode 0600; TMPDIR's listing empty; the run then succeeds")
def _(ctx):
    source = b"row,value\n" + b"".join(b"%d,v%d\n" % (i, i * 7) for i in range(SPOOL_SOURCE_ROWS))
    plane = ctx.plane(source=source, child=dict(crawler_child.reference_behaviour(), sleep_before=CHILD_PAUSE_S))
    plane.start()
    wait_for(ctx, plane, plane.child.started(), "the running child")
    try:
        files = _open_files(plane.proc.host_pid)
    except PermissionError:
        ctx.skip("reading a non-dumpable node's /proc/<pid>/fd needs CAP_SYS_PTRACE (run as root)")
    listing = os.listdir(plane.scratch)
    plane.wait()
    ctx.note("open regular files: %s" % ["%d -> %s (%d bytes, mode %o, %d links)" % (
        fd, link, info.st_size, stat.S_IMODE(info.st_mode), info.st_nlink) for fd, link, info in files])
    scratch = [(fd, link, info) for fd, link, info in files if link.startswith(plane.scratch + os.sep)]
    ctx.expect(any(info.st_size == len(source) for _fd, _link, info in scratch),
               expected="a file under TMPDIR (%s) holding the %d-byte source" % (plane.scratch, len(source)),
               actual="open regular files: %s" % ([link for _fd, link, _info in files] or "none"),
               diagnosis="stream the source to a spool file under TMPDIR (CRAWLER-STREAM-3), not to memory")
    for fd, link, info in scratch:
        ctx.expect(info.st_nlink == 0, expected="fd %d unlinked from TMPDIR (no directory entry)" % fd,
                   actual="%s has %d link(s)" % (link, info.st_nlink),
                   diagnosis="remove the spool's name at once: it must not outlive a killed node")
        ctx.expect(stat.S_IMODE(info.st_mode) == PRIVATE_MODE, expected="fd %d mode 0600" % fd,
                   actual="%s mode %o" % (link, stat.S_IMODE(info.st_mode)),
                   diagnosis="create the spool file with mode 0600 (tempfile.mkstemp does), so no other user can read "
                             "the source")
    ctx.expect(listing == [], expected="TMPDIR's listing empty while the child runs",
               actual="entries %s" % listing,
               diagnosis="leave nothing listed under TMPDIR while the child runs: unlink each spool file right after "
                         "opening it")
    expect_success(ctx, plane)
