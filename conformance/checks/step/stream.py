"""Streaming: memory flat in object size, page cache released, scratch emptied."""

import os

from conformance.checks import check
from conformance.checks.step._common import (
    Input, Match, csv_inputs, data_upload, expect_exit, expect_marker, faults)

MiB = 1 << 20
# Peak RSS allowed for the node's whole process tree in conformance. The
# budget is 32 MiB (`make bench`); this leaves room for a noisy machine.
RSS_CEILING_BYTES = 64 * MiB
# Growth in peak RSS allowed between a 16 MiB and a 256 MiB object.
RSS_GROWTH_BYTES = 12 * MiB


def _copy(ctx, size):
    plane = ctx.step_plane(inputs=[Input("big.bin", generated=size)])
    plane.run(timeout=120)
    expect_exit(ctx, plane, 0, "a large input is copied")
    return plane


@check("stream.memory-ceiling", clauses=["STEP-STREAM-1"], level="MUST",
       title="copying a 256 MiB input keeps peak RSS under 64 MiB",
       fakes="one generated 256 MiB input", expected="exit 0; peak RSS of the process tree <= 64 MiB")
def _(ctx):
    plane = _copy(ctx, 256 * MiB)
    rss = plane.result.maxrss_bytes or 0
    ctx.expect(rss <= RSS_CEILING_BYTES, expected="peak RSS <= %d MiB" % (RSS_CEILING_BYTES // MiB),
               actual="peak RSS %.1f MiB" % (rss / float(MiB)),
               diagnosis="stream in fixed blocks both ways; never read a whole body or build a body in memory")


@check("stream.memory-flat", clauses=["STEP-STREAM-1"], level="MUST",
       title="peak RSS does not grow with object size (16 MiB vs 256 MiB)",
       fakes="two runs: a 16 MiB input, then a 256 MiB input",
       expected="peak RSS grows by less than 12 MiB")
def _(ctx):
    small = _copy(ctx, 16 * MiB).result.maxrss_bytes or 0
    large = _copy(ctx, 256 * MiB).result.maxrss_bytes or 0
    ctx.note("peak RSS: 16 MiB input %.1f MiB; 256 MiB input %.1f MiB" % (small / float(MiB), large / float(MiB)))
    ctx.expect(large - small <= RSS_GROWTH_BYTES,
               expected="growth <= %d MiB" % (RSS_GROWTH_BYTES // MiB),
               actual="%.1f MiB -> %.1f MiB" % (small / float(MiB), large / float(MiB)),
               diagnosis="stream every body in fixed blocks both ways: memory that grows with the object means a whole "
                         "body is read or built somewhere")


@check("stream.cgroup", clauses=["STEP-STREAM-2", "STEP-STREAM-1"], level="SHOULD",
       title="a 192 MiB input passes through a 96 MiB memory cgroup (page cache counted)",
       fakes="the node runs in a memory cgroup limited to 96 MiB; one 192 MiB input",
       expected="exit 0, not OOM-killed; succeeded marker")
def _(ctx):
    ctx.require_cgroup()
    plane = ctx.step_plane(inputs=[Input("big.bin", generated=192 * MiB)])
    plane.start(memory_limit_bytes=96 * MiB)
    plane.wait(timeout=120)
    ctx.expect(not plane.result.oom_killed, expected="not OOM-killed",
               actual="OOM-killed at %s" % plane.result.memory_peak_bytes,
               diagnosis="fsync and posix_fadvise(DONTNEED) as the copy goes: page cache is charged to the cgroup")
    expect_exit(ctx, plane, 0, "the copy completes")
    expect_marker(ctx, plane, "succeeded", 0)


def _scratch_files(plane):
    found = []
    for top, dirs, files in os.walk(plane.scratch):
        found += [os.path.join(top, name) for name in files + dirs]
    return found


def _scratch_check(label, title, arrange, code):
    @check("stream.scratch-%s" % label, clauses=["STEP-STREAM-3"], level="MUST", title=title,
           fakes="TMPDIR is a private directory the harness inspects after exit",
           expected="exit %s; TMPDIR empty afterwards" % code)
    def _(ctx):
        plane = arrange(ctx)
        expect_exit(ctx, plane, code, "as arranged")
        left = _scratch_files(plane)
        ctx.expect(not left, expected="nothing left under TMPDIR",
                   actual="left: %s" % [os.path.relpath(p, plane.scratch) for p in left][:5],
                   diagnosis="remove scratch files on every path, this one (a %s) included: delete each as soon "
                             "as it is used up and the rest in a finally" % (
                                 "stop" if plane.result.signals else
                                 "failure" if plane.result.exit_code else "success"))


def _success(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(2))
    plane.run()
    return plane


def _failure(ctx):
    items = [Input("a.bin", bytes(3 << 20))]
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.reset(after_bytes=1 << 20), data_upload())
    plane.run()
    plane.skip_unless_own_uploads()
    return plane


def _used_scratch(ctx):
    """The scratch directory must actually be used: a node writing elsewhere
    (a hard-coded /tmp) would pass the emptiness checks vacuously."""
    items = [Input("big.bin", generated=32 << 20)]
    plane = ctx.step_plane(inputs=items)
    # Every step downloads its inputs into scratch: a stalled download shows it there.
    plane.store.add_fault(faults.stall(after_bytes=16 << 20), Match(method="GET", key="inputs/*"))
    plane.start()
    plane.wait_event(lambda ev: ev.kind == "fault", 30)
    used = _scratch_files(plane)
    plane.proc.signal(15)
    plane.wait()
    ctx.expect(used, expected="the node's temporary files under TMPDIR while it runs",
               actual="TMPDIR was empty mid-run", diagnosis="honour TMPDIR (tempfile.gettempdir())")
    return plane


_scratch_check("success", "scratch is removed after a success", _success, 0)
_scratch_check("failure", "scratch is removed after a failed upload", _failure, 1)
_scratch_check("used", "scratch lives under TMPDIR and is removed after a stop", _used_scratch, 20)


@check("stream.read-timeout", clauses=["STEP-STREAM-4", "STEP-HTTP-3"], level="SHOULD",
       title="a store silent mid-body ends the run as transient after the read timeout",
       fakes="the store sends 64 KiB of an input, then nothing (connection open)",
       expected="exit 1 within 25 s + 8 s")
def _(ctx):
    items = [Input("slow.bin", bytes(1 << 20))]
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.stall(after_bytes=64 << 10), Match(method="GET", key="inputs/*"))
    plane.run(timeout=60)
    expect_exit(ctx, plane, 1, "silence is transient")
    ctx.expect(plane.result.wall_s <= 33.0, expected="ended within 33 s", actual="%.1f s" % plane.result.wall_s,
               diagnosis="bound each read of a body with the 25 s read timeout, so a silent store ends the run as "
                         "transient")
