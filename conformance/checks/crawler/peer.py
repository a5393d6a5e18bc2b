"""Peer variety: the node against what the upstream's real peers may send (CRAWLER-PEER-*).

The fakes of the other areas speak this contract's own dialect. These checks
make them speak the upstream's variety instead, within what the upstream job
(seed 000, contract/crawler.md "Where we differ from the upstream") accepts,
and expect the node to accept it too. The broker serves the variants by name
(its options request_members and bootstrap_raw, conformance/dialect.py's
rewrites underneath); the rest are the fakes' usual patches and faults:

    peer.request-members      a crawl request with members nobody defined, at every level
    peer.reader-pin-null      query.reader_pin null: the upstream's own "no Reader"
    peer.bootstrap-spelling   the :redeem answer as other JSON writers spell it (Go, PHP, indented)
    peer.upload-url-forms     the signed URL's query in another order; its scheme in capitals
    peer.child-line-spaced    a failing child's line with whitespace around it (stripped upstream)
    peer.store-answer         the store's 200 or 201 carrying a body (GCS's JSON API answers with one)
    peer.argv-abbreviated     the option abbreviated, as argparse takes it
    peer.argv-repeated        the option twice: the last one wins, as with argparse
    peer.argv-help-anywhere   -h / --help (or --he) among other tokens

What the upstream refuses stays refused here, and the other areas check it:
the bootstrap and the capability keep exact key sets (the upstream compares
them), a float anywhere in the bootstrap is refused (D24: the request's
digest is over canonical bytes, and max_result_bytes is an integer upstream),
an expires_at with an offset is refused (the upstream's pattern ends in Z).
The PUT answered 201 with an empty body, or 200 with a body up to 64 KiB, is
upload.status-201's and upload.answer-bound's; expires_at with a fraction is
cap.accepted's.
"""

import urllib.parse

from conformance.checks import check
from conformance.checks.crawler._common import (
    SESSION_ID, Match, PutRecorder, docs, each_variant, expect_no_network, expect_reported, expect_retrieval,
    expect_success, faults)
from conformance.timeouts import SHORT_TIMEOUT_S

OPTION = "--crawler-session-id"
# A second canonical UUID: a node that keeps the first of two options redeems
# this session, which the broker does not serve.
OTHER_SESSION_ID = "0c9a6e55-2f1b-4d7e-8a3c-5e4f6b7d8c91"
# A token a help run must neither act on nor repeat.
CANARY_ARG = "CANARYARG91c2"

def _in_query(**members):
    def edit(request):
        request["query"].update(members)
        return request
    return edit


def _child_line(code):
    return docs.canonical({"code": code, "status": "failed"}).decode("ascii")


def _expect_digest_of_whole_request(ctx, plane, label):
    """The stored result (or bundle) names the digest of the request as served, unknown members included."""
    want = docs.digest(plane.broker.request)
    stored = plane.stored_result() or plane.stored_bundle()
    got = stored.doc.get("request_digest") if stored is not None and isinstance(stored.doc, dict) else None
    ctx.expect(got == want, expected="request_digest %s: the digest of the whole request as served, its "
                                     "unknown members included (variant %s)" % (want, label),
               actual="request_digest %r" % (got,),
               diagnosis="the request is bound by the digest of its canonical bytes as the broker sent it; "
                         "a node that drops the members it does not know digests another document")


# ---------------------------------------------------------------- CRAWLER-PEER-1: documents

@check("peer.request-members", clauses=["CRAWLER-PEER-1", "CRAWLER-BOOT-5"], level="MUST",
       title="a crawl request with members nobody defined is accepted, and its digest covers them",
       fakes="the broker's request carries an unknown member (every JSON type but a float) in every object: "
             "the request, query and limits; then only at the top; then everywhere with a failing child "
             "(one per run); the capability is signed for that very request",
       expected="the first two: exit 0 and a stored result whose request_digest is the digest of the whole "
                "request as served; the third: a failure bundle with the child's code and that digest")
def _(ctx):
    def act(label, value):
        members, child = value
        # Arrange
        options = {"request_members": members}
        if child is not None:
            options["child"] = child
        plane = ctx.plane(**options)
        # Act
        plane.run()
        # Assert
        if child is None:
            expect_success(ctx, plane)
        else:
            expect_reported(ctx, plane, "CRAWLER_NORMALIZATION_FAILED", label)
        _expect_digest_of_whole_request(ctx, plane, label)

    failing = {"mode": "fail", "stderr": _child_line("CRAWLER_NORMALIZATION_FAILED") + "\n", "exit": 1}
    each_variant(ctx, [
        ("an unknown member in the request, query and limits", ("everywhere", None)),
        ("an unknown member at the top only", ("top", None)),
        ("unknown members everywhere, the child fails", ("everywhere", failing)),
    ], act)


