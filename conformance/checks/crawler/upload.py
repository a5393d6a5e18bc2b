"""Upload: the one create-only PUT that stores the child's bytes (CRAWLER-UPLOAD-*).

What these checks pin: the PUT's request line and header list on the wire, the
body as the child's exact stdout, which answers count as stored (200 and 201
with a bounded body, nothing else), a result PUT never retried nor followed by
a bundle, no PUT presented once the upload window has run out, and one elapsed
deadline per PUT.

The helpers `PutRecorder`, `expect_put_wire`, `bulky_csv` and `wait_for` are
also used by the report, stop, stream and secret checks (a bundle PUT has the
same wire shape as the result PUT); they could move to _common.
"""

import os
import signal
import time

from conformance.checks import check
from conformance.checks.crawler._common import (
    DEADLINE_SLACK_S, SHORT_DEADLINE_S, Match, PutRecorder, bulky_csv, bulky_limits, describe_target_difference,
    docs, each_variant, expect_outcome, expect_put_count, expect_put_wire, expect_success, expect_untouched,
    expected_target, faults, puts_summary)
from conformance.planes import crawler_child
from conformance.timeouts import NODE_RUN_TIMEOUT_S, POLL_INTERVAL_S, Deadline

UPLOAD_FAILED = "CRAWLER_UPLOAD_FAILED"
CAPABILITY_EXPIRED = "CRAWLER_UPLOAD_CAPABILITY_EXPIRED"

# A source whose result carries non-ASCII text outside the base64 content
# (column names, the filename): a node that re-encodes the child's JSON with
# another encoder (ensure_ascii, say) changes these bytes (CRAWLER-UPLOAD-2).
NON_ASCII_SOURCE = ("temp\u00e9rature,\u57ce\u5e02,note\n"
                    "21,Oslo,\"line one\nline two\"\n"
                    "-3,\u00c5lesund,\u2603\n").encode("utf-8")
NON_ASCII_FILENAME = "donn\u00e9es-m\u00e9t\u00e9o.csv"

# An answer body that ends a PUT as failed although the store committed the
# object (CRAWLER-UPLOAD-3): well past MAX_UPLOAD_RESPONSE_BYTES.
OVERSIZE_ANSWER_BYTES = 100 * 1024

# How fast a PUT's answer is dribbled in upload.deadline: far slower than the
# deadline, so only an elapsed deadline (not a per-read timeout) ends it (D9).
DRIBBLE_INTERVAL_S = 0.5

# upload.expired-window: the capability's whole window (X-Goog-Expires and
# expires_at). It must leave the fetch and the child a positive budget after
# UPLOAD_RESERVE_S (5 s, CRAWLER-CHILD-7) on a loaded machine, and no more:
# the check waits it out (so these two checks take about 11 s each).
SHORT_WINDOW_S = 10
# How far past the window's end the node is resumed. The node already had to
# refuse with less than one second left (CRAWLER-UPLOAD-5), so any margin works.
PAST_WINDOW_S = 0.5
# Attempts at pausing the node between the child's exit and its result PUT
# (the harness can lose that race on a loaded machine; then it tries again).
PAUSE_ATTEMPTS = 3
# Source size for upload.expired-window: its result (about 5.6 MB) keeps the
# node busy checking it for about 0.2 s after it reaped its child, the gap in
# which the harness pauses it.
BULKY_SOURCE_BYTES = 4 * 1000 * 1000
# Time given to the node to block in the fetch before it is paused.
SETTLE_S = 0.3


# ---------------------------------------------------------------- checks

@check("upload.wire", clauses=["CRAWLER-UPLOAD-1"], level="MUST",
       title="the result PUT: the capability's target byte for byte, Host, Content-Length, then the seven",
       fakes="a healthy run; the store records the raw request target of each PUT",
       expected="one connection and one PUT; target == the capability URL's path?query; headers exactly "
                "Host, Content-Length, the seven in capability order; no Accept-Encoding, Authorization, "
                "User-Agent, Transfer-Encoding or Expect")
