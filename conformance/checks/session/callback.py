"""Callbacks: the verbs on the wire, the allowlist of paths, headers, fenced bodies, answers, the
whole-exchange deadline, and connections kept between calls (SESSION-CALLBACK-1..8, D16, D29, D53).

Every capability call is a fenced command to the control plane: the path names the verb and the
attempt, the body repeats the fence binding so that the server can refuse a stale owner, and the
headers carry the capability and a key an idempotency store can honour. The lease's
`allowed_callback_paths` is what confines the capability (D16), so a verb outside it is never
sent. A control plane that answers slowly, or drips its answer one byte at a time, must not hold
the node past one bounded exchange: a per-read timeout never fires on a drip.
"""

import signal
import time

from conformance.checks import check
from conformance.checks.session._common import (SCHEDULE_SLACK_S, STOP_BUDGET_S, capability_calls, describe_run,
                                                each_variant, expect_report, expect_summary, faults, refusal)
from conformance.planes.session.control import TEMPLATES, canonical

# SESSION-CALLBACK-6: the node's own bounds, which do not scale (D33).
CALLBACK_TIMEOUT_S = 10.0
EVENTS_TIMEOUT_S = 2.0
# A drip: one byte of the answer (status line included) every DRIP_INTERVAL_S. Each read
# returns well within any per-read timeout, and the whole answer would take minutes.
DRIP_BYTES = 1
DRIP_INTERVAL_S = 0.2
# A path the control plane serves its producer callbacks under (callback_base_url's path, D16).
CALLBACK_PREFIX = "/studio/producer-api"
# A success answer past MAX_CONTROL_RESPONSE_BYTES (1 MiB).
OVERSIZE_EXTRA_BYTES = 2 * 1024 * 1024
# A refusal whose body is past MAX_ERROR_BODY_BYTES (4 KiB) and never ends: its Content-Length
# promises more than is sent. A node that reads at most 4 KiB has all it reads at once; one that
# reads the whole body waits for the exchange's deadline. "At once" is judged against half of it.
ENDLESS_ERROR_BODY = b'{"code":"STUDIO_UNAVAILABLE","detail":"' + b"x" * 6000 + b'"}'
REFUSAL_READ_S = CALLBACK_TIMEOUT_S / 2
ROWS = [["Oslo", 3], ["Lima", 19]]


def _session_with_probe(ctx, **options):
    """A plane with one source whose acquisition is read once before it is ready, and a probe of it."""
    plane = ctx.plane(**options)
    source = plane.add_source(columns=["city", "temp"], rows=ROWS, ready_after_reads=1)
    probe_id = plane.probe("sample_rows", source, limit=5)
    return plane, source, probe_id


def _run_probe(plane, probe_id):
    plane.start()
    plane.wait_report(probe_id)
    plane.close_session()
    plane.wait()


@check("callback.verbs", clauses=["SESSION-CALLBACK-1"], level="MUST",
       title="every capability call uses its verb's method and path on callback_base_url, with no query",
       fakes="callback_base_url carries a path (%s); one probe whose acquisition is pending for one read"
             % CALLBACK_PREFIX,
       expected="start, heartbeat, append, claim, result, acquisition create and read, each with the table's "
                "method and path under callback_base_url, the lease's, probe's and acquisition's ids in them")
def _(ctx):
    # Arrange
    plane, _source, probe_id = _session_with_probe(ctx, callback_prefix=CALLBACK_PREFIX)
    # Act
    _run_probe(plane, probe_id)
    # Assert
    expect_report(ctx, plane, probe_id, "succeeded")
    attempt_id = plane.control.lease["attempt_id"]
    acquisitions = [a.crawler_session_id for a in plane.control.acquisitions()]
    wrong = []
    for call in capability_calls(plane) + [c for c in plane.control.calls() if c.verb == "other"]:
        if call.verb not in TEMPLATES:
            wrong.append("%s %s (no verb of the table)" % (call.method, call.path))
            continue
        method, template, _status = TEMPLATES[call.verb]
        ids = dict(call.ids, attempt_id=attempt_id)
        path = CALLBACK_PREFIX + template.format(**ids)
        if call.method != method or call.path != path or call.ids.get("attempt_id") != attempt_id:
            wrong.append("%s %s (expected %s %s)" % (call.method, call.path, method, path))
        elif call.verb == "report" and call.ids["probe_id"] != probe_id:
            wrong.append("a result path for probe %s" % call.ids["probe_id"])
        elif call.verb == "read" and call.ids["crawler_session_id"] not in acquisitions:
            wrong.append("a read of %s, no acquisition's id" % call.ids["crawler_session_id"])
    ctx.expect(not wrong, expected="each call at callback_base_url + its verb's template, no query",
               actual=lambda: "; ".join(wrong[:4]),
               diagnosis="the callbacks go to callback_base_url (path included) followed by the table's "
                         "template, with the lease's attempt id and the ids the control plane handed out")
    seen = set(call.verb for call in capability_calls(plane))
    missing = [verb for verb in TEMPLATES if verb not in seen]
    ctx.expect(not missing, expected="every verb of the table used in a session with one pending acquisition",
               actual="never sent: %s" % ", ".join(missing),
               diagnosis="a session with a probe whose acquisition is pending uses all seven verbs")


