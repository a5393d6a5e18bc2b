"""Transport: verified TLS on every connection, exact request framing, a whole deadline per
exchange, bounded and strict answers, error answers decided by their status, no redirect
followed, connections kept alive, and a connection the server closed costing only a reconnect
(SCAN-HTTP-1 to SCAN-HTTP-8).

Every request carries the bearer token, so each transport habit is a security boundary: a
certificate that does not verify must stop the request before a byte of it leaves, a redirect must
not carry the token to another origin, and the worker must be able to give up on a server that
answers one byte at a time or without end, instead of holding a slot (or its memory) for ever.
"""

import json
import signal
import time

from conformance import faults
from conformance.checks import check
from conformance.checks.scan import stop as _stop
from conformance.checks.scan._common import (PHASE_TIMEOUT_S, SCHEDULE_SLACK_S, answered_at, describe_run,
                                             each_variant, live_stdout)
from conformance.planes.scan import deploy as _deploy
from conformance.servers import LoopbackServer, Reply

NETWORK_LINE = "worker slot 0: worker network operation failed"
PROTOCOL_LINE = "worker slot 0: worker protocol or state validation failed"
# SCAN-HTTP-1: TLS attempts the worker must make (and fail) before the check looks.
TLS_ATTEMPTS = 2
# SCAN-HTTP-2: the header names a status read, a JSON request carry (lowercase, sorted).
STATUS_HEADERS = ["accept-encoding", "authorization", "host"]
JSON_HEADERS = ["accept-encoding", "authorization", "content-length", "content-type", "host"]
# SCAN-HTTP-3: the deadline under test, and a dribble slow enough that a status document (a few
# hundred bytes) would take a minute to arrive whole.
HTTP_TIMEOUT_S = 1
DRIBBLE_CHUNK_BYTES, DRIBBLE_INTERVAL_S = 1, 0.2
# The check's error delay: the step's retry comes at most this long after the abandonment.
ERROR_DELAY_S = 0.5
# SCAN-HTTP-4: an endless body's size (what a worker that reads it whole would hold) against the
# peak memory a bounded reader stays far below. MAX_API_RESPONSE_BYTES is MAX_PENDING_BYTES (D30).
ENDLESS_BYTES = 256 * 1048576
PEAK_RSS_BOUND_BYTES = 96 * 1048576
# SCAN-RECONCILE-6 via SCAN-HTTP-5: the error delay of the 404 check, long enough that a status read
# "at once" cannot be its retry (half of it is the least a failed step waits).
RECONCILE_DELAY_S = 4.0
AT_ONCE_S = 1.5

# SCAN-HTTP-4: success bodies no worker may take (label, body of the first status answer).
BAD_BODIES = [
    ("not JSON", b"<html>status MARKER</html>"),
    ("a JSON array", b"[1, 2, 3]"),
    ("invalid UTF-8", b'{"state": "scanning\xff\xfe"}'),
    ("a duplicate key", b'{"state": "scanning", "state": "resolved"}'),
    ("NaN", b'{"state": NaN}'),
    # a status a worker would act on, were it not one byte over the bound in force (D30)
    ("over MAX_API_RESPONSE_BYTES",
     lambda: b'{"pad": "' + b"x" * _deploy.MAX_PENDING_BYTES + b'", "state": "scanning"}'),
]


@check("http.untrusted", clauses=["SCAN-HTTP-1"], level="MUST",
       title="a server certificate that does not verify fails the request before any byte of it is sent",
       fakes="the scan server serves a certificate no CA in SSL_CERT_FILE signed; every proxy variable names the "
             "tripwire",
       expected="TLS connections to the server but no request received; the worker prints the network line, "
                "tries again, never falls back to plain HTTP")