@check("peer.reader-pin-null", clauses=["CRAWLER-PEER-1", "CRAWLER-BOOT-5"], level="MUST",
       title="query.reader_pin null (and resource_caps null) is a request without a Reader, accepted",
       fakes="the broker's query carries \"reader_pin\": null; then also \"resource_caps\": null "
             "(one per run): the upstream tests reader_pin `is not None` and reads resource_caps only with one",
       expected="each: exit 0, silent, a stored result bound to the request as served")
def _(ctx):
    def act(label, edit):
        # Arrange
        plane = ctx.plane(request_patch=edit)
        # Act
        plane.run()
        # Assert
        expect_success(ctx, plane)
        _expect_digest_of_whole_request(ctx, plane, label)

    each_variant(ctx, [
        ("reader_pin null", _in_query(reader_pin=None)),
        ("reader_pin and resource_caps null", _in_query(reader_pin=None, resource_caps=None)),
    ], act)


@check("peer.bootstrap-spelling", clauses=["CRAWLER-PEER-1", "CRAWLER-BOOT-4"], level="MUST",
       title="the :redeem answer is read whatever spelling its JSON writer chose",
       fakes=":redeem answers the bootstrap as Go's encoding/json writes it (\\u0026 in the signed URL), as "
             "PHP's json_encode writes it (\\/ for every slash), and indented with CRLF and every object's keys "
             "reversed (one per run); the upstream parses it with parse_json, not the canonical parser",
       expected="each: exit 0, silent, the result stored; the PUT's target is the signed URL, decoded")
def _(ctx):
    def act(label, writer):
        # Arrange
        plane = ctx.plane(bootstrap_raw=writer)
        recorder = PutRecorder(plane)
        # Act
        plane.run()
        # Assert
        expect_success(ctx, plane)
        want = plane.broker.upload_url[len(plane.store.origin):]
        sent = recorder.targets[0] if recorder.targets else None
        ctx.expect(sent == want, expected="the PUT's target: the signed URL's path and query as the JSON "
                                          "string holds them, escapes decoded (variant %s)" % label,
                   actual="another target" if sent else "no PUT",
                   diagnosis="the URL is the string's value, not its spelling in the answer")

    each_variant(ctx, [
        ("Go's encoding/json", "go"),
        ("PHP's json_encode", "php"),
        ("indented, CRLF, keys reversed", "indented"),
    ], act)


def _url_edit(edit):
    """A capability_patch rewriting upload_url with edit(scheme, netloc, path, fields) -> url."""
    def patch(cap):
        split = urllib.parse.urlsplit(cap["upload_url"])
        cap["upload_url"] = edit(split.scheme, split.netloc, split.path, split.query.split("&"))
    return patch


@check("peer.upload-url-forms", clauses=["CRAWLER-PEER-1", "CRAWLER-CAP-5", "CRAWLER-UPLOAD-1"], level="MUST",
       title="the signed URL is read as urlsplit reads it: its query in any order, its scheme in any case",
       fakes="the capability's upload_url with the six signed fields in reverse order; with its scheme "
             "written HTTPS; with both (one per run); the store verifies the signature whatever the order",
       expected="each: exit 0, silent, the result stored; the PUT's target is the URL's path and query "
                "byte for byte, in the order given")
def _(ctx):
    def act(label, edit):
        # Arrange
        plane = ctx.plane(capability_patch=_url_edit(edit))
        recorder = PutRecorder(plane)
        # Act
        plane.run()
        # Assert
        expect_success(ctx, plane)
        split = urllib.parse.urlsplit(plane.broker.capability["upload_url"])
        want = split.path + "?" + split.query
        sent = recorder.targets[0] if recorder.targets else None
        ctx.expect(sent == want, expected="the PUT's target byte for byte as the capability gives it "
                                          "(variant %s)" % label,
                   actual="another target" if sent else "no PUT",
                   diagnosis="the query is sent as received, in its order: the signature does not depend "
                             "on it, and re-ordering it is re-encoding it")

    each_variant(ctx, [
        ("query fields reversed", lambda s, n, p, f: "%s://%s%s?%s" % (s, n, p, "&".join(reversed(f)))),
        ("scheme HTTPS", lambda s, n, p, f: "%s://%s%s?%s" % (s.upper(), n, p, "&".join(f))),
        ("both", lambda s, n, p, f: "%s://%s%s?%s" % (s.upper(), n, p, "&".join(reversed(f)))),
    ], act)


