"""Outputs: canonical relpaths, the presigned POST wire format, refusals and ambiguity.

Which objects a step writes, and their names, are its own work; these checks
find the node's uploads by where they go (under the staging prefix, neither
result.json nor the marker), never by the names the reference node chooses.
"""

from conformance.checks import check
from conformance.checks.step._common import (
    Input, Match, KEY_PREFIX, MARKER_NAME, csv_inputs, data_upload, expect_exit, expect_listed,
    expect_marker, faults)


def is_canonical(relpath):
    """STEP-OUTPUT-2's canonical relpath, as the collector checks it."""
    return (isinstance(relpath, str) and relpath != "" and not relpath.startswith("/") and "\\" not in relpath
            and not any(ord(ch) < 0x20 for ch in relpath)
            and all(part not in ("", ".", "..") for part in relpath.split("/")))


def _faulted_key(plane):
    """The key of the first upload a fault acted on (the node's own object)."""
    hit = [ex for ex in plane.collector.data_posts() if ex.fault]
    return hit[0].key if hit else None


def clashing_inputs():
    """Inputs whose names clash: data.csv from ports a, b, b; file from my.port three times."""
    return [Input("data.csv", b"a\n", port="a"), Input("data.csv", b"b\n", port="b"),
            Input("data.csv", b"b2\n", port="b"), Input("file", b"f1\n", port="my.port"),
            Input("file", b"f2\n", port="my.port"), Input("file", b"f3\n", port="my.port")]


@check("output.unique-relpaths", clauses=["STEP-OUTPUT-1"], level="MUST",
       title="inputs with one name from several ports never make two objects share a relpath",
       fakes="data.csv from ports a, b and b again; file from port my.port three times",
       expected="exit 0; no key uploaded twice; every relpath once in the marker; result.json and the "
                "marker written once each")
def _(ctx):
    plane = ctx.step_plane(inputs=clashing_inputs())
    plane.run()
    expect_exit(ctx, plane, 0, "clashing names are told apart, not refused")
    keys = [ex.key for ex in plane.collector.posts()]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    ctx.expect(not twice, expected="no key uploaded twice", actual="uploaded more than once: %s" % twice[:3],
               diagnosis="choose a relpath no earlier object of the run has: two objects on one relpath lose "
                         "one's bytes and the collector refuses the duplicate")
    listed = plane.collector.marker_relpaths()
    ctx.expect(len(listed) == len(set(listed)),
               expected="each relpath once in the marker",
               actual="listed %s" % listed,
               diagnosis="list each object once in the marker's inventory: two inputs with one name need two distinct "
                         "relpaths")