def _(ctx):
    # Arrange
    plane = ctx.plane(untrusted=True)
    # Act
    life = plane.start()
    plane.wait_ready(life)
    plane.wait_for(lambda: len(plane.server.server.connections) >= TLS_ATTEMPTS, "%d TLS attempts" % TLS_ATTEMPTS)
    plane.wait_for(lambda: NETWORK_LINE in live_stdout(life), "the network line")
    plane.stop(signal.SIGINT)  # a stop: a drain would wait its bound for the claim in hand
    # Assert
    ctx.expect(not plane.server.server.transcript,
               expected="no request received over a connection whose certificate did not verify",
               actual="%d request(s): %s" % (len(plane.server.server.transcript), describe_run(plane)),
               diagnosis="verify the certificate and the host name (ssl.create_default_context) before sending")


@check("http.framing", clauses=["SCAN-HTTP-2"], level="MUST",
       title="JSON requests carry exactly Host, Authorization, Content-Type, Content-Length, Accept-Encoding; the "
             "status read no body",
       fakes="two assignments: one scanned and uploaded, one the worker cannot run (an unknown source: a terminal "
             "report)",
       expected="claims, progress events and the report: exactly the five headers, canonical bodies, no chunked "
                "encoding; status reads: Host, Authorization, Accept-Encoding only, no body")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    served = plane.add_assignment()
    refused = plane.add_assignment(source="nosuch")
    # Act
    plane.start()
    plane.wait_resolved(served)
    plane.wait_resolved(refused)
    plane.wait_for(lambda: plane.server.progress_events(), "a progress event")
    plane.stop()
    # Assert
    calls = plane.server.calls()
    verbs = set(call.verb for call in calls)
    ctx.expect({"claim", "status", "progress", "terminal", "bundle"} <= verbs,
               expected="every kind of request made", actual="verbs %s (%s)" % (sorted(verbs), describe_run(plane)),
               diagnosis="the run made fewer kinds of request than it needed (claim, status, progress, report, "
                         "upload): it ended or hung before the others")
    wrong = []
    for call in calls:
        names = sorted(name.lower() for name in call.header_names)
        if call.chunked:
            wrong.append((call, "chunked encoding"))
        if call.verb == "status":
            if names != STATUS_HEADERS or call.body_total:
                wrong.append((call, "headers %s, %d body bytes" % (", ".join(names), call.body_total)))
        elif call.verb in ("claim", "terminal"):
            wrong += [(call, problem) for problem in call.problems]
        elif call.verb == "progress":
            if names != JSON_HEADERS or call.header("content-type") != "application/json" or not call.canonical:
                wrong.append((call, "headers %s, canonical %s" % (", ".join(names), call.canonical)))
        if call.verb != "bundle" and "?" in call.path:
            wrong.append((call, "a query string"))
    ctx.expect(not wrong,
               expected="each request framed as SCAN-HTTP-2 says",
               actual="; ".join("%s %s: %s" % (c.method, c.path, why) for c, why in wrong[:4]),
               diagnosis="set exactly the contract's headers; send the canonical body with its Content-Length")


@check("http.deadline", clauses=["SCAN-HTTP-3"], level="MUST",
       title="an answer dribbled a byte at a time is abandoned at --http-timeout, and the step is retried",
       fakes="one assignment; --http-timeout 1; the first status answer is sent 1 byte every 0.2 s",
       expected="the next status read arrives within the deadline, plus the error delay, plus 1 s; the "
                "assignment is resolved")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    plane.server.add_fault(faults.dribble(DRIBBLE_CHUNK_BYTES, DRIBBLE_INTERVAL_S), plane.server.status_match(first=1))
    # Act
    plane.start(http_timeout_s=HTTP_TIMEOUT_S, error_delay_s=ERROR_DELAY_S)
    statuses = plane.wait_calls("status", 2, answered=False)
    plane.wait_resolved(res)
    plane.stop()
    # Assert
    gap = statuses[1].t - statuses[0].t
    bound = HTTP_TIMEOUT_S + ERROR_DELAY_S + SCHEDULE_SLACK_S
    ctx.expect(gap <= bound,
               expected="the dribbled status read abandoned at the deadline and retried within %.1f s" % bound,
               actual="the next status read came %.2f s after the first" % gap,
               diagnosis="bound the whole exchange (a watchdog that shuts the socket), not each socket read")


