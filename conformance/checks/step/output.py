"""Outputs: naming, the presigned POST wire format, refusals and ambiguity."""

from conformance.checks import check
from conformance.checks.step._common import (
    Input, Match, KEY_PREFIX, RESULT_NAME, csv_inputs, expect_exit, expect_listed, expect_marker,
    faults)


@check("output.copy", clauses=["STEP-OUTPUT-1", "STEP-OUTPUT-8", "STEP-MARKER-2"], level="MUST",
       title="three inputs are copied to outputs/<name> and published on port output",
       fakes="a healthy store; three small CSV inputs",
       expected="exit 0; outputs/<name> holds each input's bytes; produced_ports output/report")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run succeeds")
    marker = expect_marker(ctx, plane, "succeeded", 0)
    for item in items:
        held = plane.hash_stored("outputs/" + item.relpath)
        ctx.expect(held == (item.true_sha256, item.true_size),
                   expected="outputs/%s holds the input's bytes" % item.relpath,
                   actual="stored: %s" % (held,))
    ports = marker.get("produced_ports")
    want = {"output": ["outputs/" + i.relpath for i in items], "report": [RESULT_NAME]}
    ctx.expect(ports == want, expected="produced_ports %s" % want, actual="produced_ports %s" % ports,
               diagnosis="copies go on port output; result.json only on port report")


@check("output.name-clash", clauses=["STEP-OUTPUT-1"], level="MUST",
       title="clashing names get the port directory, then a counter in the last component",
       fakes="data.csv on ports a, b and b again; file on port my.port twice",
       expected="outputs/data.csv, outputs/b/data.csv, outputs/b/data-2.csv, outputs/file, "
                "outputs/my.port/file, outputs/my.port/file-2")
def _(ctx):
    items = [Input("data.csv", b"a\n", port="a"), Input("data.csv", b"b\n", port="b"),
             Input("data.csv", b"b2\n", port="b"), Input("file", b"f1\n", port="my.port"),
             Input("file", b"f2\n", port="my.port"), Input("file", b"f3\n", port="my.port")]
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "clashing names are disambiguated, not refused")
    want = ["outputs/data.csv", "outputs/b/data.csv", "outputs/b/data-2.csv",
            "outputs/file", "outputs/my.port/file", "outputs/my.port/file-2"]
    got = [r for r in plane.marker_relpaths() if r != RESULT_NAME]
    ctx.expect(got == want, expected="relpaths %s" % want, actual="relpaths %s" % got,
               diagnosis="the counter goes before the last dot of the final component only (D5)")
    for item, relpath in zip(items, want):
        held = plane.hash_stored(relpath)
        ctx.expect(held == (item.true_sha256, item.true_size),
                   expected="%s holds its own input's bytes" % relpath, actual="stored %s" % (held,))


def _bad_relpath_check(label, relpath):
    @check("output.bad-relpath.%s" % label, clauses=["STEP-OUTPUT-2"], level="MUST",
           title="input relpath %r is refused before any upload of it" % relpath,
           fakes="one good input, then one whose relpath is %r" % relpath,
           expected="exit 10; no POST of the bad name; failed marker")
    def _(ctx):
        items = [Input("good.csv", b"1\n"), Input(relpath, b"2\n")]
        plane = ctx.step_plane(inputs=items)
        plane.run()
        expect_exit(ctx, plane, 10, "a non-canonical relpath is permanent")
        bad = [ex.key for ex in plane.posts() if ex.key and "good.csv" not in ex.key and
               not ex.key.endswith(("result.json", "__lspo_complete.json"))]
        ctx.expect(not bad, expected="no POST for the bad relpath", actual="POSTed keys %s" % bad)
        expect_marker(ctx, plane, "failed", 10)
        expect_listed(ctx, plane, ["outputs/good.csv"], "work done before the refusal still counts")


for _label, _relpath in [("dotdot", "../x.csv"), ("absolute", "/x.csv"), ("empty-component", "a//b.csv"),
                         ("backslash", "a\\b.csv"), ("control", "a\x01b.csv")]:
    _bad_relpath_check(_label, _relpath)