@check("callback.allowed-paths", clauses=["SESSION-CALLBACK-2"], level="MUST",
       title="a verb whose path the lease does not allow is never sent",
       fakes="allowed_callback_paths without the heartbeat template; without the event-append template; "
             "without both acquisition templates",
       expected="no heartbeat; no append; no acquisition request and the probe failed "
                "PROBE_SOURCE_CHANNEL_UNAVAILABLE; the session otherwise goes on and closes normally")
def _(ctx):
    every = [template for _method, template, _status in TEMPLATES.values()]
    variants = [("no heartbeat template", ("heartbeat",)), ("no event-append template", ("append",)),
                ("no acquisition templates", ("acquire", "read"))]

    def act(label, dropped):
        # Arrange
        plane = ctx.plane(allowed_paths=[t for t in every if t not in [TEMPLATES[v][1] for v in dropped]])
        source = plane.add_source(columns=["city", "temp"], rows=ROWS)
        probe_id = plane.probe("sample_rows", source, limit=5)
        # Act: enough claims (0.1 s apart) to span several heartbeat intervals (0.2 s)
        plane.start()
        plane.wait_report(probe_id)
        plane.wait_claims(8)
        plane.close_session()
        plane.wait()
        # Assert
        sent = [call.verb for call in plane.control.calls() if call.verb in dropped]
        ctx.expect(not sent, expected="no %s request (variant %s)" % (" or ".join(dropped), label),
                   actual="%d sent" % len(sent),
                   diagnosis="before every capability call the node checks that the verb's template is in "
                             "allowed_callback_paths; one that is not is never sent")
        if "acquire" in dropped:
            expect_report(ctx, plane, probe_id, "failed", "PROBE_SOURCE_CHANNEL_UNAVAILABLE", what="the probe")
        else:
            expect_report(ctx, plane, probe_id, "succeeded", what="the probe")
        expect_summary(ctx, plane, terminal_state="closed", variant=label)
    each_variant(ctx, variants, act)


@check("callback.headers", clauses=["SESSION-CALLBACK-3"], level="MUST",
       title="each capability call carries exactly its headers",
       fakes="a session with one probe whose acquisition is pending for one read",
       expected="Authorization: Bearer <capability>, Accept: application/json, the verb's Idempotency-Key (none "
                "on an acquisition read), Content-Type: application/json and an exact Content-Length with a "
                "body; no Cookie")
def _(ctx):
    # Arrange
    plane, _source, probe_id = _session_with_probe(ctx)
    # Act
    _run_probe(plane, probe_id)
    # Assert
    wrong = []
    for call in capability_calls(plane):
        problems = list(call.header_problems)
        if call.body_total and call.header("content-length") != str(call.body_total):
            problems.append("Content-Length %s for a body of %d bytes" % (call.header("content-length"),
                                                                        call.body_total))
        if problems:
            wrong.append("%s: %s" % (call.verb, ", ".join(problems)))
    ctx.expect(not wrong, expected="every capability call with exactly the headers of SESSION-CALLBACK-3",
               actual=lambda: "; ".join(wrong[:4]),
               diagnosis="a capability call carries the capability, Accept, its Idempotency-Key (none on a read), "
                         "and with a body its Content-Type and exact Content-Length")
    verbs = set(call.verb for call in capability_calls(plane))
    ctx.expect({"read", "report", "acquire"} <= verbs, expected="the probe acquired, read and reported",
               actual=lambda: describe_run(plane), diagnosis="the run never reached the verbs this check judges")