@check("http.bounded", clauses=["SCAN-HTTP-4"], level="MUST",
       title="a success body that is not a JSON object, or over its bound, is a protocol error; state kept",
       fakes="one assignment; its first status read is answered 200 with: not JSON, a JSON array, invalid UTF-8, "
             "a duplicate key, NaN, a status over MAX_API_RESPONSE_BYTES (one per run)",
       expected="the protocol line, then the same assignment goes on (the status read again) and is resolved")
def _(ctx):
    def act(label, body):
        # Arrange
        plane = ctx.plane()
        res = plane.add_assignment()
        plane.server.script("status", 200, body() if callable(body) else body, nth=1)
        # Act
        life = plane.start()
        plane.wait_resolved(res)
        lines = live_stdout(life)
        plane.stop()
        # Assert
        ctx.expect(PROTOCOL_LINE in lines,
                   expected="%s: %r" % (label, PROTOCOL_LINE),
                   actual="stdout %r" % lines[:4],
                   diagnosis="parse success bodies strictly; a body that is not a JSON object is a protocol error")
        ctx.expect(len(plane.server.granted()) == 1 and res.puts,
                   expected="%s: the same assignment kept and finished" % label,
                   actual=describe_run(plane),
                   diagnosis="a protocol error fails the step with the error delay; the state is kept")

    each_variant(ctx, BAD_BODIES, act)


@check("http.endless", clauses=["SCAN-HTTP-4"], level="MUST",
       title="a success body without end is cut at its bound: the request ends and memory stays low",
       fakes="one assignment; its first status answer has no Content-Length and 256 MiB after the document",
       expected="the worker retries the status read within the error delay and 1 s; the assignment is resolved; "
                "the worker's peak RSS stays under 96 MiB")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    plane.server.add_fault(faults.oversize(ENDLESS_BYTES, content_length="absent"), plane.server.status_match(first=1))
    # Act
    life = plane.start(error_delay_s=ERROR_DELAY_S)
    statuses = plane.wait_calls("status", 2, answered=False)
    plane.wait_resolved(res)
    lines = live_stdout(life)
    result = plane.stop()
    # Assert
    ctx.expect(PROTOCOL_LINE in lines,
               expected="the protocol line for a body over its bound", actual="stdout %r" % lines[:4],
               diagnosis="read at most the bound plus one byte, then refuse")
    gap = statuses[1].t - statuses[0].t
    bound = ERROR_DELAY_S + 2 * SCHEDULE_SLACK_S
    ctx.expect(gap <= bound,
               expected="the endless answer given up promptly: the next status read within %.1f s" % bound,
               actual="%.2f s later" % gap,
               diagnosis="stop reading at MAX_API_RESPONSE_BYTES + 1")
    ctx.expect(result.maxrss_bytes is not None and result.maxrss_bytes < PEAK_RSS_BOUND_BYTES,
               expected="peak RSS under %d MiB (the body was %d MiB)" % (PEAK_RSS_BOUND_BYTES >> 20,
                                                                          ENDLESS_BYTES >> 20),
               actual="%s bytes" % result.maxrss_bytes,
               diagnosis="never read an answer whole: bound every read")


@check("http.error-status", clauses=["SCAN-HTTP-5"], level="MUST",
       title="an upload answered 404 with an HTML body is reconciled like the server's own 404 (D7)",
       fakes="one assignment; its upload is answered 404 with an HTML page (not the error shape); error delay 4 s",
       expected="a status read of the reservation at once (< 1.5 s) after the 404; the reservation discarded as "
                "stale; no text of the body printed")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    page = ("<html><body>Not Found %s</body></html>" % plane.server.marker).encode("ascii")
    plane.server.add_fault(faults.status(404, body=page), plane.server.bundle_match(first=1))
    stale = "worker slot 0: reservation %d discarded as stale" % res.reservation_id
    # Act
    life = plane.start(error_delay_s=RECONCILE_DELAY_S)
    put = plane.wait_calls("bundle", 1)[0]
    plane.wait_for(lambda: stale in live_stdout(life), "the stale line")
    plane.stop()
    # Assert
    after = [call for call in plane.server.calls(reservation=res) if call.t > put.t and call.verb != "progress"]
    ctx.expect(after and after[0].verb == "status" and after[0].t - put.t < AT_ONCE_S,
               expected="a status read at once after the 404 (within %.1f s)" % AT_ONCE_S,
               actual="next: %s" % (("%s %.2f s later" % (after[0].verb, after[0].t - put.t)) if after else "nothing"),
               diagnosis="the status decides: a 404 on a mutation asks the server, whatever its body (D7)")