@check("peer.child-line-spaced", clauses=["CRAWLER-PEER-1", "CRAWLER-CHILD-8"], level="MUST",
       title="a failing child's line with whitespace around it still names its code (the upstream strips it)",
       fakes="the scripted child writes {\"code\":X,\"status\":\"failed\"} (X each deployed child code, in turn) "
             "after a space, after a blank line, followed by \\r\\n, followed by \\n\\n, between tabs, and exits 1",
       expected="each: a failure bundle with X, \"reported\", exit 0; the result never stored")
def _(ctx):
    codes = sorted(docs.CHILD_FAILURE_CODES)
    spellings = [("a leading space", " %s\n"), ("a blank line first", "\n%s\n"), ("\\r\\n", "%s\r\n"),
                 ("\\n\\n", "%s\n\n"), ("tabs around it", "\t%s\t\n")]

    def act(label, value):
        code, stderr = value
        # Arrange
        plane = ctx.plane(child={"mode": "fail", "stderr": stderr, "exit": 1})
        # Act
        plane.run()
        # Assert
        expect_reported(ctx, plane, code, label)
        ctx.expect(plane.stored_result() is None, expected="no result stored (variant %s)" % label,
                   actual="a result was stored",
                   diagnosis="a child that failed leaves no result: report its code with a bundle, never store what it "
                             "printed")

    each_variant(ctx, [("%s, %s" % (name, codes[i % len(codes)]),
                        (codes[i % len(codes)], form % _child_line(codes[i % len(codes)])))
                       for i, (name, form) in enumerate(spellings)], act)


# An answer body the store sends with its 200 or 201: about what GCS's JSON API
# sends (the object's resource), well within MAX_UPLOAD_RESPONSE_BYTES.
STORE_ANSWER_BYTES = 1200


@check("peer.store-answer", clauses=["CRAWLER-PEER-1", "CRAWLER-UPLOAD-3"], level="MUST",
       title="the store's 201, or 200, with a body counts as stored (the upstream reads up to 64 KiB of any body)",
       fakes="the store commits the result and answers 201 with a %d-byte body, then 200 with one "
             "(one per run)" % STORE_ANSWER_BYTES,
       expected="each: exit 0, silent, the result stored, one PUT")
def _(ctx):
    def act(label, status):
        # Arrange
        plane = ctx.plane()
        PutRecorder(plane, success_status=status)
        plane.store.add_fault(faults.oversize(STORE_ANSWER_BYTES), Match(method="PUT"))
        # Act
        plane.run()
        # Assert
        ctx.expect([ex.status for ex in plane.puts()] == [status],
                   expected="the store answered the PUT %d (variant %s)" % (status, label),
                   actual="; ".join(str(ex.status) for ex in plane.puts()) or "no PUT",
                   diagnosis="the node sent no PUT or sent it again: PUT the result once and take any 2xx answer, "
                             "whatever its body, as stored")
        expect_success(ctx, plane)

    each_variant(ctx, [("201 with a body", 201), ("200 with a body", 200)], act)


# The chunk sizes a chunked source comes in: one byte (every byte its own chunk), a size
# that divides nothing, and the reads a server buffering 4 KiB would make.
SOURCE_CHUNK_SIZES = (1, 7, 4096)
IDENTITY_CHUNK_BYTES = 5


@check("peer.chunked-answers", clauses=["CRAWLER-PEER-1", "CRAWLER-FETCH-6", "CRAWLER-FETCH-8"], level="MUST",
       title="the identity answer and the source sent chunked, with no Content-Length, are read as urllib reads them",
       fakes="the metadata server sends the identity token chunked, %d bytes a chunk; then the source site sends "
             "the source chunked, %s bytes a chunk, to a scripted child that records its input (one per run)"
             % (IDENTITY_CHUNK_BYTES, ", ".join(str(n) for n in SOURCE_CHUNK_SIZES)),
       expected="each: exit 0, silent, the result stored; for the source, the child's input and retrieval are the "
                "harness's: the bytes served without their framing, the hop's content_length null")
