"""Service mode: the rollback path that serves sessions one at a time over HTTP.

With no argument the node listens on PORT (SESSION-SERVICE-1), takes `POST /sessions:start`
with an exact, bounded body (SESSION-SERVICE-2), holds at most one live session
(SESSION-SERVICE-3), runs each in a fresh interpreter that receives the start document, nonce
included, only through an inherited descriptor (SESSION-SERVICE-4: the nonce never sits in an
argv or an environment a process listing shows), leases it with the nonce
(SESSION-SERVICE-5), writes each session's own summary (SESSION-SERVICE-6, D19), and exits when
idle for the grace or when stopped (SESSION-SERVICE-7). The plane's service helpers post the
requests; the grace is lowered through env so an idle exit takes a second or two.
"""

import http.client
import os
import time

from conformance.checks import check
from conformance.checks.session._common import (
    DRAIN_BUDGET_S, SCHEDULE_SLACK_S, STOP_BUDGET_S, capability_calls, describe_run, each_variant,
    expect_code_line, faults, lease_patch, refusal)
from conformance.planes.session import OMIT
from conformance.planes.session.control import canonical
from conformance.runner import descendants, read_cmdline, read_environ

GRACE = "MR_SESSION_WORKER_SHUTDOWN_GRACE_SECONDS"
BOOTSTRAP_FLAG = "--legacy-bootstrap-fd"
LIVE_BODY = canonical({"role": "session", "status": "live"})
NOT_FOUND_BODY = canonical({"code": "NOT_FOUND"})
BUSY_DOC = {"code": "SESSION_WORKER_BUSY", "detail": "this instance already holds a live session"}
MAX_START_REQUEST_BYTES = 8192
# A workspace id no plane serves (SESSION-SERVICE-5: the lease must be the start's).
OTHER_WORKSPACE = "0f0e0d0c-0b0a-4908-8706-050403020100"
# A lease nonce with a marker no answer may repeat (SESSION-SERVICE-2: the detail repeats nothing).
NONCE_MARKER = "CANARYNONCE"
# SESSION-SERVICE-3: "at once": a loopback answer that spawns nothing and asks nobody.
BUSY_ANSWER_S = 1.0
# SESSION-SERVICE-7: the idle grace the idle check gives the Service (long enough to post a start on
# a loaded machine once the listener is up), and its bound: the grace plus 1 s.
IDLE_GRACE_S = 2.0
IDLE_EXIT_BOUND_S = 1.0


def _serve(ctx, env=None, **options):
    """A plane and a Service listening on its PORT."""
    plane = ctx.plane(**options)
    plane.start(mode="service", env=env)
    plane.wait_listening()
    return plane


def _wait_summaries(plane, n, what):
    """Wait until the Service has written n summary lines."""
    plane.wait_for(lambda: len(plane.summaries()) >= n, what)
    return plane.summaries()


def _stop(plane):
    """SIGTERM the Service and wait for its exit."""
    plane.signal()
    return plane.wait()


def _expect_answer(ctx, answer, status, body, what):
    """An answer of the Service: this status and canonical body, JSON, an exact length, no-store."""
    headers = dict((k.lower(), v) for k, v in answer.headers)
    ok = (answer.status == status and answer.raw == body and headers.get("content-type") == "application/json"
          and headers.get("content-length") == str(len(answer.raw)) and headers.get("cache-control") == "no-store")
    ctx.expect(ok, expected="%s: %d %r with Content-Type application/json, an exact Content-Length, Cache-Control "
                            "no-store" % (what, status, body),
               actual="%d %r, headers %s" % (answer.status, answer.raw[:200], answer.headers),
               diagnosis="every Service answer is canonical JSON, exactly framed and never cached")


@check("service.health", clauses=["SESSION-SERVICE-1"], level="MUST",
       title="/livez and /healthz answer live before and during a session; anything else is 404 NOT_FOUND",
       fakes="a Service with no session, then with a live one; GET /livez, /healthz, /nope; POST /livez",
       expected="200 {\"role\":\"session\",\"status\":\"live\"} for both health paths, before and during the session; "
                "404 {\"code\":\"NOT_FOUND\"} otherwise; each answer application/json, exactly framed, no-store")