@check("output.multipart", clauses=["STEP-OUTPUT-3"], level="MUST",
       title="the upload is one multipart POST: policy fields, key, file last, exact Content-Length",
       fakes="a store that enforces the POST policy and records each upload's form",
       expected="every POST has Content-Length equal to its body, no chunking, fields in order, file last")
def _(ctx):
    items = csv_inputs(2)
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "the store accepts a well-formed upload")
    posts = plane.posts()
    ctx.expect(len(posts) >= 3, expected="at least three POSTs", actual="%d" % len(posts))
    fields = list(plane.store_post_fields())
    for ex in posts:
        headers = dict((k.lower(), v) for k, v in ex.headers)
        ctx.expect("chunked" not in headers.get("transfer-encoding", "").lower(),
                   expected="no Transfer-Encoding: chunked", actual="%s for %s" % (
                       headers.get("transfer-encoding"), ex.key))
        ctx.expect(headers.get("content-length", "").isdigit() and int(headers["content-length"]) == ex.req_bytes,
                   expected="Content-Length equal to the body sent",
                   actual="Content-Length %r, body %d bytes (%s)" % (headers.get("content-length"),
                                                                     ex.req_bytes, ex.key))
        ctx.expect(headers.get("content-type", "").startswith("multipart/form-data; boundary="),
                   expected="Content-Type multipart/form-data; boundary=...",
                   actual=headers.get("content-type"))
        order = ex.notes.get("form_fields")
        want = list(fields) + (["key"] if "key" not in fields else [])
        ctx.expect(order == want, expected="form fields in order %s, then file" % want,
                   actual="fields %s" % order,
                   diagnosis="policy fields verbatim and in order, then key; S3 reads them before the file")
        ctx.expect(ex.notes.get("file_name") is not None and not ex.notes.get("fields_after_file"),
                   expected="a file part, last", actual="file part %r; after it %r" % (
                       ex.notes.get("file_name"), ex.notes.get("fields_after_file")))
        ctx.expect(ex.key and ex.key.startswith(KEY_PREFIX), expected="key under the staging prefix",
                   actual="key %r" % ex.key)


@check("output.redirect-upload", clauses=["STEP-OUTPUT-5"], level="MUST",
       title="a 302 answering an upload is not followed",
       fakes="the first output POST is answered 302 to another server on the store",
       expected="exit 1; no request to the redirect target")
def _(ctx):
    items = csv_inputs(1)
    plane = ctx.step_plane(inputs=items)
    target = plane.store.origin + "/redirected/elsewhere"
    plane.store.add_fault(faults.redirect(target, code=302), Match(method="POST", key="*outputs/*", first=1))
    plane.run()
    expect_exit(ctx, plane, 1, "a redirect is transient and never followed")
    followed = [ex for ex in plane.store.transcript if ex.path.startswith("/redirected")]
    ctx.expect(not followed, expected="no request to the Location",
               actual="%d request(s) followed the redirect" % len(followed),
               diagnosis="urllib turns a redirected POST into a bodiless GET that 'succeeds'")


@check("output.redirect-get", clauses=["STEP-OUTPUT-5"], level="MUST",
       title="a 307 answering an input GET is not followed",
       fakes="the input GET is answered 307 to another path on the store",
       expected="exit 1; no request to the redirect target")
def _(ctx):
    items = csv_inputs(1)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.redirect(plane.store.origin + "/redirected/x", code=307),
                          Match(method="GET", key="inputs/*", first=1))
    plane.run()
    expect_exit(ctx, plane, 1, "a redirect is transient and never followed")
    followed = [ex for ex in plane.store.transcript if ex.path.startswith("/redirected")]
    ctx.expect(not followed, expected="no request to the Location",
               actual="%d request(s) followed the redirect" % len(followed))


@check("output.reset-mid-upload", clauses=["STEP-OUTPUT-6", "STEP-HTTP-3"], level="MUST",
       title="a connection reset while uploading is transient and the object is not re-sent",
       fakes="the store resets the first output POST after 4 KiB of its body",
       expected="exit 1; exactly one POST of that key; failed marker")