@check("http.no-redirect", clauses=["SCAN-HTTP-6", "SCAN-HTTP-5"], level="MUST",
       title="a 3xx answer is an error: nothing goes to its Location",
       fakes="one assignment; the first claim is answered 302 and the first upload 307, each with a Location at "
             "another HTTPS server on loopback",
       expected="the other server receives no connection; the worker prints `worker API request failed (HTTP 302)` "
                "and `(HTTP 307)`; the claim is retried at the origin and the assignment resolved")
def _(ctx):
    # Arrange
    elsewhere = LoopbackServer("elsewhere", tls=True)
    try:
        elsewhere.route("*", "/*", lambda req: Reply(200, b"{}", content_type="application/json"))
        plane = ctx.plane()
        res = plane.add_assignment()
        location = "https://127.0.0.1:%d" % elsewhere.port
        plane.server.add_fault(faults.redirect(location + "/api/v1/worker/claim", 302),
                               plane.server.claim_match(first=1))
        plane.server.add_fault(faults.redirect(location + "/upload", 307), plane.server.bundle_match(first=1))
        # Act
        life = plane.start()
        plane.wait_resolved(res)
        lines = live_stdout(life)
        plane.stop()
        touched = list(elsewhere.connections)
    finally:
        elsewhere.close()
    # Assert
    ctx.expect(not touched,
               expected="no connection to the Location of a 3xx",
               actual="%d connection(s) to it" % len(touched),
               diagnosis="never follow a redirect: the token must go to no other origin")
    wanted = ["worker slot 0: worker API request failed (HTTP %d)" % code for code in (302, 307)]
    missing = [line for line in wanted if line not in lines]
    ctx.expect(not missing,
               expected="the error lines %s" % wanted, actual="stdout %r" % lines[:6],
               diagnosis="a 3xx is an error answer like any other")


# SCAN-HTTP-3 for uploads (D27): a bundle big enough that the kernel's socket buffers cannot take it
# whole, so the worker is still sending while the server reads; the server reads its first
# PACED_BYTES at PACE_BYTES_PER_S (a slow link: the upload takes longer than --http-timeout as a
# whole) and the rest at once; or it stops reading after STALL_AFTER_BYTES.
UPLOAD_HTTP_TIMEOUT_S = 2
MOVING_BUNDLE_BYTES = 24 * 1048576
PACED_BYTES = 5 * 1048576
PACE_BYTES_PER_S = 1048576
STALL_AFTER_BYTES = 1048576
# How long the paced upload may take on a loaded machine: the pace, then hashing and sending the rest.
MOVING_UPLOAD_TIMEOUT_S = PACED_BYTES / PACE_BYTES_PER_S + 4 * PHASE_TIMEOUT_S


def _big_ready_bundle(plane, size):
    """A reservation whose ready bundle (adopted, its first PUT lost with a SIGKILL) is replaced by a
    valid one of about `size` bytes; returns (reservation, its state's bundle record)."""
    from conformance.checks.scan import upload as _upload
    res = plane.add_assignment(declared_bundle_bytes=2 * size)
    _life, state = _upload.ready_then_crash(plane, res)
    if state is None or state.get("phase") != "bundle_ready":
        plane.ctx.fail(expected="slot 0 in bundle_ready at the first PUT", actual="slot 0: %r" % (state,),
                       diagnosis="persist the slot as bundle_ready before the first upload of its bundle")
    with open(_upload.ready_file(plane, res), "rb") as handle:
        generation = json.loads(handle.readline().decode("ascii"))["generation"]
    return res, _upload.plant_bundle(plane, state, _upload.big_bundle_writer(res, generation, size))