def _(ctx):
    plane = ctx.plane()
    recorder = PutRecorder(plane)
    plane.run()
    expect_success(ctx, plane)
    expect_put_count(ctx, plane, 1, "the result, once")
    ctx.expect(len(plane.store.connections) == 1, expected="one connection to the storage origin",
               actual="%d connections" % len(plane.store.connections),
               diagnosis="send the result over one connection to the storage origin, opened for the PUT alone")
    sent, want = recorder.targets[0], expected_target(plane)
    ctx.expect(sent == want, expected="request line PUT <the capability's path>?<its query>, byte for byte",
               actual=lambda: describe_target_difference(sent, want),
               diagnosis="the signed query is sent exactly as received; a URL library that parses and "
                         "re-quotes it can change the signature's input")
    stored = plane.stored_result()
    expect_put_wire(ctx, plane, plane.puts()[0], stored.obj.size, "the result PUT")


@check("upload.body", clauses=["CRAWLER-UPLOAD-2", "CRAWLER-STREAM-2"], level="MUST",
       title="the result PUT's body is the child's stdout byte for byte, with its exact Content-Length",
       fakes="a scripted child writes the canonical result of a CSV whose column names and filename "
             "are not ASCII",
       expected="stored bytes == the child's stdout (SHA-256 and size); Content-Length == its size")
def _(ctx):
    limits = docs.default_limits()
    plane = ctx.plane(source=NON_ASCII_SOURCE, filename=NON_ASCII_FILENAME, limits=limits,
                      child=crawler_child.reference_behaviour())
    plane.run()
    expect_success(ctx, plane)
    record = plane.child.record()
    ctx.expect(isinstance(record, dict) and isinstance(record.get("header"), dict),
               expected="the scripted child recorded its input", actual="record %r" % (record,),
               diagnosis="feed the normaliser child the normalisation input header and the source on its stdin")
    # What the scripted child wrote: its canonical result for the header it was given.
    normalized = docs.normalize_bytes(NON_ASCII_SOURCE, "csv", limits)
    child_stdout = crawler_child.encode(docs.build_result(record["header"], normalized))
    stored = plane.stored_result()
    ctx.expect(stored.raw == child_stdout,
               expected="stored object == the child's stdout (%d bytes, sha256 %s...)" % (
                   len(child_stdout), docs.sha256_hex(child_stdout)[:16]),
               actual="%d bytes, sha256 %s..." % (len(stored.raw), docs.sha256_hex(stored.raw)[:16]),
               diagnosis="the node re-encoded the result instead of sending the spooled bytes")
    put = plane.puts()[0]
    length = dict((n.lower(), v) for n, v in put.headers).get("content-length")
    ctx.expect(length == str(len(child_stdout)) and put.req_bytes == len(child_stdout),
               expected="Content-Length %d and that many body bytes" % len(child_stdout),
               actual="Content-Length %r, %d body bytes" % (length, put.req_bytes),
               diagnosis="announce in Content-Length the spooled result's exact size and send exactly that many bytes")


@check("upload.status-201", clauses=["CRAWLER-UPLOAD-3"], level="MUST",
       title="a 201 Created answer counts as stored",
       fakes="the store commits the result and answers 201 instead of 200",
       expected="exit 0, stdout and stderr empty, the result stored")
def _(ctx):
    plane = ctx.plane()
    PutRecorder(plane, success_status=201)
    plane.run()
    ctx.expect([ex.status for ex in plane.puts()] == [201], expected="the store answered the PUT 201",
               actual=puts_summary(plane),
               diagnosis="PUT the result exactly once")
    expect_success(ctx, plane)


@check("upload.refused", clauses=["CRAWLER-UPLOAD-3", "CRAWLER-UPLOAD-4"], level="MUST",
       title="a refused result PUT is UPLOAD_FAILED, never retried, never followed by a bundle (D12)",
       fakes="the store answers every PUT 403 AccessDenied / 412 PreconditionFailed / 503 / 204 "
             "(a 2xx other than 200 and 201)",
       expected="{\"code\":\"CRAWLER_UPLOAD_FAILED\",\"status\":\"failed\"}, exit 1; exactly one PUT; "
                "nothing stored")