@check("callback.fence-binding", clauses=["SESSION-CALLBACK-4"], level="MUST",
       title="every command body is canonical JSON repeating the lease's binding, never generation",
       fakes="a lease with fence 41 and generation 9; one probe",
       expected="start and heartbeat bodies byte-equal to the canonical binding, claim and acquisition bodies "
                "to it plus their keys, report and events carrying it unchanged, none with generation")
def _(ctx):
    # Arrange
    plane, source, probe_id = _session_with_probe(ctx, fence=41, generation=9)
    # Act
    _run_probe(plane, probe_id)
    # Assert
    lease = plane.control.lease
    binding = dict((k, lease[k]) for k in ("workspace_id", "run_id", "attempt_id", "fence"))
    binding["schema_version"] = "3.0.0"
    expected = {"start": canonical(binding), "heartbeat": canonical(binding),
                "claim": canonical(dict(binding, session_id=lease["session_id"])),
                "acquire": canonical(dict(binding, session_id=lease["session_id"], source_id=source.source_id))}
    wrong = []
    for call in capability_calls(plane):
        if call.verb in expected and call.body != expected[call.verb]:
            wrong.append("%s body %r, expected %r" % (call.verb, call.body[:200], expected[call.verb][:200]))
        elif call.verb in ("report", "append"):
            docs = call.doc if isinstance(call.doc, list) else [call.doc]
            if not call.canonical:
                wrong.append("%s body not canonical JSON" % call.verb)
            for doc in docs:
                if not isinstance(doc, dict) or any(doc.get(k) != v for k, v in binding.items()) \
                        or "generation" in doc:
                    wrong.append("%s body does not repeat the binding unchanged (or carries generation)"
                                 % call.verb)
    ctx.expect(not wrong, expected="every body the canonical encoding of its document, with the lease's binding",
               actual=lambda: "; ".join(wrong[:3]),
               diagnosis="each command body repeats schema_version, workspace_id, run_id, attempt_id and fence "
                         "exactly as leased, canonically encoded, and never sends generation")
    expect_report(ctx, plane, probe_id, "succeeded")


@check("callback.refusals", clauses=["SESSION-CALLBACK-5"], level="MUST",
       title="another status is a refusal named by its code; an unusable success is CONTROL_PLANE_RESPONSE_INVALID",
       fakes="attempt:start answered 202, 302 (to the tripwire), 503 with a code, "
             "200 with a body past 1 MiB, or 503 with a body past 4 KiB that never ends",
       expected="the session ends with CONTROL_PLANE_HTTP_202, CONTROL_PLANE_HTTP_302, the 503's code, "
                "CONTROL_PLANE_RESPONSE_INVALID; the redirect never followed; the "
                "endless refusal read no further than 4 KiB (the session ends within %.0f s)" % REFUSAL_READ_S)
def _(ctx):
    variants = [("202, not a success of the table", (lambda plane: faults.status(202), "CONTROL_PLANE_HTTP_202")),
                ("302 redirect", (lambda plane: faults.redirect("https://127.0.0.1:%d/" % plane.tripwire.port),
                                  "CONTROL_PLANE_HTTP_302")),
                ("503 with a code", (lambda plane: refusal(503, "STUDIO_UNAVAILABLE"), "STUDIO_UNAVAILABLE")),
                ("200 past 1 MiB", (lambda plane: faults.oversize(OVERSIZE_EXTRA_BYTES),
                                    "CONTROL_PLANE_RESPONSE_INVALID"))]

    def act(label, value):
        make, code = value
        plane = ctx.plane()
        plane.control.add_fault(make(plane), plane.control.start_match())
        plane.run()
        expect_summary(ctx, plane, failure_code=code, variant=label)
    each_variant(ctx, variants, act)

    def endless(label, _value):
        plane = ctx.plane()
        plane.control.add_fault(faults.status(503, body=ENDLESS_ERROR_BODY, endless=True),
                                plane.control.start_match())
        result = plane.run()
        took = result.t_exit - plane.control.calls("start")[0].t
        ctx.expect(result.exit_code == 1 and took <= REFUSAL_READ_S,
                   expected="the session failed within %.1f s of attempt:start (variant %s)" % (REFUSAL_READ_S, label),
                   actual=lambda: "%.2f s; %s" % (took, describe_run(plane)),
                   diagnosis="of a refusal's body at most MAX_ERROR_BODY_BYTES are read: the code is all the node "
                             "wants, and a body that never ends must not hold it")
    each_variant(ctx, [("503 with an endless body past 4 KiB", None)], endless)


