"""Result reports: the request, its two outcomes and the wire code, an already settled probe,
the retry of a transient failure with the same bytes, and the failures that end the session
(SESSION-REPORT-1..5, D7).

The report is the one answer a person waits for. The server keeps one answer per probe, keyed
by the probe id, so a resend under the same key and bytes is safe and a lost response need not
throw the session away (D7); a probe the server already holds an answer for is delivered. Any
other refusal means the node cannot deliver: the session ends, and the probe is neither counted
nor narrated as settled.
"""

from conformance.checks import check
from conformance.checks.session._common import (describe_run, each_variant, expect_summary, fault_at, faults,
                                                refusal)
from conformance.planes.session.control import TEMPLATES, canonical

REPORT_ATTEMPTS = 3
ROWS = [["Oslo", 3], ["Lima", 19]]
# An id no lease lists: a probe of it fails PROBE_SOURCE_OUT_OF_SCOPE before any read.
OUTSIDE_SOURCE = "3f0c2d55-1e7a-4a8b-9c6d-5e4f3a2b1c0d"
# A throttle's advice (Retry-After, whole seconds) on a refused acquisition create.
THROTTLE_RETRY_AFTER_S = 3


def _report_match(control, probe_id, phase=None):
    """report_match for one probe's result path (a Match narrowed by skip and first)."""
    def match(**fields):
        if phase is not None:
            fields["phase"] = phase
        # the result template in force (D38), this probe's id in it
        key = "*" + TEMPLATES["report"][1].replace("{attempt_id}", "*").replace("{probe_id}", probe_id)
        return control.report_match(key=key, **fields)
    return match


def _binding(plane):
    lease = plane.control.lease
    doc = dict((k, lease[k]) for k in ("workspace_id", "run_id", "attempt_id", "fence", "session_id"))
    doc["schema_version"] = "3.0.0"
    return doc


def _counts(plane):
    summary = plane.summary() or {}
    return summary.get("probes_answered"), summary.get("probes_failed")


@check("report.request", clauses=["SESSION-REPORT-1", "SESSION-REPORT-2"], level="MUST",
       title="each probe is reported once to its result path, succeeded with result or failed with the wire code",
       fakes="three probes: one answered, one of a source outside the lease, one whose acquisition is throttled "
             "(429 AGENT_BUDGET_EXCEEDED)",
       expected="a POST per probe to its result path keyed result:<probe_id>, with exactly the binding, session_id, "
                "probe_id, outcome and result or failure_code; failure codes PROBE_SOURCE_OUT_OF_SCOPE and "
                "AGENT_BUDGET_EXCEEDED; each report before the next claim")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    good = plane.add_source(columns=["city", "temp"], rows=ROWS)
    throttled = plane.add_source(columns=["city", "temp"], rows=ROWS, refuse=(429, "AGENT_BUDGET_EXCEEDED"),
                                 retry_after_s=THROTTLE_RETRY_AFTER_S)
    probes = [(plane.probe("sample_rows", good, limit=5), "succeeded", None),
              (plane.probe("source_inspect", OUTSIDE_SOURCE), "failed", "PROBE_SOURCE_OUT_OF_SCOPE"),
              (plane.probe("sample_rows", throttled, limit=5), "failed", "AGENT_BUDGET_EXCEEDED")]
    # Act
    plane.start()
    for probe_id, _outcome, _code in probes:
        plane.wait_report(probe_id)
    plane.close_session()
    plane.wait()
    # Assert
    attempt_id = plane.control.lease["attempt_id"]
    claims = plane.control.claims()
    for probe_id, outcome, code in probes:
        sent = plane.control.reports(probe_id)
        ctx.expect(len(sent) == 1, expected="one report of probe %s" % probe_id, actual="%d" % len(sent),
                   diagnosis="each claimed probe is reported once when its report is accepted")
        report = sent[0]
        doc = report.doc if isinstance(report.doc, dict) else {}
        wanted = dict(_binding(plane), probe_id=probe_id, outcome=outcome)
        wanted.update({"failure_code": code} if code else {"result": doc.get("result")})
        ctx.expect(report.method == "POST" and report.key == "session:%s:result:%s" % (attempt_id, probe_id),
                   expected="POST keyed session:<attempt>:result:%s" % probe_id,
                   actual="%s keyed %s" % (report.method, report.key),
                   diagnosis="a report is a POST to the probe's result path, keyed by the probe id")
        ctx.expect(report.body == canonical(wanted) and (code or isinstance(doc.get("result"), dict)),
                   expected="the report of %s: outcome %s%s, exactly the keys of probe-report" % (
                       probe_id, outcome, ", failure_code %s" % code if code else " with its result"),
                   actual=lambda: repr(report.body[:300]),
                   diagnosis="a report carries outcome succeeded with the result, or failed with the wire code "
                             "(AGENT_BUDGET_EXCEEDED for a throttle, never its display code), never both")
        handed = [i for i, c in enumerate(claims) if isinstance(c.answer, dict)
                  and (c.answer.get("probe") or {}).get("probe_id") == probe_id]
        after = claims[handed[0] + 1] if handed and handed[0] + 1 < len(claims) else None
        ctx.expect(after is None or (report.exchange.t_answer is not None and after.t >= report.exchange.t_answer),
                   expected="no claim before the report of %s was answered" % probe_id,
                   actual=lambda: describe_run(plane),
                   diagnosis="the report of a probe comes before any further claim")
    expect_summary(ctx, plane, terminal_state="closed")