def _(ctx):
    variants = [("403 AccessDenied", faults.status(403, "AccessDenied")),
                ("412 PreconditionFailed", faults.status(412, "PreconditionFailed")),
                ("503 ServiceUnavailable", faults.status(503, "ServiceUnavailable")),
                ("204 No Content", faults.status(204))]

    def act(label, fault):
        plane = ctx.plane()
        plane.store.add_fault(fault, Match(method="PUT"))
        plane.run()
        expect_outcome(ctx, plane, UPLOAD_FAILED, "failed", 1, label)
        expect_put_count(ctx, plane, 1, "no retry and no failure bundle after a failed result PUT, "
                                        "variant %s" % label)
        ctx.expect(not plane.stored(), expected="nothing stored (variant %s)" % label,
                   actual="%d object(s)" % len(plane.stored()),
                   diagnosis="a failed result PUT stores nothing and is final: no retry, no bundle after it")
    each_variant(ctx, variants, act)


@check("upload.redirect", clauses=["CRAWLER-UPLOAD-3"], level="MUST",
       title="a 3xx answering the result PUT is a failure and is never followed",
       fakes="the store answers the PUT 307 / 303 with a Location on the tripwire",
       expected="UPLOAD_FAILED failed, exit 1; one PUT; no connection to the tripwire")
def _(ctx):
    def act(label, code):
        plane = ctx.plane()
        target = plane.tripwire.url("/redirected-upload")
        plane.store.add_fault(faults.redirect(target, code=code), Match(method="PUT"))
        plane.run()
        expect_outcome(ctx, plane, UPLOAD_FAILED, "failed", 1, label)
        expect_put_count(ctx, plane, 1, "variant %s" % label)
        ctx.expect(not plane.tripwire.connections, expected="no connection to the Location (variant %s)" % label,
                   actual="%d connection(s) to the tripwire" % len(plane.tripwire.connections),
                   diagnosis="a redirect answering a PUT is never followed")
    each_variant(ctx, [("307", 307), ("303", 303)], act)


@check("upload.answer-bound", clauses=["CRAWLER-UPLOAD-3"], level="MUST",
       title="a 200 whose answer body exceeds MAX_UPLOAD_RESPONSE_BYTES is a failure; one at the bound is not",
       fakes="the store commits the result, then answers 200 with a body of 65537 bytes (declared), "
             "100 KiB (no Content-Length, read to the close), or exactly 65536 bytes",
       expected="over the bound: UPLOAD_FAILED failed, exit 1, one PUT; at the bound: exit 0, silent")
def _(ctx):
    bound = docs.MAX_UPLOAD_RESPONSE_BYTES
    variants = [("declared %d bytes" % (bound + 1), (faults.oversize(bound + 1), False)),
                ("undeclared %d bytes" % OVERSIZE_ANSWER_BYTES,
                 (faults.oversize(OVERSIZE_ANSWER_BYTES, content_length="absent"), False)),
                ("declared %d bytes (the bound)" % bound, (faults.oversize(bound), True)),
                ("undeclared %d bytes (the bound)" % bound, (faults.oversize(bound, content_length="absent"), True))]

    def act(label, value):
        fault, stored = value
        plane = ctx.plane()
        plane.store.add_fault(fault, Match(method="PUT"))
        plane.run()
        if stored:
            ctx.note("variant %s: an answer of exactly the bound counts as stored" % label)
            expect_success(ctx, plane)
        else:
            expect_outcome(ctx, plane, UPLOAD_FAILED, "failed", 1, label)
            expect_put_count(ctx, plane, 1, "variant %s" % label)
    each_variant(ctx, variants, act)


@check("upload.create-only", clauses=["CRAWLER-UPLOAD-4"], level="MUST",
       title="when the object already exists the create-only PUT fails, and nothing else is tried",
       fakes="the store already holds an object under the capability's name (x-goog-if-generation-match: 0 "
             "answers 412)",
       expected="UPLOAD_FAILED failed, exit 1; exactly one request to the store, a PUT; the object unchanged")