def _(ctx):
    plane = _serve(ctx)
    for path in ("/livez", "/healthz"):
        _expect_answer(ctx, plane.service_request("GET", path), 200, LIVE_BODY, "GET %s before a session" % path)
    _expect_answer(ctx, plane.service_request("GET", "/nope"), 404, NOT_FOUND_BODY, "GET /nope")
    _expect_answer(ctx, plane.service_request("POST", "/livez", b"{}"), 404, NOT_FOUND_BODY, "POST /livez")
    started = plane.start_session()
    ctx.expect(started.status == 202, expected="202 for a valid start", actual=repr(started),
               diagnosis="a valid start body starts a session")
    plane.wait_claims(1)
    for path in ("/livez", "/healthz"):
        _expect_answer(ctx, plane.service_request("GET", path), 200, LIVE_BODY, "GET %s during a session" % path)
    plane.close_session()
    _wait_summaries(plane, 1, "the session's summary")
    result = _stop(plane)
    ctx.expect(result.exit_code == 0, expected="exit 0 after a stop", actual=describe_run(plane),
               diagnosis="a Service that stopped exits 0")


@check("service.start-body", clauses=["SESSION-SERVICE-2"], level="MUST",
       title="a start body must be exact and bounded; each fault has its code and a detail that repeats nothing",
       fakes="one Service; starts with Content-Length 'twelve', 8193 (no body sent), -1, no body; bodies that "
             "are not JSON, an array, with an extra key, schema_version 3.0.1, an upper-case session id, a "
             "workspace id that is no UUID, a nonce of 31, 129, non-ASCII or dotted characters, no lease_url, "
             "another lease_url; then a valid start",
       expected="400 SESSION_START_INVALID, 413 SESSION_START_TOO_LARGE (length over 8192 or negative) and 400 "
                "SESSION_LEASE_URL_UNRECOGNIZED, each {code, detail} without the nonce; no request to the control "
                "plane; the valid start 202")