@check("report.already-settled", clauses=["SESSION-REPORT-3"], level="MUST",
       title="a report refused RESEARCH_PROBE_ALREADY_SETTLED is delivered; the counts follow the outcomes",
       fakes="three probes: an answered one and an out-of-scope one whose reports are refused 409 "
             "RESEARCH_PROBE_ALREADY_SETTLED, then an answered one reported normally",
       expected="each report sent once; the session goes on; the summary counts probes_answered 2, probes_failed 1")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    good = plane.add_source(columns=["city", "temp"], rows=ROWS)
    first = plane.probe("sample_rows", good, limit=5)
    second = plane.probe("source_inspect", OUTSIDE_SOURCE)
    third = plane.probe("source_inspect", good)
    for probe_id in (first, second):
        plane.control.add_fault(refusal(409, "RESEARCH_PROBE_ALREADY_SETTLED"),
                                _report_match(plane.control, probe_id)(first=1))
    # Act
    plane.start()
    plane.wait_report(third)
    plane.close_session()
    plane.wait()
    # Assert
    expect_summary(ctx, plane, terminal_state="closed")
    sends = [len(plane.control.reports(p)) for p in (first, second, third)]
    ctx.expect(sends == [1, 1, 1], expected="one send of each report", actual="sends %s" % sends,
               diagnosis="an already settled probe is delivered: its report is not sent again")
    ctx.expect(_counts(plane) == (2, 1), expected="probes_answered 2, probes_failed 1",
               actual="probes_answered %s, probes_failed %s" % _counts(plane),
               diagnosis="a probe found already settled counts as delivered, by its own outcome")


