"""The manifest: source, bounded read, shape, identity and its fallbacks."""

import json

from conformance.checks import check
from conformance.checks.step._common import (
    IDENTITY, Match, csv_inputs, expect_diagnostics, expect_exit, expect_exit_unwaiting, expect_marker,
    expect_no_marker, faults)


def _identity_of(marker):
    return {k: marker.get(k) for k in ("execution_id", "attempt", "generation", "idempotency_key")}


@check("manifest.no-source", clauses=["STEP-MANIFEST-1"], level="MUST",
       title="an envelope with neither manifest_get nor manifest_path is permanent",
       fakes="the envelope names no manifest", expected="exit 10; failed marker from the env identity")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), manifest_source="none")
    plane.run()
    expect_exit(ctx, plane, 10, "no manifest to read is permanent")
    marker = expect_marker(ctx, plane, "failed", 10)
    ctx.expect(_identity_of(marker) == IDENTITY, expected="identity from LSPO_* variables %s" % IDENTITY,
               actual="%s" % _identity_of(marker),
               diagnosis="with no manifest to read, take each identity field from its LSPO_* variable for the marker")


# The oversize manifest: 40 MiB announced, 9 MiB sent, then silence. A node
# that reads at most 8 MiB + 1 (STEP-MANIFEST-2), or refuses the announced
# length unread, has its answer; one that reads on waits for bytes that never
# come, and its read timeout ends the run as transient instead.
OVERSIZE_MANIFEST_BYTES = 40 << 20
OVERSIZE_MANIFEST_SENT_BYTES = 9 << 20


@check("manifest.oversize", clauses=["STEP-MANIFEST-2"], level="MUST",
       title="a manifest over 8 MiB is refused without being read whole",
       fakes="a 40 MiB manifest whose first 9 MiB arrive, then silence on the open connection",
       expected="exit 10 and a failed marker: refused after at most 8 MiB + 1 byte, without waiting for the rest")
def _(ctx):
    raw = b'{"schema_version": 1, "params": {"pad": "' + b"x" * OVERSIZE_MANIFEST_BYTES + b'"}}'
    plane = ctx.step_plane(inputs=csv_inputs(1), manifest_raw=raw)
    plane.store.add_fault(faults.stall(OVERSIZE_MANIFEST_SENT_BYTES), Match(method="GET", key=plane.job.manifest_key))
    plane.run()
    expect_exit_unwaiting(ctx, plane, (plane.exchanges("GET", key=plane.job.manifest_key) or [None])[0], 10,
                          "an oversize document is permanent",
                          diagnosis="read at most MAX_DOCUMENT_BYTES + 1, then refuse: this manifest never "
                                    "ends, so a node that reads it whole waits for its read timeout")
    expect_marker(ctx, plane, "failed", 10)


@check("manifest.xml-error-page", clauses=["STEP-MANIFEST-3"], level="MUST",
       title="a manifest that is not JSON (an XML error page) is transient",
       fakes="the manifest GET answers 200 with an S3 error XML body", expected="exit 1; failed marker")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.garbage(b'<?xml version="1.0"?><Error><Code>AccessDenied</Code></Error>'),
                          Match(method="GET", key=plane.job.manifest_key))
    plane.run()
    expect_exit(ctx, plane, 1, "an unparseable manifest is usually an expired URL: transient")
    expect_marker(ctx, plane, "failed", 1)


def _bad_manifest(label, doc, why):
    @check("manifest.%s" % label, clauses=["STEP-MANIFEST-3"], level="MUST",
           title="a manifest %s is permanent" % why, fakes="manifest %s" % json.dumps(doc)[:60],
           expected="exit 10; no input fetched")
    def _(ctx):
        items = csv_inputs(1)
        plane = ctx.step_plane(inputs=items, manifest_raw=json.dumps(doc).encode())
        plane.run()
        expect_exit(ctx, plane, 10, "a manifest of the wrong shape is permanent")
        ctx.expect(not plane.job.gets(items[0]), expected="no input GET", actual="input fetched",
                   diagnosis="check the manifest's shape (a JSON object with schema_version exactly the integer 1) "
                             "before fetching any input")


_bad_manifest("not-object", [1, 2, 3], "that is a JSON array")
_bad_manifest("version-2", dict(IDENTITY, schema_version=2), "with schema_version 2")
_bad_manifest("version-bool", dict(IDENTITY, schema_version=True), "with schema_version true")