def _(ctx):
    plane = _serve(ctx)
    plane.close_session()  # the valid start at the end runs to its first claim only
    nonce = NONCE_MARKER + "n" * 40
    origin = plane.control.origin

    def body(**fields):
        return canonical(plane.start_body(nonce, **fields))

    raw_length = [
        ("Content-Length not a number", (b"{}", "twelve"), 400, "SESSION_START_INVALID"),
        ("Content-Length over 8192", (b"", str(MAX_START_REQUEST_BYTES + 1)), 413, "SESSION_START_TOO_LARGE"),
        ("Content-Length -1", (b"", "-1"), 413, "SESSION_START_TOO_LARGE"),
    ]
    bodies = [
        ("no body", None, 400, "SESSION_START_INVALID"),
        ("not JSON", b"start " + nonce.encode(), 400, "SESSION_START_INVALID"),
        ("an array", b"[" + body() + b"]", 400, "SESSION_START_INVALID"),
        ("an extra key", body(priority=1), 400, "SESSION_START_INVALID"),
        ("duplicate keys", body()[:-1] + b',"session_id":"x"}', 400, "SESSION_START_INVALID"),
        ("schema_version 3.0.1", body(schema_version="3.0.1"), 400, "SESSION_START_INVALID"),
        ("session_id in upper case", body(session_id=plane.control.binding["session_id"].upper()), 400,
         "SESSION_START_INVALID"),
        ("workspace_id not a UUID", body(workspace_id="workspace-1"), 400, "SESSION_START_INVALID"),
        ("nonce of 31 characters", canonical(plane.start_body(NONCE_MARKER + "n" * 20)), 400,
         "SESSION_START_INVALID"),
        ("nonce of 129 characters", canonical(plane.start_body(NONCE_MARKER + "n" * 118)), 400,
         "SESSION_START_INVALID"),
        ("nonce not ASCII", canonical(plane.start_body(NONCE_MARKER + "\u00e9" * 30)), 400, "SESSION_START_INVALID"),
        ("nonce with a dot", canonical(plane.start_body(NONCE_MARKER + "." + "n" * 30)), 400,
         "SESSION_START_INVALID"),
        ("lease_url missing", body(lease_url=OMIT), 400, "SESSION_START_INVALID"),
        ("lease_url of another origin",
         body(lease_url=plane.control.lease_url.replace(origin, "https://studio.invalid")),
         400, "SESSION_LEASE_URL_UNRECOGNIZED"),
    ]
    cases = [(label, ("length", value, status, code)) for label, value, status, code in raw_length]
    cases += [(label, ("body", value, status, code)) for label, value, status, code in bodies]

    def act(label, value):
        kind, payload, status, code = value
        headers = [("Content-Type", "application/json")]
        headers += [("Content-Length", payload[1])] if kind == "length" else []
        try:
            answer = plane.service_request("POST", "/sessions:start", payload[0] if kind == "length" else payload,
                                           headers)
        except (http.client.HTTPException, OSError) as exc:
            ctx.fail(expected="%d {code %s, detail} (variant %s)" % (status, code, label),
                     actual="no answer: %s" % type(exc).__name__,
                     diagnosis="every start body gets an answer; a fault of the body must not break the handler")
        doc = answer.doc if isinstance(answer.doc, dict) else {}
        ctx.expect(answer.status == status and sorted(doc) == ["code", "detail"] and doc.get("code") == code,
                   expected="%d {code %s, detail} (variant %s)" % (status, code, label),
                   actual="%d %r" % (answer.status, answer.raw[:200]),
                   diagnosis="each fault of the start body has its status and code")
        ctx.expect(NONCE_MARKER.encode() not in answer.raw, expected="an answer without the nonce (variant %s)" % label,
                   actual="the answer repeats the nonce", diagnosis="the detail repeats nothing of the body")

    # One Service answers every variant: an invalid start starts nothing (each_variant's planes stay as they are).
    each_variant(ctx, cases, act)
    sent = plane.control.calls() + plane.metadata.requests()
    ctx.expect(not sent, expected="no request to the control plane or the metadata server",
               actual="%d request(s)" % len(sent), diagnosis="an invalid start is refused before any lease")
    answer = plane.start_session()
    ctx.expect(answer.status == 202, expected="202 for the valid start after the refusals", actual=repr(answer),
               diagnosis="refusals leave the instance free")
    _wait_summaries(plane, 1, "the session's summary")
    _stop(plane)


@check("service.busy", clauses=["SESSION-SERVICE-3"], level="MUST",
       title="while a session is live a second start is 409 SESSION_WORKER_BUSY at once",
       fakes="one Service; a session started and claiming; a second valid start (the plane's control plane serves "
             "one session, so a start after it would only lease again)",
       expected="409 {\"code\":\"SESSION_WORKER_BUSY\",\"detail\":\"this instance already holds a live session\"} "
                "within %.1f s and no second lease request" % BUSY_ANSWER_S)
def _(ctx):
    plane = _serve(ctx)
    first = plane.start_session()
    ctx.expect(first.status == 202, expected="202 for the first start", actual=repr(first),
               diagnosis="a valid start on an idle instance starts a session")
    plane.wait_claims(1)
    asked = time.monotonic()
    second = plane.start_session()
    took = time.monotonic() - asked
    ctx.expect(second.status == 409 and second.doc == BUSY_DOC and took <= BUSY_ANSWER_S,
               expected="409 %s within %.1f s" % (BUSY_DOC, BUSY_ANSWER_S),
               actual="%d %r after %.2f s" % (second.status, second.raw[:200], took),
               diagnosis="one live session per instance: the platform places the next on another instance")
    leases = plane.control.calls("lease")
    ctx.expect(len(leases) == 1, expected="one lease request while busy", actual="%d" % len(leases),
               diagnosis="a busy answer asks the control plane nothing and discards the nonce")
    plane.close_session()
    _wait_summaries(plane, 1, "the first session's summary")
    _stop(plane)


