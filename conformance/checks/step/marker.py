"""The completion marker: shape, last, one per run, exit code, inventory, error."""

from conformance import schema
from conformance.checks import check
from conformance.checks.step._common import (
    contract_schema,
    MARKER_NAME, Match, RESULT_NAME, csv_inputs, data_upload, expect_diagnostics, expect_exit, expect_marker,
    faults)


@check("marker.shape", clauses=["STEP-MARKER-2", "STEP-MARKER-7"], level="MUST",
       title="the succeeded marker has the ten fields, real ints, sorted keys, error null",
       fakes="a healthy run with two inputs", expected="schema-valid marker; error null; sorted keys; indent 2")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(2))
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run")
    marker = expect_marker(ctx, plane, "succeeded", 0)
    problems = schema.validate(marker, contract_schema("marker"))
    ctx.expect(not problems, expected="valid against contract/schemas/step/marker.schema.json",
               actual="; ".join(problems[:5]),
               diagnosis="build the marker with exactly the schema's ten members, integers as real integers (never "
                         "booleans or strings) and status consistent with exit_code")
    ctx.expect(marker.get("error") is None, expected="error null on success", actual="%r" % marker.get("error"),
               diagnosis="a succeeded marker's error is null: set a reason only for failed and cancelled runs")
    import json
    canonical = json.dumps(marker, sort_keys=True, indent=2)
    ctx.expect(plane.marker_raw.decode("utf-8").strip() == canonical,
               expected="serialised with sort_keys and indent 2", actual=plane.marker_raw[:120],
               diagnosis="serialise the marker with json.dumps(marker, sort_keys=True, indent=2)")


@check("marker.last", clauses=["STEP-MARKER-1"], level="MUST",
       title="the marker begins only after every other write has been answered",
       fakes="the store delays its answer to each of the node's own objects by 0.3 s",
       expected="no request overlaps or follows the marker")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(3))
    plane.store.add_fault(faults.delay(0.3), data_upload(phase="response"))
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run")
    marker_key = plane.collector.marker_key()
    keys = [ex.key for ex in plane.collector.posts()]
    ctx.expect(keys and keys[-1] == marker_key and keys.count(marker_key) == 1,
               expected="exactly one marker POST, the last request", actual="POSTs %s" % keys,
               diagnosis="write exactly one marker per run" if keys.count(marker_key) > 1 else
               "every run that can identify itself ends with its marker" if marker_key not in keys else
               "the marker is the last write: begin it only after every other request has been answered, and "
               "write nothing after it")


@check("marker.refused-500", clauses=["STEP-MARKER-3", "STEP-MARKER-4"], level="MUST",
       title="a 500 on the marker does not change the exit code and is not followed by another marker",
       fakes="the store answers the marker POST 500 InternalError",
       expected="exit 0; exactly one marker POST; a stderr line says the receipt is unconfirmed")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.status(500, s3_code="InternalError"), Match(method="POST", key="*/" + MARKER_NAME))
    plane.run()
    expect_exit(ctx, plane, 0, "the code was decided before the receipt")
    ctx.expect(len(plane.collector.marker_posts()) == 1, expected="one marker POST (no corrective receipt)",
               actual="%d" % len(plane.collector.marker_posts()),
               diagnosis="a refused marker is not followed by a corrective one: print one stderr line saying the "
                         "receipt is unconfirmed and exit with the decided code")
    expect_diagnostics(ctx, plane, why="one of them says the receipt is unconfirmed")


@check("marker.refused-404", clauses=["STEP-MARKER-3"], level="MUST",
       title="a permanent refusal of the marker does not change the exit code either (D1)",
       fakes="the store answers the marker POST 404 NoSuchBucket", expected="exit 0; one marker POST")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.status(404, s3_code="NoSuchBucket"), Match(method="POST", key="*/" + MARKER_NAME))
    plane.run()
    expect_exit(ctx, plane, 0, "the code was decided before the receipt (D1)")
    posts = plane.collector.marker_posts()
    ctx.expect(len(posts) == 1, expected="one marker POST", actual="%d" % len(posts),
               diagnosis="a permanent refusal of the marker changes nothing: no second marker, the decided exit code, "
                         "one stderr line")


@check("marker.failed-fields", clauses=["STEP-MARKER-7", "STEP-MARKER-2", "STEP-REDACT-1"], level="MUST",
       title="a failed marker carries a redacted error of at most 500 characters",
       fakes="the input GET is answered 403 with a body quoting the whole presigned URL",
       expected="exit 10; error non-empty, <= 500 characters, without the URL's query")
def _(ctx):
    items = csv_inputs(1)
    plane = ctx.step_plane(inputs=items)
    url = plane.agent.envelope()["inputs"][0]["get_url"]
    body = ("<html>denied: " + url + " " + "z" * 2000 + "</html>").encode()
    plane.store.add_fault(faults.status(403, body=body), Match(method="GET", key="inputs/*"))
    plane.run()
    expect_exit(ctx, plane, 10, "403 without a code is permanent")
    marker = expect_marker(ctx, plane, "failed", 10)
    error = marker.get("error")
    ctx.expect(isinstance(error, str) and 0 < len(error) <= 500, expected="error of 1..500 characters",
               actual="error %r" % (error if not isinstance(error, str) else error[:80] + "... (%d)" % len(error)),
               diagnosis="a failed marker's error is a non-empty reason cut to at most 500 characters after redaction")
    ctx.expect("?" not in (error or "") or "REDACTED" in error, expected="no URL query in error",
               actual="error %r" % (error or "")[:200],
               diagnosis="redact the failure's reason before it goes into the marker: an error body that quotes a "
                         "presigned URL carries its signature in the query")


@check("marker.produced-ports", clauses=["STEP-OUTPUT-8", "STEP-MARKER-5"], level="MUST",
       title="result.json is on port report and alone there; every object of the work is on a port",
       fakes="a healthy run",
       expected="produced_ports report = [result.json]; result.json on no other port; each of the node's own "
                "objects on one port")
def _(ctx):
    items = csv_inputs(2)
    plane = ctx.step_plane(inputs=items)
    plane.run()
    marker = expect_marker(ctx, plane, "succeeded", 0)
    ports = marker.get("produced_ports") or {}
    elsewhere = [port for port, listed in ports.items() if port != "report" and RESULT_NAME in (listed or [])]
    ctx.expect(ports.get("report") == [RESULT_NAME] and not elsewhere,
               expected="report: [result.json], and result.json on no other port", actual="%s" % ports,
               diagnosis="a port's objects go to every step downstream of it: data on report is read as "
                         "the report, and the report on a data port is read as data")
    on_ports = [r for port, listed in ports.items() if port != "report" for r in (listed or [])]
    unplaced = [r for r in plane.collector.data_relpaths() if r not in on_ports]
    ctx.expect(not unplaced,
               expected="each of the node's own objects on one of its output ports",
               actual="not on any port: %s; produced_ports %s" % (unplaced[:3], ports),
               diagnosis="list each object the work published under one of its output ports in produced_ports")