def _bad_relpath_check(label, relpath):
    @check("output.bad-relpath.%s" % label, clauses=["STEP-OUTPUT-2"], level="MUST",
           title="an input named %r never leads to a non-canonical relpath" % relpath,
           fakes="one good input, then one whose relpath is %r" % relpath,
           expected="no POST and no marker entry with a non-canonical relpath; a node that refuses the "
                    "name exits 10 with a failed marker; one whose names do not come from inputs exits 0")
    def _(ctx):
        items = [Input("good.csv", b"1\n"), Input(relpath, b"2\n")]
        plane = ctx.step_plane(inputs=items)
        plane.run()
        expect_exit(ctx, plane, (0, 10), "refused as permanent, or never used in a relpath")
        bad = [ex.key[len(KEY_PREFIX):] for ex in plane.collector.posts()
               if ex.key and ex.key.startswith(KEY_PREFIX) and not is_canonical(ex.key[len(KEY_PREFIX):])]
        ctx.expect(not bad, expected="no POST to a non-canonical relpath", actual="POSTed relpaths %r" % bad[:3],
                   diagnosis="check every relpath before its first byte is sent (STEP-OUTPUT-2): the collector "
                             "refuses a whole marker for one bad relpath")
        listed = [r for r in plane.collector.marker_relpaths() if not is_canonical(r)]
        ctx.expect(not listed, expected="every relpath in the marker canonical", actual="listed %r" % listed[:3],
                   diagnosis="never record a non-canonical relpath in the marker: check each relpath before it enters "
                             "the inventory")
        if plane.result.exit_code == 10:
            expect_marker(ctx, plane, "failed", 10)
        else:
            ctx.note("exit 0: this node's relpaths do not come from the input's name")


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
    posts = plane.collector.posts()
    ctx.expect(len(posts) >= 2, expected="at least result.json's and the marker's POSTs", actual="%d" % len(posts),
               diagnosis="every run writes result.json and the marker with one presigned POST each")
    fields = list(plane.collector.post_field_names())
    for ex in posts:
        headers = dict((k.lower(), v) for k, v in ex.headers)
        ctx.expect("chunked" not in headers.get("transfer-encoding", "").lower(),
                   expected="no Transfer-Encoding: chunked", actual="%s for %s" % (
                       headers.get("transfer-encoding"), ex.key),
                   diagnosis="send each upload with its exact Content-Length: the presigned POST refuses chunked "
                             "bodies")
        ctx.expect(headers.get("content-length", "").isdigit() and int(headers["content-length"]) == ex.req_bytes,
                   expected="Content-Length equal to the body sent",
                   actual="Content-Length %r, body %d bytes (%s)" % (headers.get("content-length"),
                                                                     ex.req_bytes, ex.key),
                   diagnosis="compute the multipart body's length before sending and announce exactly that in "
                             "Content-Length")
        ctx.expect(headers.get("content-type", "").startswith("multipart/form-data; boundary="),
                   expected="Content-Type multipart/form-data; boundary=...",
                   actual=headers.get("content-type"),
                   diagnosis="send each upload as multipart/form-data with the boundary in its Content-Type")
        order = ex.notes.get("form_fields")
        want = list(fields) + (["key"] if "key" not in fields else [])
        ctx.expect(order == want, expected="form fields in order %s, then file" % want,
                   actual="fields %s" % order,
                   diagnosis="policy fields verbatim and in order, then key; S3 reads them before the file")
        ctx.expect(ex.notes.get("file_name") is not None and not ex.notes.get("fields_after_file"),
                   expected="a file part, last", actual="file part %r; after it %r" % (
                       ex.notes.get("file_name"), ex.notes.get("fields_after_file")),
                   diagnosis="send the file part exactly once and last: S3 ignores every field after the file")
        ctx.expect(ex.key and ex.key.startswith(KEY_PREFIX), expected="key under the staging prefix",
                   actual="key %r" % ex.key,
                   diagnosis="post every object under staging.post.key_prefix: the key field is the prefix plus the "
                             "relpath")


@check("output.redirect-upload", clauses=["STEP-OUTPUT-5"], level="MUST",
       title="a 302 answering an upload is not followed",
       fakes="the node's first upload of its own objects is answered 302 to another path on the store",
       expected="exit 1; no request to the redirect target")
def _(ctx):
    items = csv_inputs(1)
    plane = ctx.step_plane(inputs=items)
    target = plane.store.origin + "/redirected/elsewhere"
    plane.store.add_fault(faults.redirect(target, code=302), data_upload(first=1))
    plane.run()
    plane.skip_unless_own_uploads()
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
               actual="%d request(s) followed the redirect" % len(followed),
               diagnosis="never follow a redirect on an input GET (urllib does by default): a 3xx is transient and its "
                         "Location is never contacted")


@check("output.reset-mid-upload", clauses=["STEP-OUTPUT-6", "STEP-HTTP-3"], level="MUST",
       title="a connection reset while uploading is transient and the object is not re-sent",
       fakes="the store resets the node's first upload of its own objects after 4 KiB of its body",
       expected="exit 1; exactly one POST of that key; failed marker")
def _(ctx):
    items = [Input("big.bin", bytes(range(256)) * 4096)]
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.reset(after_bytes=4096), data_upload(first=1))
    plane.run()
    plane.skip_unless_own_uploads()
    expect_exit(ctx, plane, 1, "an upload that ends without an answer is ambiguous, transient")
    key = _faulted_key(plane)
    ctx.expect(key is not None, expected="an upload the reset cut", actual="no upload was reset",
               diagnosis="no upload of the node's own objects reached the store: publish what the work makes from the "
                         "inputs")
    sent = plane.exchanges("POST", key=key)
    ctx.expect(len(sent) == 1, expected="one POST of %s (never re-sent after an ambiguous end)" % key,
               actual="%d POSTs" % len(sent),
               diagnosis="an upload that ended without an answer is ambiguous: never send it again (the store may have "
                         "committed it), end the run as transient")
    expect_marker(ctx, plane, "failed", 1)


