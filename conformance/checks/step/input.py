"""Inputs: pins verified while streaming, refusals before any GET, order."""

from conformance.checks import check
from conformance.servers import socket_buffer_allowance
from conformance.checks.step._common import (
    OMIT, Input, Match, RESULT_NAME, csv_inputs, expect_exit, expect_listed, expect_marker, expect_nothing_derived,
    faults, hold_input)


@check("input.hash-mismatch", clauses=["STEP-INPUT-2", "STEP-MARKER-5", "STEP-RESULT-4"], level="MUST",
       title="an input whose bytes differ from its sha256 pin fails the run; earlier work is kept",
       fakes="input 2 of 3 is served with bytes whose sha256 differs from its pin (size right)",
       expected="exit 10; no upload once input 2 was requested, input 3 never fetched; a failed marker "
                "listing result.json (and, by the invariants, everything stored before)")
def _(ctx):
    items = csv_inputs(3)
    items[1].sha256_pin = "0" * 64
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 10, "a wrong pin is permanent")
    expect_nothing_derived(ctx, plane, items[1], "its bytes did not match the pin")
    ctx.expect(not plane.job.gets(items[2]), expected="input 3 never fetched", actual="it was fetched",
               diagnosis="a failed input ends the run: after a pin mismatch, fetch no further input and go to the "
                         "failure path")
    expect_marker(ctx, plane, "failed", 10)
    expect_listed(ctx, plane, [RESULT_NAME], "the failure-path report")


@check("input.oversize-early", clauses=["STEP-INPUT-2"], level="MUST",
       title="a body longer than its size pin is refused as soon as it passes the pin",
       fakes="size pin 1 MiB; the store serves far more than the pin plus every socket buffer",
       expected="exit 10; the node hung up before the end (the store could send at most the pin plus what "
                "the kernel's socket buffers absorb)")
def _(ctx):
    allowance = socket_buffer_allowance()
    pin = 1 << 20
    items = [Input("big.bin", generated=max(64 << 20, 2 * (pin + allowance)), size=pin)]
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 10, "more bytes than pinned is permanent")
    sent = max([ex.resp_bytes for ex in plane.job.gets(items[0])] or [0])
    ctx.expect(sent <= pin + allowance,
               expected="at most %.0f of %.0f MiB sent before the node hung up (the pin, one chunk and the "
                        "socket buffers)" % ((pin + allowance) / 1048576.0, items[0].generated / 1048576.0),
               actual="%.1f MiB sent" % (sent / 1048576.0),
               diagnosis="compare the running size with the pin on every chunk, not at the end")


@check("input.missing-pin", clauses=["STEP-INPUT-1"], level="MUST",
       title="an input without a sha256 pin is refused before it is fetched",
       fakes="one input with no sha256 field",
       expected="exit 10; no GET of it")
def _(ctx):
    items = [Input("nopin.csv", b"1\n", sha256=OMIT)]
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 10, "an unpinned input is permanent")
    ctx.expect(not plane.job.gets(items[0]), expected="no GET of the unpinned input",
               actual="%d GET(s)" % len(plane.job.gets(items[0])),
               diagnosis="check every input's pins before its GET: an input without a sha256 pin is refused without "
                         "being fetched")
    expect_marker(ctx, plane, "failed", 10)


@check("input.bad-pin-format", clauses=["STEP-INPUT-1"], level="MUST",
       title="a sha256 pin that is not 64 hex digits is refused before any GET",
       fakes="one input pinned 'xyz'",
       expected="exit 10; no GET of it")
def _(ctx):
    items = [Input("badpin.csv", b"1\n", sha256="xyz")]
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 10, "a malformed pin is permanent")
    ctx.expect(not plane.job.gets(items[0]), expected="no GET", actual="%d GET(s)" % len(plane.job.gets(items[0])),
               diagnosis="check that the sha256 pin is 64 hex digits before the GET: a malformed pin is refused "
                         "without fetching")


@check("input.uppercase-pin", clauses=["STEP-INPUT-1"], level="MUST",
       title="an uppercase hex sha256 pin matches (Decision D3)",
       fakes="one input pinned with its digest in uppercase",
       expected="exit 0")
def _(ctx):
    items = [Input("upper.csv", b"a,b\n")]
    plane = ctx.step_plane(inputs=items)
    items[0].sha256_pin = items[0].true_sha256.upper()
    plane.agent.write()
    plane.run()
    expect_exit(ctx, plane, 0, "hex is case-insensitive")