def _(ctx):
    plane = ctx.plane()
    existing = b"an object stored before the run\n"
    plane.store.put(plane.object_key, existing)
    before = plane.store.objects()[plane.object_key]
    plane.run()
    expect_outcome(ctx, plane, UPLOAD_FAILED, "failed", 1)
    methods = [ex.method for ex in plane.store.transcript]
    ctx.expect(methods == ["PUT"], expected="exactly one request to the store, the PUT",
               actual="requests: %s (%s)" % (methods, puts_summary(plane)),
               diagnosis="a failed result PUT is final (D12): no retry, no bundle, no read or delete")
    ctx.expect(plane.puts()[0].status == 412, expected="the store answered the PUT 412 (arrangement)",
               actual=puts_summary(plane),
               diagnosis="send the PUT with the capability's headers exactly, its create-only precondition included, "
                         "and nothing before it")
    after = plane.store.objects()[plane.object_key]
    ctx.expect((after.sha256, after.generation) == (before.sha256, before.generation),
               expected="the existing object unchanged", actual="generation %s -> %s" % (
                   before.generation, after.generation),
               diagnosis="send the capability's create-only precondition with the PUT, so an existing object is never "
                         "overwritten")


def _pause_after_child(ctx, plane):
    """Start the node, SIGSTOP it as soon as it has reaped its child (so it is
    past the child's deadline and busy checking the result), and return the
    monotonic time of the pause; None when the node had already connected for
    its PUT (the harness lost the race and must try again)."""
    plane.start(pid1=False)
    deadline = Deadline(NODE_RUN_TIMEOUT_S)
    child = None
    while child is None or os.path.exists("/proc/%d" % child):
        if child is None:
            pids = plane.child.pids()
            child = pids[0] if pids else None
        if not plane.proc.running():
            ctx.fail(expected="the node to run its child", actual="it exited first (%s)" % plane.describe_exchanges(),
                     diagnosis="the node exited before it ran its normaliser child: the last requests in Actual show "
                              "where it stopped")
        if deadline.over():
            ctx.fail(expected="the node's child to start and end",
                     actual="it did not within %.0f s (%s)" % (NODE_RUN_TIMEOUT_S, plane.describe_exchanges()),
                     diagnosis="run the normaliser child once the fetch is done, and reap it when it ends")
        time.sleep(POLL_INTERVAL_S)
    paused = plane.signal(signal.SIGSTOP)
    ctx.note("paused the node once it had reaped its child (pid %d)" % child)
    if any(conn.t_accept < paused for conn in plane.store.connections):
        return None
    return paused


def _resume_after_window(ctx, plane):
    """Wait until the upload window has ended (wall clock, as the node judges
    it), then SIGCONT the node and wait for its exit."""
    window_end = plane.broker.issued_at + SHORT_WINDOW_S
    left = window_end + PAST_WINDOW_S - time.time()
    if left > 0:
        time.sleep(left)
    plane.signal(signal.SIGCONT)
    ctx.note("resumed the node %.1f s after its upload window ended" % (time.time() - window_end))
    plane.wait()


@check("upload.expired-window", clauses=["CRAWLER-UPLOAD-5", "CRAWLER-CAP-8"], level="MUST",
       title="a result PUT is not presented once the upload window has run out (D7)",
       fakes="a 10 s window; a 4 MB source and the harness's normaliser pinned (a result of known size); "
             "the node is paused (SIGSTOP) as soon as it has reaped its child, and resumed (SIGCONT) after "
             "the window ended",
       expected="no PUT at all; {\"code\":\"CRAWLER_UPLOAD_CAPABILITY_EXPIRED\",\"status\":\"failed\"}, "
                "exit 1")