@check("report.transient-retry", clauses=["SESSION-REPORT-4"], level="MUST",
       title="a report without an answer, or refused 408, 429 or 5xx, is sent again with the same key and bytes",
       fakes="probe 1's report answered 503, then reset after the server took it; probe 2's answered 408, then 429",
       expected="three sends of each report, one key and byte-identical bodies per probe; both delivered; the "
                "session goes on")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    good = plane.add_source(columns=["city", "temp"], rows=ROWS)
    first = plane.probe("sample_rows", good, limit=5)
    second = plane.probe("source_inspect", OUTSIDE_SOURCE)
    fault_at(plane.control, _report_match(plane.control, first, phase="response"),
             [(1, faults.status(503)), (2, faults.reset(after_bytes=0))])
    fault_at(plane.control, _report_match(plane.control, second, phase="response"),
             [(1, faults.status(408)), (2, faults.status(429))])
    # Act
    plane.start()
    plane.wait_report(second)
    plane.wait_claims(len(plane.control.claims()) + 1)
    plane.close_session()
    plane.wait()
    # Assert
    for probe_id in (first, second):
        sent = plane.control.reports(probe_id)
        ctx.expect(len(sent) == REPORT_ATTEMPTS, expected="%d sends of the report of %s" % (REPORT_ATTEMPTS, probe_id),
                   actual="%d" % len(sent),
                   diagnosis="a transient report failure is retried, up to REPORT_ATTEMPTS sends in all (D7)")
        shapes = set((c.key, c.body) for c in sent)
        ctx.expect(len(shapes) == 1 and all(c.body for c in sent),
                   expected="one key and one body for every send of %s" % probe_id,
                   actual=lambda: "; ".join("%s %d bytes" % (c.key, len(c.body)) for c in sent),
                   diagnosis="a resend carries the same key and byte-identical body, so the server can tell it "
                             "is the same answer")
    expect_summary(ctx, plane, terminal_state="closed")
    ctx.expect(_counts(plane) == (1, 1), expected="probes_answered 1, probes_failed 1",
               actual="probes_answered %s, probes_failed %s" % _counts(plane),
               diagnosis="a report delivered on a resend (or found settled) counts")


@check("report.fatal", clauses=["SESSION-REPORT-5"], level="MUST",
       title="a report refused for good, or failing three sends, ends the session; the probe is not counted",
       fakes="the report refused 409 ATTEMPT_FENCE_STALE; refused 400 RESULT_REJECTED; answered 503 three times",
       expected="the session ends with ATTEMPT_FENCE_STALE, RESULT_REJECTED, CONTROL_PLANE_HTTP_503; sends 1, 1, "
                "3; no claim after; probes_answered and probes_failed 0; no settled event")
def _(ctx):
    variants = [("409 ATTEMPT_FENCE_STALE", (refusal(409, "ATTEMPT_FENCE_STALE"), 1, "ATTEMPT_FENCE_STALE")),
                ("400 RESULT_REJECTED", (refusal(400, "RESULT_REJECTED"), 1, "RESULT_REJECTED")),
                ("503 three times", (faults.status(503), REPORT_ATTEMPTS, "CONTROL_PLANE_HTTP_503"))]

    def act(label, value):
        fault, sends, code = value
        plane = ctx.plane()
        source = plane.add_source(columns=["city", "temp"], rows=ROWS)
        probe_id = plane.probe("sample_rows", source, limit=5)
        plane.control.add_fault(fault, _report_match(plane.control, probe_id)())
        plane.run()
        expect_summary(ctx, plane, failure_code=code, variant=label)
        sent = plane.control.reports(probe_id)
        ctx.expect(len(sent) == sends, expected="%d send(s) of the report (variant %s)" % (sends, label),
                   actual="%d" % len(sent),
                   diagnosis="only no answer, 408, 429 and 5xx are retried, up to REPORT_ATTEMPTS sends (D7)")
        later = [c for c in plane.control.claims() if c.t > sent[-1].t]
        ctx.expect(not later, expected="no claim after the failed report (variant %s)" % label,
                   actual="%d claim(s)" % len(later), diagnosis="a report that cannot be delivered ends the session")
        ctx.expect(_counts(plane) == (0, 0), expected="probes_answered 0, probes_failed 0 (variant %s)" % label,
                   actual="probes_answered %s, probes_failed %s" % _counts(plane),
                   diagnosis="a probe never delivered counts in neither")
        settled = [e for e in plane.control.progress_events() if e.event_type == "source_probe_completed"]
        ctx.expect(not settled, expected="no settled event (variant %s)" % label,
                   actual="%d appended" % len(settled),
                   diagnosis="the settled event follows a delivered report only")
    each_variant(ctx, variants, act)