@check("manifest.identity-from-env", clauses=["STEP-MANIFEST-4", "STEP-MARKER-6"], level="MUST",
       title="when the manifest cannot be read, the marker's identity comes from LSPO_* variables",
       fakes="the manifest GET answers 404 NoSuchKey", expected="exit 10; failed marker with the env identity")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.status(404, s3_code="NoSuchKey"), Match(method="GET", key=plane.job.manifest_key))
    plane.run()
    expect_exit(ctx, plane, 10, "404 is permanent")
    marker = expect_marker(ctx, plane, "failed", 10)
    ctx.expect(_identity_of(marker) == IDENTITY, expected="identity %s" % IDENTITY,
               actual="%s" % _identity_of(marker),
               diagnosis="when the manifest cannot be read, take the marker's identity from the LSPO_* variables")


@check("manifest.identity-types", clauses=["STEP-MANIFEST-4"], level="MUST",
       title="identity fields of the wrong type fall back to the environment (D2)",
       fakes="manifest execution_id '41x', attempt true, generation 0, idempotency_key 7; env has the truth",
       expected="exit 0; marker identity from the environment")
def _(ctx):
    manifest = {"schema_version": 1, "execution_id": "41x", "attempt": True, "generation": 0,
                "idempotency_key": 7, "params": {}}
    plane = ctx.step_plane(inputs=csv_inputs(1), manifest=manifest)
    plane.run()
    expect_exit(ctx, plane, 0, "the environment supplies a usable identity")
    marker = expect_marker(ctx, plane, "succeeded", 0)
    ctx.expect(_identity_of(marker) == IDENTITY, expected="identity %s" % IDENTITY,
               actual="%s" % _identity_of(marker),
               diagnosis="ints must exclude bool; a non-string idempotency_key must not block the fallback")


@check("manifest.identity-wins", clauses=["STEP-MANIFEST-4"], level="MUST",
       title="a usable manifest identity is preferred to the environment",
       fakes="manifest identity 7/1/1/'m-key'; env identity 41/2/3/'idem-41-2'",
       expected="exit 0; marker identity from the manifest")
def _(ctx):
    manifest = {"schema_version": 1, "execution_id": 7, "attempt": 1, "generation": 1,
                "idempotency_key": "m-key", "params": {}}
    plane = ctx.step_plane(inputs=csv_inputs(1), manifest=manifest)
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run")
    marker = expect_marker(ctx, plane, "succeeded", 0)
    want = {"execution_id": 7, "attempt": 1, "generation": 1, "idempotency_key": "m-key"}
    ctx.expect(_identity_of(marker) == want, expected="identity %s" % want, actual="%s" % _identity_of(marker),
               diagnosis="prefer each identity field the manifest gives in a usable form; fall back to the LSPO_* "
                         "variables only field by field")


@check("manifest.no-identity", clauses=["STEP-MARKER-6"], level="MUST",
       title="with no usable identity anywhere, no marker is written",
       fakes="the manifest GET answers 404; no LSPO_* identity variables",
       expected="exit 10; no marker POST; a stderr line says why")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), identity_env=False)
    plane.store.add_fault(faults.status(404, s3_code="NoSuchKey"), Match(method="GET", key=plane.job.manifest_key))
    plane.run()
    expect_exit(ctx, plane, 10, "the original failure's code")
    expect_no_marker(ctx, plane, "a receipt without identity cannot be told apart from another attempt's")
    expect_diagnostics(ctx, plane, why="one of them says why there is no marker")


@check("manifest.env-identity-digits", clauses=["STEP-MANIFEST-4"], level="MUST",
       title="identity variables must be plain decimal digits (D12)",
       fakes="manifest has no execution_id; LSPO_EXECUTION_ID='-41'",
       expected="no marker (no usable execution_id); exit 10")
def _(ctx):
    manifest = {"schema_version": 1, "attempt": 2, "generation": 3, "idempotency_key": "k", "params": {}}
    plane = ctx.step_plane(inputs=csv_inputs(1), manifest=manifest, extra_env={"LSPO_EXECUTION_ID": "-41"})
    plane.run()
    expect_exit(ctx, plane, 10, "no usable identity is permanent")
    expect_no_marker(ctx, plane, "-41 is not a usable execution_id")
