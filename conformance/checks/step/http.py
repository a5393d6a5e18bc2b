"""HTTP refusals: which answers are transient (1), permanent (10) or expired."""

import fnmatch

from conformance.checks import check
from conformance.checks.step._common import (
    Input, Match, csv_inputs, data_upload, expect_exit, expect_exit_unwaiting, expect_marker, faults, hold_input,
    is_data_key, on_data_event, on_event)


def _refusal(label, where, fault_kwargs, code, clauses=("STEP-HTTP-1",), why=""):
    @check("http.%s-%s" % (label, where), clauses=list(clauses), level="MUST",
           title="%s on the %s gives exit %d%s" % (label, "input GET" if where == "get" else "output POST",
                                                  code, " (%s)" % why if why else ""),
           fakes="the store answers the first %s with %s" % (
               "input GET" if where == "get" else "upload of the node's own objects", fault_kwargs),
           expected="exit %d; failed marker" % code)
    def _(ctx):
        plane = ctx.step_plane(inputs=csv_inputs(1))
        match = Match(method="GET", key="inputs/*") if where == "get" else data_upload()
        plane.store.add_fault(faults.status(**fault_kwargs), match)
        plane.run()
        if where == "post":
            plane.skip_unless_own_uploads()
        expect_exit(ctx, plane, code, why or "classification table")
        expect_marker(ctx, plane, "failed", code)


_refusal("slowdown", "get", dict(code=503, s3_code="SlowDown", retry_after_s=1), 1)
_refusal("slowdown", "post", dict(code=503, s3_code="SlowDown", retry_after_s=1), 1)
_refusal("internal-error", "post", dict(code=500, s3_code="InternalError"), 1)
_refusal("too-many-requests", "get", dict(code=429), 1)
_refusal("request-timeout", "post", dict(code=400, s3_code="RequestTimeout"), 1)
_refusal("no-such-key", "get", dict(code=404, s3_code="NoSuchKey"), 10)
_refusal("forbidden-empty", "get", dict(code=403, body=b""), 10, why="403 with no code is not credentials")
_refusal("conflict", "post", dict(code=409, body=b""), 10)
_refusal("bad-request", "post", dict(code=400, body=b""), 10, why="400 with no code")
_refusal("access-denied", "post", dict(code=403, s3_code="AccessDenied"), 1,
         clauses=("STEP-HTTP-2",), why="expired-looking, envelope unchanged: D15")
_refusal("unauthorized", "get", dict(code=401, body=b""), 1,
         clauses=("STEP-HTTP-2",), why="401 is credential-class: D8")


@check("http.unauthorized-rotated", clauses=["STEP-HTTP-2", "STEP-CREDS-4"], level="MUST",
       title="a 401 after a rotation is retried once with the new envelope (D8)",
       fakes="once input 2 is read the agent rotates (old token still valid); the node's next upload of its "
             "own objects is answered 401, no body",
       expected="exit 0; that object POSTed twice, the second time with the new envelope")
def _(ctx):
    items = csv_inputs(2)
    plane = ctx.step_plane(inputs=items)
    held = hold_input(plane, items[1], phase="response")
    plane.start()
    if plane.store.wait_for(held, 30):
        plane.agent.rotate(expire_old=False)
        # From now on: every earlier upload has ended, so this is the next one.
        plane.store.add_fault(faults.status(401, body=b""), data_upload(first=1))
    plane.wait()
    plane.skip_unless_own_uploads()
    expect_exit(ctx, plane, 0, "the retry succeeds")
    refused = [ex for ex in plane.collector.data_posts() if ex.status == 401]
    ctx.expect(len(refused) == 1, expected="one upload refused 401", actual="%d" % len(refused),
               diagnosis="no upload of the node's own objects followed the rotation, so the 401 had nothing to "
                         "refuse: publish what the work makes from the inputs" if not refused else
                         "the store refuses one upload 401: what else was refused 401 the node sent with a stale "
                         "token; re-read the envelope after a 401")
    again = plane.exchanges("POST", key=refused[0].key)
    ctx.expect(len(again) == 2 and again[1].notes.get("token_seq") == 2,
               expected="that object POSTed twice, the second time with token #2",
               actual="%d POST(s), tokens %s" % (len(again), [ex.notes.get("token_seq") for ex in again]),
               diagnosis="a 401 is credential-class (D8): re-read the envelope at once and, when it changed, repeat "
                         "that upload once with the new token")