@check("http.upload-moving", clauses=["SCAN-HTTP-3", "SCAN-UPLOAD-1"], level="MUST",
       title="an upload that takes longer than --http-timeout as a whole, but keeps moving, is not cut",
       fakes="a ready bundle of %d MiB (its first PUT lost with a SIGKILL); --http-timeout %d; the server reads the "
             "first %d MiB of the restart's PUT at %d MiB/s, the rest at once"
             % (MOVING_BUNDLE_BYTES >> 20, UPLOAD_HTTP_TIMEOUT_S, PACED_BYTES >> 20, PACE_BYTES_PER_S >> 20),
       expected="the first PUT after the restart lasts longer than --http-timeout and is accepted whole; no other "
                "PUT in that life")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res, record = _big_ready_bundle(plane, MOVING_BUNDLE_BYTES)
    plane.server.uploads.pace = (PACED_BYTES, PACE_BYTES_PER_S)
    # Act
    second = plane.restart(http_timeout_s=UPLOAD_HTTP_TIMEOUT_S)
    plane.wait_for(lambda: res.resolution is not None or len(plane.server.calls("bundle", res, second.t_start)) > 1,
                   "the paced upload's end", timeout=MOVING_UPLOAD_TIMEOUT_S)
    plane.stop()
    # Assert
    puts = plane.server.calls("bundle", res, second.t_start)
    took = (puts[0].exchange.t_end or puts[0].t) - puts[0].t if puts else 0.0
    ctx.expect(len(puts) == 1 and puts[0].accepted and res.payload_sha256 == record["payload_sha256"],
               expected="one PUT after the restart, accepted whole (the planted bundle)",
               actual=lambda: "%d PUT(s), first accepted %s, %.1f s; %s" % (
                   len(puts), puts[0].accepted if puts else None, took, describe_run(plane)),
               diagnosis="bound an upload by its progress: --http-timeout for each piece sent, never for the "
                         "whole body (D27)")
    ctx.expect(took > UPLOAD_HTTP_TIMEOUT_S,
               expected="the PUT took longer than --http-timeout (%d s), or this check proves nothing"
                        % UPLOAD_HTTP_TIMEOUT_S,
               actual="%.2f s" % took,
               diagnosis="the paced upload finished within --http-timeout, so this run shows nothing about the bound: "
                         "the harness's pacing did not hold; rerun the check")


@check("http.upload-stalled", clauses=["SCAN-HTTP-3", "SCAN-UPLOAD-5"], level="MUST",
       title="an upload whose bytes stop moving ends at --http-timeout and is retried",
       fakes="a ready bundle of %d MiB (its first PUT lost with a SIGKILL); --http-timeout %d; the server stops "
             "reading the restart's first PUT after %d MiB and never answers it"
             % (MOVING_BUNDLE_BYTES >> 20, UPLOAD_HTTP_TIMEOUT_S, STALL_AFTER_BYTES >> 20),
       expected="the next PUT arrives within --http-timeout, the error delay and the machine's slack of the "
                "first one's last byte received; it is accepted")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res, record = _big_ready_bundle(plane, MOVING_BUNDLE_BYTES)
    plane.server.add_fault(faults.stall(after_bytes=STALL_AFTER_BYTES), plane.server.bundle_match(res, first=1))
    # Act
    second = plane.restart(http_timeout_s=UPLOAD_HTTP_TIMEOUT_S, error_delay_s=ERROR_DELAY_S)
    puts = plane.wait_calls("bundle", 2, reservation=res, since=second.t_start, answered=False,
                            timeout=UPLOAD_HTTP_TIMEOUT_S + 3 * PHASE_TIMEOUT_S)
    plane.wait_resolved(res, timeout=3 * PHASE_TIMEOUT_S)
    plane.stop()
    # Assert
    first = puts[0].exchange
    last_byte = first.t_end if first.t_end is not None else puts[1].t
    gap = puts[1].t - first.t_start
    bound = UPLOAD_HTTP_TIMEOUT_S + ERROR_DELAY_S + 3 * SCHEDULE_SLACK_S
    ctx.note("stalled PUT began %.2f s before the next; its exchange ended %.2f s after it began"
             % (gap, last_byte - first.t_start))
    ctx.expect(gap <= bound,
               expected="the stalled PUT abandoned and the next one sent within %.1f s of its start" % bound,
               actual="%.2f s" % gap,
               diagnosis="a piece of the body not accepted within --http-timeout ends the upload (D27)")
    ctx.expect(res.resolution == "bundle_accepted" and res.payload_sha256 == record["payload_sha256"],
               expected="the retried PUT accepted", actual=lambda: describe_run(plane),
               diagnosis="retry an upload that ended without an answer with the same bundle, byte for byte, until it "
                         "is accepted")


