"""Secrets: no credential in any output; no traceback; URL userinfo removed too."""

from conformance.checks import check
from conformance.checks.step._common import (Input, Match, csv_inputs, expect_exit, faults)


def _leaks(plane, extra=()):
    texts = {"stdout": plane.result.stdout, "stderr": plane.result.stderr}
    found = []
    for where, text in texts.items():
        for secret in list(plane.secrets()) + list(extra):
            if secret in text:
                found.append("%s contains %s" % (where, plane.describe_secret(secret)))
    return found


@check("redact.error-paths", clauses=["STEP-REDACT-1"], level="MUST",
       title="no presigned query, token or policy value is printed on any failure path",
       fakes="a reset mid-download, then (second run) an upload refused 403 SignatureDoesNotMatch",
       expected="no credential value in stdout or stderr in either run")
def _(ctx):
    plane = ctx.step_plane(inputs=[Input("a.bin", bytes(1 << 20))])
    plane.store.add_fault(faults.reset(after_bytes=4096), Match(method="GET", key="inputs/*"))
    plane.run()
    leaks = _leaks(plane)
    second = ctx.step_plane(inputs=csv_inputs(1))
    second.store.add_fault(faults.status(403, s3_code="SignatureDoesNotMatch"), Match(method="POST"))
    second.run()
    leaks += _leaks(second)
    ctx.expect(not leaks, expected="no credential in output", actual="; ".join(leaks[:3]),
               diagnosis="redact every exception text and error body before printing it: HTTP libraries build "
                         "exception text from the URL, signed query included")


@check("redact.echoed-url", clauses=["STEP-REDACT-1"], level="MUST",
       title="an error body that echoes the presigned URL is redacted before it is printed",
       fakes="the input GET is answered 403 with a body (no <Code>) holding the full URL",
       expected="the URL's query never appears in output")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    url = plane.agent.envelope()["inputs"][0]["get_url"]
    plane.store.add_fault(faults.status(403, body=("denied " + url).encode()), Match(method="GET", key="inputs/*"))
    plane.run()
    query = url.split("?", 1)[1]
    leaks = _leaks(plane) + (["the query string"] if query[:40] in plane.result.stdout + plane.result.stderr else [])
    ctx.expect(not leaks, expected="no credential in output", actual="; ".join(leaks[:3]),
               diagnosis="redact an error body before quoting it: a store may echo the whole presigned URL, signature "
                         "included")


@check("redact.userinfo", clauses=["STEP-REDACT-1"], level="MUST",
       title="credentials in a URL's userinfo are never printed (D11)",
       fakes="the input's get_url is http://user:CANARY...@127.0.0.1:<closed port>/x",
       expected="exit 1; the userinfo password never appears in output")
def _(ctx):
    import socket
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    secret = "CANARYuserinfo" + "9" * 12
    plane = ctx.step_plane(inputs=[Input("x.csv", b"1\n", url="http://reader:%s@127.0.0.1:%d/x.csv" % (secret, port))])
    plane.extra_secrets.append(secret)
    plane.run()
    expect_exit(ctx, plane, (1, 10), "the input cannot be read")
    leaks = _leaks(plane, [secret])
    ctx.expect(not leaks, expected="no userinfo in output", actual="; ".join(leaks[:3]),
               diagnosis="strip a URL's userinfo (user:password@) before printing the URL or an error that quotes it")


@check("redact.no-traceback", clauses=["STEP-REDACT-2"], level="MUST",
       title="malformed documents never produce a traceback",
       fakes="the envelope's inputs is a string; then (second run) an input entry is a number",
       expected="no 'Traceback' on stdout or stderr in either run (the exit codes are creds.malformed-inputs')")
def _(ctx):
    first = ctx.step_plane(inputs=csv_inputs(1), envelope_patch=lambda doc: doc.update(inputs="all of them"))
    first.run()
    second = ctx.step_plane(inputs=csv_inputs(1), envelope_patch=lambda doc: doc.update(inputs=[42]))
    second.run()
    for plane in (first, second):
        out = plane.result.stdout + plane.result.stderr
        ctx.expect("Traceback" not in out, expected="no traceback", actual=out[-300:],
                   diagnosis="catch every error at the top, print one redacted line, exit with a contract code")