def _size_pin_check(label, value):
    @check("input.size-pin-%s" % label, clauses=["STEP-INPUT-4"], level="MUST",
           title="a size pin of %r is refused before any GET (Decision D4)" % (value,),
           fakes="one input whose size pin is %r" % (value,), expected="exit 10; no GET of it")
    def _(ctx):
        items = [Input("sized.csv", b"1,2\n", size=value)]
        plane = ctx.step_plane(inputs=items)
        plane.run()
        expect_exit(ctx, plane, 10, "a size pin that is not an int >= 0 is permanent")
        ctx.expect(not plane.job.gets(items[0]), expected="no GET", actual="%d GET(s)" % len(plane.job.gets(items[0])),
                   diagnosis="check the size pin before the GET: anything but an integer of 0 or more (a string, a "
                             "boolean, a negative number) is refused without fetching")


for _label, _value in [("string", "4"), ("bool", True), ("negative", -1)]:
    _size_pin_check(_label, _value)


@check("input.short-body", clauses=["STEP-INPUT-2"], level="MUST",
       title="a body that ends short of its Content-Length fails on the pins",
       fakes="the store closes the input GET cleanly after 1000 of 4096 bytes",
       expected="exit 10 (the pins catch it; the transport may not)")
def _(ctx):
    items = [Input("short.bin", bytes(4096))]
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.truncate(after_bytes=1000), Match(method="GET", key="inputs/*"))
    plane.run()
    expect_exit(ctx, plane, (1, 10), "a truncated input is never accepted")
    expect_nothing_derived(ctx, plane, items[0], "it was truncated")
    expect_marker(ctx, plane, "failed")


@check("input.short-body-no-size", clauses=["STEP-INPUT-2"], level="MUST",
       title="without a size pin, a truncated body still fails on the hash",
       fakes="no size pin; the store closes the input GET after 1000 of 4096 bytes",
       expected="exit 1 or 10; nothing uploaded for it")
def _(ctx):
    items = [Input("short.bin", bytes(4096), size=OMIT)]
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.truncate(after_bytes=1000), Match(method="GET", key="inputs/*"))
    plane.run()
    expect_exit(ctx, plane, (1, 10), "a truncated input is never accepted")
    expect_nothing_derived(ctx, plane, items[0], "it was truncated")


@check("input.no-source", clauses=["STEP-INPUT-3"], level="MUST",
       title="an input with neither get_url nor local_path is permanent",
       fakes="one input entry with no source", expected="exit 10; failed marker")
def _(ctx):
    items = [Input("nowhere.csv", b"1\n", source="none")]
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 10, "nothing to read is permanent")
    expect_marker(ctx, plane, "failed", 10)


@check("input.one-at-a-time", clauses=["STEP-INPUT-3"], level="MUST",
       title="inputs are fetched in list order, one request at a time",
       fakes="five inputs", expected="each input fetched once, in list order; never two requests at once")
def _(ctx):
    items = csv_inputs(5)
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run")
    ctx.expect(plane.store.max_concurrency == 1, expected="at most one request in flight",
               actual="%d at once" % plane.store.max_concurrency,
               diagnosis="fetch one input at a time: begin the next request only after the previous one's answer has "
                         "been read to its end")
    order = [ex.key for ex in plane.job.input_gets()]
    want = [item.key for item in items]
    ctx.expect(order == want, expected="GETs %s" % want, actual="GETs %s" % order,
               diagnosis="fetch the inputs in the order the manifest lists them" if sorted(order) == sorted(want)
               else "fetch each input once on a healthy run (no repeated GET)" if len(order) > len(want)
               else "fetch every input the manifest lists")


@check("input.tls", clauses=["STEP-INPUT-3"], level="MUST",
       title="inputs and uploads over HTTPS, trusting SSL_CERT_FILE",
       fakes="the store speaks HTTPS with the harness's test CA",
       expected="exit 0; outputs stored")
def _(ctx):
    items = csv_inputs(2)
    plane = ctx.step_plane(inputs=items, tls=True)
    plane.run()
    expect_exit(ctx, plane, 0, "TLS with the CA from SSL_CERT_FILE")
    expect_marker(ctx, plane, "succeeded", 0)


@check("input.list-shrinks", clauses=["STEP-INPUT-6"], level="MUST",
       title="an envelope whose inputs list changes mid-run fails the run cleanly as transient",
       fakes="expires_at 3 s ahead; once input 1 is read the agent rotates to an envelope with one input fewer",
       expected="exit 1; a failed marker (listing, by the invariants, whatever was stored); no traceback")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items, expires_in_s=3)
    held = hold_input(plane, items[0], phase="response")
    plane.start()
    if plane.store.wait_for(held, 30):
        plane.job.inputs.pop()
        plane.agent.rotate(expire_old=False, expires_in_s=3)
    plane.wait()
    expect_exit(ctx, plane, 1, "a changed list is transient")
    expect_marker(ctx, plane, "failed", 1)