def _(ctx):
    # pid1=False: SIGSTOP/SIGCONT on the init of a PID namespace are subject to
    # the kernel's protection of init, which is not what this check is about;
    # a plain child is paused and resumed exactly when the harness says.
    source = bulky_csv(min(BULKY_SOURCE_BYTES, docs.MAX_CRAWLER_RESULT_BYTES // 2))  # a deployed bound may be lower
    for attempt in range(1, PAUSE_ATTEMPTS + 1):
        plane = ctx.plane(url_expires_s=SHORT_WINDOW_S, source=source, limits=bulky_limits(),
                          child=crawler_child.reference_behaviour())
        if _pause_after_child(ctx, plane) is not None:
            break
        ctx.note("attempt %d: the node had connected for its PUT before the pause; trying again" % attempt)
        plane.signal(signal.SIGCONT)
        plane.wait()
    else:
        raise RuntimeError("could not pause the node between its child's end and its PUT in %d attempts"
                           % PAUSE_ATTEMPTS)
    _resume_after_window(ctx, plane)
    ctx.expect(not plane.puts(), expected="no PUT: the window ended while the node was paused",
               actual=puts_summary(plane),
               diagnosis="check the window immediately before every PUT; with less than 1 s left, do not send it")
    expect_outcome(ctx, plane, CAPABILITY_EXPIRED, "failed", 1)


@check("upload.expired-window-bundle", clauses=["CRAWLER-UPLOAD-5", "CRAWLER-REPORT-2"], level="MUST",
       title="a failure bundle is not presented once the window has run out: an undelivered bundle",
       fakes="a 10 s window; the source never answers; the node is paused (SIGSTOP) in the fetch and "
             "resumed (SIGCONT) after the window ended, so its fetch deadline has passed too",
       expected="no PUT; {\"code\":\"CRAWLER_SOURCE_TIMEOUT\",\"status\":\"failed\"} (the bundle's code, "
                "undelivered), exit 1")
def _(ctx):
    # pid1=False, as upload.expired-window.
    plane = ctx.plane(url_expires_s=SHORT_WINDOW_S)
    plane.site.add_fault(faults.hang(), plane.site.source_match())
    plane.start(pid1=False)
    plane.stop_when(plane.site.started(), signum=signal.SIGSTOP, what="the source request", settle_s=SETTLE_S)
    _resume_after_window(ctx, plane)
    ctx.expect(not plane.puts(), expected="no PUT: the window ended while the node was paused",
               actual=puts_summary(plane),
               diagnosis="check the window immediately before every PUT, the failure bundle's too")
    expect_outcome(ctx, plane, "CRAWLER_SOURCE_TIMEOUT", "failed", 1)


@check("upload.deadline", clauses=["CRAWLER-UPLOAD-6", "CRAWLER-UPLOAD-4"], level="MUST",
       title="a PUT whose answer never completes ends at the upload timeout (elapsed, D9)",
       fakes="upload timeout 2 s; the store commits the result, then never answers / dribbles its "
             "answer one byte every 0.5 s",
       expected="UPLOAD_FAILED failed, exit 1, within 2 s + 4 s slack of the PUT; one PUT")
def _(ctx):
    variants = [("answer held", faults.accept_then_hang()),
                ("answer dribbled", faults.dribble(chunk_bytes=1, interval_s=DRIBBLE_INTERVAL_S))]

    def act(label, fault):
        plane = ctx.plane(timeouts={"upload": SHORT_DEADLINE_S})
        plane.store.add_fault(fault, Match(method="PUT"))
        plane.run()
        expect_outcome(ctx, plane, UPLOAD_FAILED, "failed", 1, label)
        expect_put_count(ctx, plane, 1, "variant %s" % label)
        took = plane.result.t_exit - plane.puts()[0].t_start
        bound = SHORT_DEADLINE_S + DEADLINE_SLACK_S
        ctx.expect(took <= bound, expected="exit within %.0f s of the PUT (variant %s)" % (bound, label),
                   actual="%.1f s" % took,
                   diagnosis="a per-read socket timeout never fires on a dribbled answer: bound the whole PUT")
    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- verified TLS (CRAWLER-UPLOAD-1)

@check("upload.tls-verified", clauses=["CRAWLER-UPLOAD-1"], level="MUST",
       title="the PUT goes only to a store whose certificate verifies",
       fakes="the store serves a self-signed certificate for its own name, trusted by nobody",
       expected="CRAWLER_UPLOAD_FAILED, failed, exit 1; the store never receives a request")
def _(ctx):
    # Arrange
    plane = ctx.plane(untrusted=("store",))
    # Act
    plane.run()
    # Assert
    expect_outcome(ctx, plane, "CRAWLER_UPLOAD_FAILED", "failed", 1)
    expect_untouched(ctx, plane, ("put",))


@check("upload.tls-hostname", clauses=["CRAWLER-UPLOAD-1"], level="MUST",
       title="the PUT goes only to a store whose certificate names the store's host",
       fakes="the store serves a certificate whose chain the node trusts but which names only "
             "misnamed.invalid",
       expected="CRAWLER_UPLOAD_FAILED, failed, exit 1; the store never receives a request")
def _(ctx):
    # Arrange
    plane = ctx.plane(misnamed=("store",))
    # Act
    plane.run()
    # Assert
    expect_outcome(ctx, plane, "CRAWLER_UPLOAD_FAILED", "failed", 1)
    expect_untouched(ctx, plane, ("put",))