@check("callback.deadline", clauses=["SESSION-CALLBACK-6"], level="MUST",
       title="a control plane that drips its answer is cut off at CALLBACK_TIMEOUT_S (takes about 10 s)",
       fakes="attempt:start answered one byte every %.1f s, status line included" % DRIP_INTERVAL_S,
       expected="the session ends CONTROL_PLANE_UNREACHABLE, the node gone within %.0f s of the request (plus "
                "1 s and the machine's slack)" % CALLBACK_TIMEOUT_S)
def _(ctx):
    # Arrange
    plane = ctx.plane()
    plane.control.add_fault(faults.dribble(DRIP_BYTES, DRIP_INTERVAL_S), plane.control.start_match())
    # Act
    result = plane.run()
    # Assert
    expect_summary(ctx, plane, failure_code="CONTROL_PLANE_UNREACHABLE")
    start = plane.control.calls("start")[0]
    took = result.t_exit - start.t
    bound = CALLBACK_TIMEOUT_S + STOP_BUDGET_S + SCHEDULE_SLACK_S
    ctx.expect(took <= bound, expected="exit within %.2f s of attempt:start's arrival" % bound,
               actual="%.2f s" % took,
               diagnosis="one exchange, connect to last byte, is bounded by CALLBACK_TIMEOUT_S; a per-read "
                         "timeout never fires on an answer that drips")


@check("callback.append-deadline", clauses=["SESSION-CALLBACK-6"], level="MUST",
       title="an event append is cut off at EVENTS_TIMEOUT_S",
       fakes="the attempt_started append answered one byte every %.1f s" % DRIP_INTERVAL_S,
       expected="the first claim within %.0f s of the append's arrival (plus the machine's slack)"
                % EVENTS_TIMEOUT_S)
def _(ctx):
    # Arrange
    plane = ctx.plane()
    plane.control.add_fault(faults.dribble(DRIP_BYTES, DRIP_INTERVAL_S), plane.control.events_match(first=1))
    # Act
    plane.start()
    plane.wait_claims(1)
    plane.close_session()
    plane.wait()
    # Assert
    append, claim = plane.control.calls("append")[0], plane.control.claims()[0]
    took = claim.t - append.t
    bound = EVENTS_TIMEOUT_S + SCHEDULE_SLACK_S
    ctx.expect(took <= bound, expected="the first claim within %.2f s of the dripped append" % bound,
               actual="%.2f s" % took,
               diagnosis="an event append is bounded by EVENTS_TIMEOUT_S, not CALLBACK_TIMEOUT_S: it sits in the "
                         "path of every probe")
    expect_summary(ctx, plane, terminal_state="closed")


# SESSION-CALLBACK-7, -8: the claim interval of these runs (the contract's own second, so that an
# answer's resend "at once" and a failed claim's backoff, half the interval at least, stay apart).
KEEP_CLAIM_S = 1.0
# SESSION-CALLBACK-7: the claims counted, and the most full TLS handshakes the control plane may see
# for all of the run: the entry request's (its own connection), the claim loop's first and the
# heartbeat's first (each may find the other's connection busy). A node that connects per call
# pays one per claim and per beat.
KEEP_CLAIMS = 5
KEEP_MAX_FULL_HANDSHAKES = 3
# How long after a claim's answer the SIGTERM comes: the node waits out its claim interval.
IN_THE_WAIT_S = 0.3
# SESSION-CALLBACK-8: the claims each run waits for, and the server's idle close (well inside the
# interval).
RECONNECT_CLAIMS = 4
IDLE_CLOSE_S = 0.2
# No heartbeat within these runs: a beat between two claims would keep the claim's connection from
# ever idling IDLE_CLOSE_S, and the idle close would test nothing.
RECONNECT_HEARTBEAT_S = 60.0
RECONNECT_VARIANTS = [
    ("the server closes every idle connection after %.1f s" % IDLE_CLOSE_S,
     lambda plane: setattr(plane.control.server, "idle_close_s", IDLE_CLOSE_S)),
    ("every answer says Connection: close", lambda plane: setattr(plane.control.server, "close_after_each", True)),
]