# The error body the store sends before going silent: a node that reads at
# most 4 KiB of it (STEP-HTTP-5) has all it wants; one that reads on waits
# for bytes that never come, until its read timeout ends the run as transient.
LONG_CODE_SENT_BYTES = 5 * 1024


@check("http.long-code", clauses=["STEP-HTTP-5", "STEP-HTTP-1"], level="MUST",
       title="a huge error body is read only in part and classified by status",
       fakes="the input GET is answered 404 with a <Code> of 100 characters; 5 KiB of the body arrive, its "
             "Content-Length promises far more, and the connection then stays silent",
       expected="exit 10, without waiting for the rest of the body")
def _(ctx):
    head = b"<Error><Code>" + b"C" * 100 + b"</Code>"
    body = head + b"x" * (LONG_CODE_SENT_BYTES - len(head))
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.status(404, body=body, endless=True), Match(method="GET", key="inputs/*"))
    plane.run()
    expect_exit_unwaiting(ctx, plane, (plane.job.input_gets() or [None])[0], 10, "404 is permanent",
                          diagnosis="read at most 4096 bytes of an error body: this one never ends, so a "
                                    "node that reads it whole waits for its read timeout")
    expect_marker(ctx, plane, "failed", 10)


@check("http.reset-get", clauses=["STEP-HTTP-3"], level="MUST",
       title="a connection reset mid-download is transient",
       fakes="the store resets the input GET after 8 KiB", expected="exit 1; failed marker")
def _(ctx):
    plane = ctx.step_plane(inputs=[Input("a.bin", bytes(1 << 20))])
    plane.store.add_fault(faults.reset(after_bytes=8192), Match(method="GET", key="inputs/*"))
    plane.run()
    expect_exit(ctx, plane, 1, "a network error is transient")
    expect_marker(ctx, plane, "failed", 1)


@check("http.connection-refused", clauses=["STEP-HTTP-3"], level="MUST",
       title="a refused connection is transient",
       fakes="the input's get_url names a loopback port with no listener", expected="exit 1; failed marker")
def _(ctx):
    import socket
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    plane = ctx.step_plane(inputs=[Input("x.csv", b"1\n", url="http://127.0.0.1:%d/x.csv?X-Amz-Signature=CANARYrefused" % port)])
    plane.extra_secrets.append("CANARYrefused")
    plane.run()
    expect_exit(ctx, plane, 1, "a network error is transient")
    expect_marker(ctx, plane, "failed", 1)


@check("http.user-agent", clauses=["STEP-HTTP-4"], level="SHOULD",
       title="every request carries one User-Agent naming the step",
       fakes="a healthy run", expected="the same non-empty User-Agent on every request")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(2))
    plane.run()
    agents = {dict((k.lower(), v) for k, v in ex.headers).get("user-agent") for ex in plane.store.transcript}
    ctx.expect(len(agents) == 1 and all(a and a.strip() for a in agents),
               expected="one non-empty User-Agent, the same on every request",
               actual="%s" % sorted(str(a) for a in agents),
               diagnosis="send the step's own User-Agent on every request, so the store's operators know who calls")


# ---- every store fault at every phase where it can occur --------------------
#
# A phase is one kind of request the node makes; each fault is applied to the
# first request of that phase only. The expected exit code follows the
# refusal classes (STEP-HTTP-1..3), except at the marker, whose fate never
# changes the code already decided (STEP-MARKER-3).

PHASES = {
    # name: (method, key glob relative to the plane, clause of the phase);
    # the output phase is every upload of the node's own objects (data_upload).
    "manifest": ("GET", "jobs/*", "STEP-MANIFEST-3"),
    "input": ("GET", "inputs/*", "STEP-INPUT-2"),
    "output": ("POST", None, "STEP-OUTPUT-6"),
    "result": ("POST", "*/result.json", "STEP-RESULT-4"),
    "marker": ("POST", "*/__lspo_complete.json", "STEP-MARKER-3"),
}


