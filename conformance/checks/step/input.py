"""Inputs: pins verified while streaming, refusals before any GET, order."""

from conformance.checks import check
from conformance.servers import socket_buffer_allowance
from conformance.checks.step._common import (
    OMIT, Input, Match, RESULT_NAME, csv_inputs, expect_exit, expect_listed, expect_marker, faults,
    hold_answer)


@check("input.hash-mismatch", clauses=["STEP-INPUT-2", "STEP-MARKER-5", "STEP-RESULT-4"], level="MUST",
       title="an input whose bytes differ from its sha256 pin fails the run; earlier work is kept",
       fakes="input 2 of 3 is served with bytes whose sha256 differs from its pin (size right)",
       expected="exit 10; no output for input 2; failed marker lists input 1's output and result.json "
                "whose facts name input 1")
def _(ctx):
    items = csv_inputs(3)
    items[1].sha256_pin = "0" * 64
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 10, "a wrong pin is permanent")
    ctx.expect(not plane.posts("outputs/" + items[1].relpath), expected="no upload of the unverified input",
               actual="it was POSTed")
    ctx.expect(not plane.gets(items[2]), expected="input 3 never fetched", actual="it was fetched")
    expect_marker(ctx, plane, "failed", 10)
    expect_listed(ctx, plane, ["outputs/" + items[0].relpath, RESULT_NAME],
                  "what was written before the failure, and the failure-path report")
    facts = (plane.report or {}).get("facts")
    ctx.expect(facts == [{"key": "input", "value": items[0].relpath}],
               expected="result.json facts name input 1 only", actual="facts %r" % (facts,))


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
    sent = max([ex.resp_bytes for ex in plane.gets(items[0])] or [0])
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
    ctx.expect(not plane.gets(items[0]), expected="no GET of the unpinned input",
               actual="%d GET(s)" % len(plane.gets(items[0])))
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
    ctx.expect(not plane.gets(items[0]), expected="no GET", actual="%d GET(s)" % len(plane.gets(items[0])))


@check("input.uppercase-pin", clauses=["STEP-INPUT-1"], level="MUST",
       title="an uppercase hex sha256 pin matches (Decision D3)",
       fakes="one input pinned with its digest in uppercase",
       expected="exit 0")
def _(ctx):
    items = [Input("upper.csv", b"a,b\n")]
    plane = ctx.step_plane(inputs=items)
    items[0].sha256_pin = items[0].true_sha256.upper()
    plane.write_envelope()
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
        ctx.expect(not plane.gets(items[0]), expected="no GET", actual="%d GET(s)" % len(plane.gets(items[0])))


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
    ctx.expect(not plane.posts("outputs/short.bin"), expected="no upload of a truncated input",
               actual="it was uploaded")
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
    ctx.expect(not plane.posts("outputs/short.bin"), expected="no upload of a truncated input",
               actual="it was uploaded")


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
       fakes="five inputs", expected="GETs in list order, each followed by its POST; never two requests at once")
def _(ctx):
    items = csv_inputs(5)
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run")
    ctx.expect(plane.store.max_concurrency == 1, expected="at most one request in flight",
               actual="%d at once" % plane.store.max_concurrency)
    order = [(ex.method, ex.key) for ex in plane.store.transcript if ex.key and
             (ex.key.startswith("inputs/") or "/outputs/" in ex.key)]
    want = []
    for item in items:
        want += [("GET", item.key), ("POST", "staging/exec-41/attempt-2/outputs/" + item.relpath)]
    ctx.expect(order == want, expected="GET then POST per input, in list order",
               actual="; ".join("%s %s" % pair for pair in order))


@check("input.names", clauses=["STEP-INPUT-5"], level="MUST",
       title="an input's name is relpath, else name, else input-<index>",
       fakes="three inputs: relpath only, name only, neither",
       expected="outputs/r.csv, outputs/n.csv, outputs/input-2; facts with those names")
def _(ctx):
    items = [Input("r.csv", b"1\n"), Input("", b"2\n", name="n.csv"), Input("", b"3\n")]
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "every input has a usable name")
    got = [r for r in plane.marker_relpaths() if r != RESULT_NAME]
    want = ["outputs/r.csv", "outputs/n.csv", "outputs/input-2"]
    ctx.expect(got == want, expected="relpaths %s" % want, actual="relpaths %s" % got)
    values = [f.get("value") for f in (plane.report or {}).get("facts", [])]
    ctx.expect(values == ["r.csv", "n.csv", "input-2"], expected="fact values r.csv, n.csv, input-2",
               actual="%s" % values)


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
       fakes="expires_at 3 s ahead; after input 1 the agent rotates to an envelope with one input fewer",
       expected="exit 1; failed marker listing input 1's output; no traceback")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items, expires_in_s=3)
    committed = hold_answer(plane, "*outputs/" + items[0].relpath)
    plane.start()
    if plane.store.wait_for(committed, 30):
        plane.inputs.pop()
        plane.rotate(expire_old=False, expires_in_s=3)
    plane.wait()
    expect_exit(ctx, plane, 1, "a changed list is transient")
    expect_marker(ctx, plane, "failed", 1)
    expect_listed(ctx, plane, ["outputs/" + items[0].relpath], "copied before the change")