@check("output.accept-then-reset", clauses=["STEP-MARKER-5", "STEP-OUTPUT-6"], level="MUST",
       title="an object the store committed before resetting is still in the failed marker",
       fakes="the store reads and commits the node's first own object, then resets instead of answering",
       expected="exit 1; the failed marker lists that object (inventory first)")
def _(ctx):
    items = csv_inputs(1)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.accept_then_reset(), data_upload(first=1))
    plane.run()
    plane.skip_unless_own_uploads()
    expect_exit(ctx, plane, 1, "no answer: ambiguous, transient")
    expect_marker(ctx, plane, "failed", 1)
    key = _faulted_key(plane)
    ctx.expect(key is not None, expected="an upload committed and then reset", actual="no upload was reset",
               diagnosis="no upload of the node's own objects reached the store: publish what the work makes from the "
                         "inputs")
    expect_listed(ctx, plane, [key[len(KEY_PREFIX):]],
                  "a work object is inventoried before its upload, so salvage finds it")


@check("output.upload-silent", clauses=["STEP-STREAM-4"], level="SHOULD",
       title="a store silent after an upload body ends the run after the upload timeout",
       fakes="the store commits the node's first own object and never answers",
       expected="exit 1 within 10 s + 5 s; failed marker")
def _(ctx):
    items = csv_inputs(1)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.accept_then_hang(), data_upload(first=1))
    plane.run()
    plane.skip_unless_own_uploads()
    expect_exit(ctx, plane, 1, "silence after the body is transient")
    ctx.expect(plane.result.wall_s <= 15.0, expected="ended within 15 s (upload timeout 10 s)",
               actual="%.1f s" % plane.result.wall_s,
               diagnosis="bound the wait for an upload's answer with the 10 s upload timeout, then end the run as "
                         "transient")
    expect_marker(ctx, plane, "failed", 1)


@check("output.too-large", clauses=["STEP-OUTPUT-4"], level="MUST",
       title="an output larger than 1 GiB is refused before any upload",
       fakes="one generated input of 1 GiB + 1 byte, correctly pinned",
       expected="exit 10; no upload of the node's own objects")
def _(ctx):
    items = [Input("huge.bin", generated=(1 << 30) + 1)]
    plane = ctx.step_plane(inputs=items)
    plane.run(timeout=120)
    expect_exit(ctx, plane, 10, "objects above 1 GiB are refused")
    ctx.expect(not plane.collector.data_posts(), expected="no upload of the node's own objects",
               actual="uploaded: %s" % [ex.key for ex in plane.collector.data_posts()][:3],
               diagnosis="refuse an object over 1 GiB before any byte of it is sent (STEP-OUTPUT-4)")


@check("output.local-staging", clauses=["STEP-OUTPUT-7", "STEP-MANIFEST-1", "STEP-INPUT-3"], level="MUST",
       title="local_path mode: manifest_path, local inputs, files written whole under staging.path",
       fakes="staging.mode local_path; manifest_path; local_path inputs",
       expected="exit 0; staging.path holds exactly the marker's objects and the marker, each with its "
                "listed hash; no temporary names left")
def _(ctx):
    items = [Input("a.csv", b"1,2\n", source="local"), Input("nested/b.csv", b"3,4\n5,6\n", source="local")]
    plane = ctx.step_plane(inputs=items, staging="local_path", manifest_source="local")
    plane.run()
    expect_exit(ctx, plane, 0, "local mode succeeds")
    expect_marker(ctx, plane, "succeeded", 0)
    names = plane.collector.stored_relpaths()
    want = sorted(plane.collector.marker_relpaths() + [MARKER_NAME])
    ctx.expect(names == want,
               expected="staging holds exactly the marker's objects and the marker",
               actual="staging %s; marker lists %s" % (names, plane.collector.marker_relpaths()),
               diagnosis="write each object to a temporary name beside it and os.replace it; leave nothing else")