def _phase_match(which, key, **match):
    """The Match of a phase's requests (`key` is the glob, None for output)."""
    if which == "output":
        return data_upload(**match)
    return Match(method=PHASES[which][0], key=key, **match)


def _phase_event(which, kind, key):
    return on_data_event(kind) if which == "output" else on_event(kind, key)


def _in_phase(which, ex, key):
    if which == "output":
        return ex.method == "POST" and is_data_key(ex.key)
    return ex.method == PHASES[which][0] and fnmatch.fnmatchcase(ex.key or "", key)

# Fault label -> (how to arrange it, exit code outside the marker phase, clauses)
#   "status": a fault answer; "expire": the token is refused from this request
#   on, with (rotate=True) or without a new envelope behind it.
FAULTS = {
    "slowdown": (("status", dict(code=503, s3_code="SlowDown", retry_after_s=1)), 1, ["STEP-HTTP-1"]),
    "throttled": (("status", dict(code=429, s3_code="TooManyRequests", retry_after_s=1)), 1, ["STEP-HTTP-1"]),
    "reset": (("reset", dict(after_bytes=64)), 1, ["STEP-HTTP-3"]),
    # Small chunks: a 204 answer is about 300 bytes and must really arrive in pieces.
    "dribble": (("dribble", dict(chunk_bytes=16, interval_s=0.005)), 0, ["STEP-HTTP-3"]),
    "expired": (("expire", dict(rotate=False)), 1, ["STEP-CREDS-4", "STEP-HTTP-2"]),
    "expired-rotated": (("expire", dict(rotate=True)), 0, ["STEP-CREDS-4", "STEP-HTTP-2"]),
}

# Covered by a check of their own elsewhere.
ALREADY_CHECKED = {("input", "slowdown"), ("input", "reset"), ("input", "expired"),
                   ("input", "expired-rotated"), ("output", "slowdown")}


def _phase_check(phase, label):
    method, key_glob, phase_clause = PHASES[phase]
    (kind, params), code, clauses = FAULTS[label]
    if phase == "marker":
        code, clauses = 0, clauses + ["STEP-MARKER-3"]
    else:
        clauses = clauses + [phase_clause]

    @check("fault.%s.%s" % (phase, label), clauses=clauses, level="MUST",
           title="%s on the first %s request gives exit %d" % (label, phase, code),
           fakes="%s applied to the first %s %s" % (label, method, phase),
           expected="exit %d%s" % (code, "; the marker's fate changes no code" if phase == "marker" else ""))
    def _(ctx):
        items = [Input("a.csv", b"1,2\n" * 200)]
        plane = ctx.step_plane(inputs=items)
        key = plane.job.manifest_key if phase == "manifest" else key_glob
        if kind == "expire":
            # Hold the request before the store looks at its token, and refuse
            # the token meanwhile: the node's envelope went stale under it.
            plane.store.add_fault(faults.delay(0.4), _phase_match(phase, key, first=1, phase="request"))
            plane.start()
            if plane.wait_event(_phase_event(phase, "key" if method == "POST" else "request", key), 30):
                if params["rotate"]:
                    plane.agent.rotate(expire_old=True)
                else:
                    plane.store.expire_token(plane.agent.token)
            plane.wait()
        else:
            plane.store.add_fault(getattr(faults, kind)(**params), _phase_match(phase, key, first=1))
            plane.run()
        if phase == "output":
            plane.skip_unless_own_uploads()
        expect_exit(ctx, plane, code, "%s during the %s" % (label, phase))
        if phase != "marker" and code and label != "expired":  # dead credentials write no marker
            expect_marker(ctx, plane, "failed", code)
        if label == "expired-rotated":
            sent = [ex for ex in plane.store.transcript if _in_phase(phase, ex, key)]
            if phase == "output":  # only the refused object's own uploads
                sent = [ex for ex in sent if ex.key == sent[0].key]
            ctx.expect(len(sent) == 2, expected="the refused request repeated once, with the new envelope",
                       actual="%d request(s)" % len(sent),
                       diagnosis="after an expired-looking refusal, re-read the envelope and, when it changed, repeat "
                                 "exactly the refused request once with it")


for _phase in PHASES:
    for _label in FAULTS:
        if (_phase, _label) not in ALREADY_CHECKED:
            _phase_check(_phase, _label)