def _(ctx):
    def act(label, options):
        # Arrange
        chunked_source = "source_chunk_bytes" in options
        plane = ctx.plane(child={"mode": "normal"}, **options) if chunked_source else ctx.plane(**options)
        # Act
        plane.run()
        # Assert
        expect_success(ctx, plane)
        if chunked_source:
            expect_retrieval(ctx, plane, served="the source, unchunked (%s)" % label)

    variants = [("the identity token chunked", {"identity_chunk_bytes": IDENTITY_CHUNK_BYTES})]
    variants += [("the source chunked, %d byte(s) a chunk" % size, {"source_chunk_bytes": size})
                 for size in SOURCE_CHUNK_SIZES]
    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- CRAWLER-PEER-2: launch lines

@check("peer.argv-abbreviated", clauses=["CRAWLER-PEER-2", "CRAWLER-ARGV-1"], level="MUST",
       title="the option abbreviated as argparse takes it: --crawler, --c, --crawler-session=",
       fakes="a healthy plane; the node is started with `--crawler <sid>`, `--c <sid>`, "
             "`--crawler-session=<sid>` (one per run)",
       expected="each: exit 0, silent, the result stored")
def _(ctx):
    def act(label, args):
        # Arrange
        plane = ctx.plane()
        # Act
        plane.run(args=args)
        # Assert
        expect_success(ctx, plane)

    each_variant(ctx, [
        ("--crawler", ["--crawler", SESSION_ID]),
        ("--c", ["--c", SESSION_ID]),
        ("--crawler-session=", ["--crawler-session=" + SESSION_ID]),
    ], act)


@check("peer.argv-repeated", clauses=["CRAWLER-PEER-2", "CRAWLER-ARGV-1"], level="MUST",
       title="the option given twice: the last value wins, as with argparse",
       fakes="a healthy plane for session <sid>; the node is started with the option for another session and "
             "then for <sid>; then with a value that is no UUID and then <sid> (one per run)",
       expected="each: exit 0, silent, the result stored; :redeem for <sid> only")
def _(ctx):
    def act(label, args):
        # Arrange
        plane = ctx.plane()
        # Act
        plane.run(args=args)
        # Assert
        expect_success(ctx, plane)
        paths = [call.raw_path for call in plane.broker.redeems()]
        ctx.expect(len(paths) == 1 and SESSION_ID in paths[0],
                   expected="one :redeem, for the last value (variant %s)" % label,
                   actual="%d :redeem(s)%s" % (len(paths), "" if len(paths) != 1 else " for another session"),
                   diagnosis="when the session option is given more than once, the last value wins: redeem that "
                             "session only, once")

    each_variant(ctx, [
        ("another session, then <sid>", [OPTION, OTHER_SESSION_ID, OPTION, SESSION_ID]),
        ("no UUID, then <sid> as --crawler=", [OPTION, "not-a-uuid", "--crawler=" + SESSION_ID]),
    ], act)


@check("peer.argv-help-anywhere", clauses=["CRAWLER-PEER-2", "CRAWLER-ARGV-1"], level="MUST",
       title="-h or --help, or an abbreviation of it, among other tokens prints the usage text and exits 0",
       fakes="a complete, healthy plane; the node is started with `<option> <sid> --help`, `--help <token>`, "
             "`--he`, `-h --bogus` (one per run)",
       expected="each: exit 0, a usage text on stdout that repeats no token, no request")
def _(ctx):
    def act(label, args):
        # Arrange: the plane only watches the network (a help run is no job run)
        plane = ctx.plane()
        # Act
        result = ctx.start_node(plane.env(), args=args).wait(SHORT_TIMEOUT_S)
        # Assert
        ctx.expect(result.exit_code == 0 and result.stdout.strip() != "",
                   expected="exit 0 and a usage text on stdout for %r" % (args,),
                   actual="exit %s; stdout %r; stderr %r" % (result.exit_code, result.stdout[:120],
                                                            result.stderr[:200]),
                   diagnosis="argparse acts on -h/--help where it meets it, whatever the other tokens are")
        echoed = [token for token in (SESSION_ID, CANARY_ARG) if token in result.stdout + result.stderr]
        ctx.expect(not echoed, expected="no token of the command line repeated (variant %s)" % label,
                   actual="repeats %s" % ", ".join(repr(t) for t in echoed),
                   diagnosis="the usage text is fixed (D1)")
        expect_no_network(ctx, plane, label)
        return plane

    each_variant(ctx, [
        ("after the option", [OPTION, SESSION_ID, "--help"]),
        ("before a stray token", ["--help", CANARY_ARG]),
        ("--he", ["--he"]),
        ("-h before an unknown option", ["-h", "--bogus-" + CANARY_ARG]),
    ], act)