def _(ctx):
    items = [Input("big.bin", bytes(range(256)) * 4096)]
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.reset(after_bytes=4096), Match(method="POST", key="*outputs/*", first=1))
    plane.run()
    expect_exit(ctx, plane, 1, "an upload that ends without an answer is ambiguous, transient")
    sent = plane.posts("outputs/big.bin")
    ctx.expect(len(sent) == 1, expected="one POST of outputs/big.bin (never re-sent after an ambiguous end)",
               actual="%d POSTs" % len(sent))
    expect_marker(ctx, plane, "failed", 1)


@check("output.accept-then-reset", clauses=["STEP-MARKER-5", "STEP-OUTPUT-6"], level="MUST",
       title="an object the store committed before resetting is still in the failed marker",
       fakes="the store reads and commits the first output, then resets instead of answering",
       expected="exit 1; the failed marker lists that output (inventory first)")
def _(ctx):
    items = csv_inputs(1)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.accept_then_reset(), Match(method="POST", key="*outputs/*", first=1))
    plane.run()
    expect_exit(ctx, plane, 1, "no answer: ambiguous, transient")
    expect_marker(ctx, plane, "failed", 1)
    expect_listed(ctx, plane, ["outputs/" + items[0].relpath],
                  "a work object is inventoried before its upload, so salvage finds it")


@check("output.upload-silent", clauses=["STEP-STREAM-4"], level="SHOULD",
       title="a store silent after an upload body ends the run after the upload timeout",
       fakes="the store commits the first output and never answers",
       expected="exit 1 within 10 s + 5 s; failed marker")
def _(ctx):
    items = csv_inputs(1)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.accept_then_hang(), Match(method="POST", key="*outputs/*", first=1))
    plane.run()
    expect_exit(ctx, plane, 1, "silence after the body is transient")
    ctx.expect(plane.result.wall_s <= 15.0, expected="ended within 15 s (upload timeout 10 s)",
               actual="%.1f s" % plane.result.wall_s)
    expect_marker(ctx, plane, "failed", 1)


@check("output.too-large", clauses=["STEP-OUTPUT-4"], level="MUST",
       title="an output larger than 1 GiB is refused before any upload",
       fakes="one generated input of 1 GiB + 1 byte, correctly pinned",
       expected="exit 10; no POST of it")
def _(ctx):
    items = [Input("huge.bin", generated=(1 << 30) + 1)]
    plane = ctx.step_plane(inputs=items)
    plane.run(timeout=120)
    expect_exit(ctx, plane, 10, "objects above 1 GiB are refused")
    ctx.expect(not plane.posts("outputs/huge.bin"), expected="no POST of outputs/huge.bin",
               actual="%d POST(s)" % len(plane.posts("outputs/huge.bin")))


@check("output.local-staging", clauses=["STEP-OUTPUT-7", "STEP-MANIFEST-1", "STEP-INPUT-3"], level="MUST",
       title="local_path mode: manifest_path, local inputs, files written whole under staging.path",
       fakes="staging.mode local_path; manifest_path; local_path inputs",
       expected="exit 0; each output at <path>/<relpath>; no temporary names left")
def _(ctx):
    items = [Input("a.csv", b"1,2\n", source="local"), Input("nested/b.csv", b"3,4\n5,6\n", source="local")]
    plane = ctx.step_plane(inputs=items, staging="local_path", manifest_source="local")
    plane.run()
    expect_exit(ctx, plane, 0, "local mode succeeds")
    expect_marker(ctx, plane, "succeeded", 0)
    for item in items:
        held = plane.hash_stored("outputs/" + item.relpath)
        ctx.expect(held == (item.true_sha256, item.true_size),
                   expected="outputs/%s holds the input" % item.relpath, actual="%s" % (held,))
    import os
    names = []
    for top, _dirs, files in os.walk(plane.staging_dir):
        names += [os.path.relpath(os.path.join(top, f), plane.staging_dir) for f in files]
    want = sorted(["outputs/a.csv", "outputs/nested/b.csv", RESULT_NAME, "__lspo_complete.json"])
    ctx.expect(sorted(names) == want, expected="staging holds exactly %s" % want, actual="%s" % sorted(names))