# SCAN-HTTP-7: the idle polls counted (Retry-After 1 s: about one a second), and the most full TLS
# handshakes they may cost: the first connection's, and one more should the server's idle close
# race a poll. A worker that connects per exchange pays one per poll.
KEEP_POLLS = 5
KEEP_MAX_FULL_HANDSHAKES = 2
# How long after a 204's answer the SIGTERM comes: the worker is in its Retry-After wait.
IN_THE_WAIT_S = 0.3
# SCAN-HTTP-8: an error delay long enough that a poll that failed is seen as a gap; the most a gap
# between two polls may be when none failed (Retry-After 1 s, 1.1 with the jitter, the slack).
RECONNECT_ERROR_DELAY_S = 5.0
RECONNECT_POLLS = 4
RECONNECT_GAP_S = 1.1 + 2 * SCHEDULE_SLACK_S
# How soon the resend of a request whose kept connection was reset before its answer comes.
RESEND_AT_ONCE_S = 0.5
# The server's idle close in the first variant: well inside the Retry-After wait.
IDLE_CLOSE_S = 0.2


@check("http.keep-alive", clauses=["SCAN-HTTP-7", "SCAN-STOP-2"], level="SHOULD",
       title="an idle worker's polls share a kept connection; a SIGTERM during the kept-alive wait ends it at once",
       fakes="no work (every claim answered 204, Retry-After 1); a SIGTERM %.1f s after the %dth claim's answer"
             % (IN_THE_WAIT_S, KEEP_POLLS),
       expected="the %d claims cost at most %d full TLS handshakes; the last claim's connection still open at the "
                "signal; exit within 1 s of it" % (KEEP_POLLS, KEEP_MAX_FULL_HANDSHAKES))
def _(ctx):
    # Arrange
    plane = ctx.plane()
    server = plane.server.server
    # Act
    life = plane.start()
    plane.wait_ready(life)
    claims = plane.wait_claims(KEEP_POLLS)
    last = claims[KEEP_POLLS - 1].exchange
    plane.wait_for(lambda: last.t_end is not None, "the last claim's answer")
    while time.monotonic() < last.t_end + IN_THE_WAIT_S:
        time.sleep(0.02)
    kept = [r for r in server.connections if r.conn_id == last.conn_id and r.t_closed is None]
    result = life.stop(signal.SIGTERM, _stop.IDLE_EXIT_WAIT_S)
    # Assert
    full, resumed = server.handshakes()
    before = [r for r in server.connections if r.t_accept <= last.t_start]
    ctx.note("%d claims on %d connection(s): %d full TLS handshake(s), %d resumed" % (
        len(plane.server.calls("claim")), len(server.connections), full, resumed))
    ctx.expect(sum(1 for r in before if r.tls_resumed is False) <= KEEP_MAX_FULL_HANDSHAKES,
               expected="%d idle polls on at most %d full TLS handshakes" % (KEEP_POLLS, KEEP_MAX_FULL_HANDSHAKES),
               actual="%d connection(s), %d full handshake(s) for them" % (
                   len(before), sum(1 for r in before if r.tls_resumed is False)),
               diagnosis="keep a connection whose answer was read to its end (HTTP/1.1, no Connection: close) for "
                         "the next exchange, and resume the TLS session on a new one (D37)")
    ctx.expect(bool(kept), expected="the last claim's connection kept open during the wait",
               actual="closed before the signal", diagnosis="keep the connection between polls (D37)")
    latency = result.t_exit - result.signals[0][0] if result.t_exit is not None and result.signals else None
    ctx.expect(not result.timed_out and latency is not None and latency <= _stop.IDLE_DRAIN_S + SCHEDULE_SLACK_S,
               expected="exit within %.1f s of the SIGTERM (+%.1f s slack) with a connection kept open"
                        % (_stop.IDLE_DRAIN_S, SCHEDULE_SLACK_S),
               actual=result.describe() if latency is None else "%.2f s" % latency,
               diagnosis="never wait on a kept connection: the wait between polls is the stop's to end")