@check("service.fresh-interpreter", clauses=["SESSION-SERVICE-4"], level="MUST",
       title="each session runs in a fresh interpreter of its own session, and no nonce is in its argv or "
             "environment",
       fakes="a Service; a valid start; the session's process looked at while it claims",
       expected="202 {\"accepted\":true,\"session_id\":<id>}; a process [python, -I, -S, <node file>, "
                "--legacy-bootstrap-fd, <fd>] that leads its own session; the nonce in no argv or environment")
def _(ctx):
    plane = _serve(ctx)
    nonce = plane.control.lease_nonce
    answer = plane.start_session()
    wanted = canonical({"accepted": True, "session_id": plane.control.binding["session_id"]})
    ctx.expect(answer.status == 202 and answer.raw == wanted, expected="202 %r" % wanted, actual=repr(answer),
               diagnosis="the Service answers 202 once the session process says it is ready")
    plane.wait_claims(1)
    found = []
    for pid in descendants(plane.proc.host_pid):
        argv = read_cmdline(pid)
        if argv and BOOTSTRAP_FLAG in argv:
            try:
                found.append((pid, argv, os.getsid(pid), read_environ(pid) or {}))
            except OSError:
                pass
    ctx.expect(len(found) >= 1, expected="a session process started with %s" % BOOTSTRAP_FLAG,
               actual="processes %s" % [read_cmdline(pid) for pid in descendants(plane.proc.host_pid)][:4],
               diagnosis="each session runs in a fresh interpreter, never a fork of the threaded server")
    node = os.path.realpath(ctx.node.path) if ctx.node.path else None
    for pid, argv, sid, environ in found:
        shape = (len(argv) == 6 and argv[1:3] == ["-I", "-S"] and argv[4] == BOOTSTRAP_FLAG and argv[5].isdigit()
                 and (node is None or os.path.realpath(argv[3]) == node))
        ctx.expect(shape and sid == pid,
                   expected="argv [python, -I, -S, <node file>, %s, <fd>] in a session of its own" % BOOTSTRAP_FLAG,
                   actual="pid %d argv %r, session %d" % (pid, argv, sid),
                   diagnosis="the session process is a fresh, isolated interpreter leading its own session")
        leaks = [where for where, text in (("argv", "\0".join(argv)),
                                           ("environment", "\0".join("%s=%s" % kv for kv in environ.items())))
                 if nonce in text]
        ctx.expect(not leaks, expected="no nonce in the session process's argv or environment",
                   actual="the nonce is in its %s" % " and ".join(leaks),
                   diagnosis="the start document reaches the session only through the inherited descriptor")
    plane.close_session()
    _wait_summaries(plane, 1, "the session's summary")
    _stop(plane)


@check("service.lease", clauses=["SESSION-SERVICE-5"], level="MUST",
       title="the session process leases with the nonce, once, for the lease audience, and checks the lease is "
             "the start's",
       fakes="a Service whose lease audience (MR_SESSION_WORKER_LEASE_AUDIENCE) is not the origin; a valid start; "
             "then, one per Service: a lease for another workspace, a lease refused 409 with a code, a lease "
             "refused 500 with HTML",
       expected="one identity request for the lease audience; one POST to <origin>/internal/v3/session-worker/"
                "sessions/{id}:lease with the identity token, exact headers and the canonical body with the nonce; "
                "attempt:start follows; SESSION_LEASE_MISMATCH, the refusal's code, SESSION_LEASE_FAILED in the "
                "summary, with no capability call")