@check("callback.keep-alive", clauses=["SESSION-CALLBACK-7", "SESSION-STOP-2"], level="SHOULD",
       title="an idle session's claims and heartbeats share kept connections; a SIGTERM during the kept-alive wait "
             "ends it at once",
       fakes="no probe; claim interval %.0f s; a SIGTERM %.1f s after the %dth claim's answer"
             % (KEEP_CLAIM_S, IN_THE_WAIT_S, KEEP_CLAIMS),
       expected="at most %d full TLS handshakes on the control plane for the whole run; the last claim's connection "
                "open at the signal; exit within 1 s of it" % KEEP_MAX_FULL_HANDSHAKES)
def _(ctx):
    # Arrange
    plane = ctx.plane(claim_poll_s=KEEP_CLAIM_S)
    server = plane.control.server
    plane.start()

    def in_the_wait():
        claims = plane.control.claims()
        last = claims[KEEP_CLAIMS - 1].exchange if len(claims) >= KEEP_CLAIMS else None
        return last is not None and last.t_end is not None and time.monotonic() >= last.t_end + IN_THE_WAIT_S
    # Act
    t_signal = plane.stop_when(in_the_wait, signal.SIGTERM, what="the wait after the %dth claim" % KEEP_CLAIMS)
    last = plane.control.claims()[KEEP_CLAIMS - 1].exchange
    kept = [r for r in server.connections if r.conn_id == last.conn_id and (r.t_closed is None or r.t_closed > t_signal)]
    plane.wait()
    # Assert
    full, resumed = server.handshakes()
    calls = plane.control.calls()
    ctx.note("%d calls on %d connection(s): %d full TLS handshake(s), %d resumed" % (
        len(calls), len(server.connections), full, resumed))
    ctx.expect(full <= KEEP_MAX_FULL_HANDSHAKES,
               expected="at most %d full TLS handshakes for %d calls" % (KEEP_MAX_FULL_HANDSHAKES, len(calls)),
               actual="%d full, %d resumed, on %d connection(s)" % (full, resumed, len(server.connections)),
               diagnosis="keep a connection whose answer was read to its end (HTTP/1.1, no Connection: close) for "
                         "the next capability call, and resume the TLS session on a new one (D53)")
    ctx.expect(bool(kept), expected="the last claim's connection kept open during the wait",
               actual="closed before the signal", diagnosis="keep the connection between claims (D53)")
    took = plane.result.t_exit - t_signal if plane.result.t_exit is not None else None
    ctx.expect(not plane.result.timed_out and took is not None and took <= STOP_BUDGET_S + SCHEDULE_SLACK_S,
               expected="exit within %.1f s of the SIGTERM (+%.2f s slack) with a connection kept open"
                        % (STOP_BUDGET_S, SCHEDULE_SLACK_S),
               actual="still running (killed)" if took is None or plane.result.timed_out else "%.2f s" % took,
               diagnosis="never wait on a kept connection: the wait between claims is the stop's to end")


@check("callback.reconnect", clauses=["SESSION-CALLBACK-8", "SESSION-CALLBACK-7"], level="MUST",
       title="a connection the control plane closed (idle, or after a Connection: close answer) costs only a "
             "reconnect",
       fakes="no probe; claim interval %.0f s; one run each: the server closes idle connections after %.1f s; "
             "answers Connection: close" % (KEEP_CLAIM_S, IDLE_CLOSE_S),
       expected="%d claims, each under its own Idempotency-Key (none failed and was sent again); no request sent "
                "on a connection after the server closed it" % RECONNECT_CLAIMS)
def _(ctx):
    def act(label, arrange):
        # Arrange
        plane = ctx.plane(claim_poll_s=KEEP_CLAIM_S, heartbeat_s=RECONNECT_HEARTBEAT_S)
        arrange(plane)
        # Act
        plane.start()
        plane.wait_claims(RECONNECT_CLAIMS)
        plane.signal(signal.SIGTERM)
        plane.wait()
        # Assert
        claims = plane.control.claims()
        keys = [c.key for c in claims]
        again = sorted(set(k for k in keys if keys.count(k) > 1))
        late = [r for r in plane.control.server.connections if r.sent_after_close]
        ctx.expect(not late,
                   expected="%s: no request on a connection the server had closed" % label,
                   actual="%d connection(s) carried bytes after the server's close" % len(late),
                   diagnosis="check a kept connection before sending on it: readable means the server closed it "
                             "(D53)")
        ctx.expect(not again,
                   expected="%s: every claim under its own key: none failed" % label,
                   actual="keys sent more than once: %s" % again,
                   diagnosis="check a kept connection before sending on it: readable means the server closed it "
                             "(D53)")

    each_variant(ctx, RECONNECT_VARIANTS, act)