# SCAN-HTTP-8: how each run's server closes the worker's connections (label, what to set up).
RECONNECT_VARIANTS = [
    ("the server closes every idle connection after %.1f s" % IDLE_CLOSE_S,
     lambda plane: setattr(plane.server.server, "idle_close_s", IDLE_CLOSE_S)),
    ("every answer says Connection: close", lambda plane: setattr(plane.server.server, "close_after_each", True)),
    ("the third claim's kept connection is reset before its answer",
     lambda plane: plane.server.add_fault(faults.reset(0), plane.server.claim_match(skip=2, first=1, phase="request"))),
]


@check("http.reconnect", clauses=["SCAN-HTTP-8", "SCAN-HTTP-7"], level="MUST",
       title="a connection the server closed (idle, Connection: close, reset before the answer) costs only a "
             "reconnect",
       fakes="no work (204, Retry-After 1); error delay %.0f s; one run each: the server closes idle connections "
             "after %.1f s; answers Connection: close; resets the third claim's connection before its answer"
             % (RECONNECT_ERROR_DELAY_S, IDLE_CLOSE_S),
       expected="%d claims, each within %.1f s of the last answer (the reset one's resend within %.1f s, on a new "
                "connection); no network error line" % (RECONNECT_POLLS, RECONNECT_GAP_S, RESEND_AT_ONCE_S))
def _(ctx):
    def act(label, arrange):
        # Arrange
        plane = ctx.plane()
        arrange(plane)
        # Act
        life = plane.start(error_delay_s=RECONNECT_ERROR_DELAY_S)
        plane.wait_ready(life)
        plane.wait_calls("claim", RECONNECT_POLLS + (1 if "reset" in label else 0), answered=False)
        lines = live_stdout(life)
        plane.stop(signal.SIGINT)
        # Assert
        claims = plane.server.calls("claim")
        ctx.expect(NETWORK_LINE not in lines,
                   expected="%s: no network error line" % label, actual="stdout %r" % lines[:4],
                   diagnosis="check a kept connection before sending on it (readable means closed) and send a "
                             "request that got no answer byte once more on a new connection (D37)")
        late = [r for r in plane.server.server.connections if r.sent_after_close]
        ctx.expect(not late,
                   expected="%s: no request on a connection the server had closed" % label,
                   actual="%d connection(s) carried bytes after the server's close" % len(late),
                   diagnosis="check a kept connection before sending on it: readable means the server closed it "
                             "(D37)")
        gaps = ["%.2f" % (later.t - answered_at(earlier)) for earlier, later in zip(claims, claims[1:])]
        slow = [g for g in gaps if float(g) > RECONNECT_GAP_S]
        ctx.expect(not slow,
                   expected="%s: each claim within %.1f s of the last answer" % (label, RECONNECT_GAP_S),
                   actual="gaps %s" % ", ".join(gaps),
                   diagnosis="a closed connection costs a reconnect, never the error delay")
        if "reset" in label and len(claims) >= 4:
            reset, resend = claims[2], claims[3]
            ctx.expect(resend.t - answered_at(reset) <= RESEND_AT_ONCE_S
                       and resend.exchange.conn_id != reset.exchange.conn_id,
                       expected="the reset claim sent again on a new connection within %.1f s" % RESEND_AT_ONCE_S,
                       actual="%.2f s later, on %s connection" % (
                           resend.t - answered_at(reset),
                           "a new" if resend.exchange.conn_id != reset.exchange.conn_id else "the same"),
                       diagnosis="a request on a kept connection that got no answer byte goes once more, at once, "
                                 "on a new connection (D37)")

    each_variant(ctx, RECONNECT_VARIANTS, act)