def _(ctx):
    plane = ctx.plane()
    plane.control.lease_audience = plane.control.origin + "/session-lease"
    plane.start(mode="service")
    plane.wait_listening()
    plane.start_session()
    plane.wait_claims(1)
    plane.close_session()
    _wait_summaries(plane, 1, "the session's summary")
    _stop(plane)
    asked = [r.audience for r in plane.metadata.requests()]
    ctx.expect(asked == [plane.control.lease_audience],
               expected="one identity request for %s" % plane.control.lease_audience, actual="audiences %s" % asked,
               diagnosis="the legacy lease's token is minted for the lease audience (SESSION-CONFIG-3)")
    leases = plane.control.calls("lease")
    call = leases[0] if leases else None
    ok = (len(leases) == 1 and call.status == 200 and call.bearer == "identity" and call.canonical
          and not call.header_problems and call.path == "/internal/v3/session-worker/sessions/%s:lease"
          % plane.control.binding["session_id"])
    ctx.expect(ok, expected="one legacy lease request answered 200: the identity token, exact headers, the canonical "
                            "body with this session's nonce",
               actual=lambda: "%d lease request(s): %r" % (len(leases), call),
               diagnosis="the lease request carries the nonce in its canonical body, once, to the origin's lease URL")
    ctx.expect(any(c.verb == "start" for c in capability_calls(plane)), expected="attempt:start after the lease",
               actual=lambda: describe_run(plane), diagnosis="from admission on the session runs as in Job mode")

    def act(label, value):
        options, fault, code = value
        plane = ctx.plane(**options)
        if fault is not None:
            plane.control.add_fault(fault, plane.control.lease_match())
        plane.start(mode="service")
        plane.wait_listening()
        plane.start_session()
        summary = _wait_summaries(plane, 1, "the session's summary")[0]
        _stop(plane)
        ctx.expect(summary["failure_code"] == code and not capability_calls(plane),
                   expected="a summary with failure_code %s and no capability call (variant %s)" % (code, label),
                   actual=lambda: "summary %s; %s" % (summary, describe_run(plane)),
                   diagnosis="a lease for another session is refused; a refusal carries its code, or "
                             "SESSION_LEASE_FAILED")

    each_variant(ctx, [
        ("a lease for another workspace", ({"lease_patch": lease_patch(workspace_id=OTHER_WORKSPACE)},
                                           None, "SESSION_LEASE_MISMATCH")),
        ("refused with a code", ({}, refusal(409, "RESEARCH_SESSION_DISPATCH_CLOSED"),
                                 "RESEARCH_SESSION_DISPATCH_CLOSED")),
        ("refused with HTML", ({}, faults.status(500, body=b"<html>unavailable</html>"), "SESSION_LEASE_FAILED")),
    ], act)


@check("service.summary", clauses=["SESSION-SERVICE-6"], level="MUST",
       title="the Service writes each session's own summary, its failure code included, and nothing else",
       fakes="a Service; a session whose attempt:start is refused 409 ATTEMPT_STALE; then a stop",
       expected="one stdout line: the session's summary with failure_code ATTEMPT_STALE (not "
                "SESSION_LEGACY_PROCESS_FAILED); exit 0 after the stop")
def _(ctx):
    plane = ctx.plane()
    plane.control.add_fault(refusal(409, "ATTEMPT_STALE"), plane.control.start_match())
    plane.start(mode="service")
    plane.wait_listening()
    plane.start_session()
    _wait_summaries(plane, 1, "the session's summary")
    result = _stop(plane)
    summaries = plane.summaries()
    ctx.expect(len(summaries) == 1 and plane.summary_problem() is None
               and summaries[0]["failure_code"] == "ATTEMPT_STALE"
               and summaries[0]["session_id"] == plane.control.binding["session_id"] and result.exit_code == 0,
               expected="exactly one stdout line, the session's summary with failure_code ATTEMPT_STALE; exit 0",
               actual=lambda: "stdout %r (%s); exit %s" % (result.stdout[-300:], plane.summary_problem() or "ok",
                                                          result.exit_code),
               diagnosis="the session process's own summary is written (D19): its code says what went wrong")


