"""HTTP refusals: which answers are transient (1), permanent (10) or expired."""

from conformance.checks import check
from conformance.checks.step._common import (
    Input, Match, csv_inputs, expect_exit, expect_marker, faults, on_event)


def _refusal(label, where, fault_kwargs, code, clauses=("STEP-HTTP-1",), why=""):
    method, key_glob = {"get": ("GET", "inputs/*"), "post": ("POST", "*outputs/*")}[where]

    @check("http.%s-%s" % (label, where), clauses=list(clauses), level="MUST",
           title="%s on the %s gives exit %d%s" % (label, "input GET" if where == "get" else "output POST",
                                                  code, " (%s)" % why if why else ""),
           fakes="the store answers the first %s with %s" % (method, fault_kwargs),
           expected="exit %d; failed marker" % code)
    def _(ctx):
        plane = ctx.step_plane(inputs=csv_inputs(1))
        plane.store.add_fault(faults.status(**fault_kwargs), Match(method=method, key=key_glob))
        plane.run()
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
       fakes="after input 1 the agent rotates (old token still valid); input 2's POST is answered 401, no body",
       expected="exit 0; two POSTs of input 2's output")
def _(ctx):
    items = csv_inputs(2)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.delay(0.5), Match(method="POST", key="*outputs/" + items[0].relpath,
                                                    phase="response"))
    plane.store.add_fault(faults.status(401, body=b""), Match(method="POST", key="*outputs/" + items[1].relpath,
                                                             first=1))
    plane.start()
    if plane.store.wait_for(on_event("commit", "*outputs/" + items[0].relpath), 30):
        plane.rotate(expire_old=False)
    plane.wait()
    expect_exit(ctx, plane, 0, "the retry succeeds")
    ctx.expect(len(plane.posts("outputs/" + items[1].relpath)) == 2, expected="two POSTs",
               actual="%d" % len(plane.posts("outputs/" + items[1].relpath)))


@check("http.long-code", clauses=["STEP-HTTP-5", "STEP-HTTP-1"], level="MUST",
       title="a huge error body is read only in part and classified by status",
       fakes="the input GET is answered 404 with a 4 MiB body whose <Code> is 100 characters",
       expected="exit 10; the node read at most a few KiB of the body")
def _(ctx):
    body = b"<Error><Code>" + b"C" * 100 + b"</Code>" + b"x" * (4 << 20) + b"</Error>"
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.status(404, body=body), Match(method="GET", key="inputs/*"))
    plane.run()
    expect_exit(ctx, plane, 10, "404 is permanent")
    ex = plane.input_gets()[0]
    ctx.expect(ex.resp_bytes < (4 << 20), expected="the node hung up before the whole error body",
               actual="%d bytes sent" % ex.resp_bytes, diagnosis="read at most 4096 bytes of an error body")


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
       title="every request carries the lspo-hello-node User-Agent",
       fakes="a healthy run", expected="User-Agent starting 'lspo-hello-node/' on every request")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(2))
    plane.run()
    agents = {dict((k.lower(), v) for k, v in ex.headers).get("user-agent") for ex in plane.store.transcript}
    ctx.expect(agents and all((a or "").startswith("lspo-hello-node/") for a in agents),
               expected="User-Agent lspo-hello-node/...", actual="%s" % sorted(str(a) for a in agents))