@check("service.idle-exit", clauses=["SESSION-SERVICE-7"], level="MUST",
       title="an idle Service exits 0 after the grace, counted from its start and from each session's end; a "
             "configuration error exits 1 before it listens",
       fakes="a Service with a grace of %.0f s and no session; then one whose only session closes at once; then "
             "one with PORT 0" % IDLE_GRACE_S,
       expected="exit 0 within the grace + 1 s of its start, and of the session's summary (not before the grace); "
                "SESSION_WORKER_CONFIG_INVALID, exit 1, nothing listening")
def _(ctx):
    env = {GRACE: "%g" % IDLE_GRACE_S}
    plane = ctx.plane()
    plane.start(mode="service", env=env)
    result = plane.wait()
    ctx.expect(result.exit_code == 0 and result.wall_s <= IDLE_GRACE_S + IDLE_EXIT_BOUND_S + SCHEDULE_SLACK_S,
               expected="exit 0 within %.1f s of its start" % (IDLE_GRACE_S + IDLE_EXIT_BOUND_S),
               actual="exit %s after %.2f s" % (result.exit_code, result.wall_s),
               diagnosis="with no session for the grace the Service scales to zero")
    plane = _serve(ctx, env=env)
    plane.close_session()
    plane.start_session()
    _wait_summaries(plane, 1, "the session's summary")
    result = plane.wait()
    said = [t for t, line in result.stdout_lines if line.strip()]
    idle = result.t_exit - said[-1] if said else None
    ctx.expect(result.exit_code == 0 and idle is not None
               and IDLE_GRACE_S - SCHEDULE_SLACK_S <= idle <= IDLE_GRACE_S + IDLE_EXIT_BOUND_S + SCHEDULE_SLACK_S,
               expected="exit 0 between %.1f s and %.1f s after the session's end" % (
                   IDLE_GRACE_S, IDLE_GRACE_S + IDLE_EXIT_BOUND_S),
               actual="exit %s, %s" % (result.exit_code, "%.2f s after the summary" % idle if idle is not None
                                       else "no summary"),
               diagnosis="the idle clock starts again at each session's end")
    ctx.note("variant: PORT 0 in Service mode")
    plane = ctx.plane()
    plane.run(mode="service", env={"PORT": "0"})
    expect_code_line(ctx, plane.result, "SESSION_WORKER_CONFIG_INVALID", 1, "PORT 0")


@check("service.stop", clauses=["SESSION-SERVICE-7"], level="MUST",
       title="a stop closes the listener, stops the live session, writes its summary and exits 0",
       fakes="a Service with a session claiming (the control plane answers at once); SIGTERM",
       expected="exit 0 within %.2f s of the signal; the session's summary service_stopped on stdout; no "
                "connection accepted after the exit" % (STOP_BUDGET_S + SCHEDULE_SLACK_S))
def _(ctx):
    plane = _serve(ctx)
    plane.start_session()
    plane.wait_claims(1)
    sent = plane.signal()
    result = plane.wait()
    took = result.t_exit - sent
    summaries = plane.summaries()
    ctx.expect(result.exit_code == 0 and took <= STOP_BUDGET_S + SCHEDULE_SLACK_S and len(summaries) == 1
               and summaries[0]["terminal_state"] == "service_stopped",
               expected="exit 0 within %.2f s of SIGTERM with one summary, service_stopped" % (
                   STOP_BUDGET_S + SCHEDULE_SLACK_S),
               actual="exit %s after %.2f s; summaries %s" % (result.exit_code, took, summaries),
               diagnosis="a stop reaches the live session, which drains as in Job mode, then the Service exits 0 "
                         "(at most STOP_GRACE_S + 1 s = %.0f s when the control plane stalls)" % DRAIN_BUDGET_S)
    try:
        plane.service_request("GET", "/livez", timeout=STOP_BUDGET_S)
        listening = True
    except OSError:
        listening = False
    ctx.expect(not listening, expected="nothing listening on PORT after the stop", actual="a listener answered",
               diagnosis="a stop closes the listening socket at once")
