"""Claim loop: the request and its key, one thing at a time, the server's interval, a closed
session, a probe that cannot be named, a lost fence, and the count of failures in a row
(SESSION-CLAIM-1..7, D4, D5, D21, D24, D25, D26).

The claim loop is the worker's whole conversation with the control plane. Its key must let the
server hand a probe out again when an answer was lost (D26) without ever replaying an answered
claim; its pace is the server's, never a hot loop; a closed or failed session is an ordinary end
(exit 0: a retried task would only start a second attempt); a lost fence ends the session at once,
since retrying contends with the attempt's new owner; and other failures are retried on the
jittered schedule until ten come in a row.
"""

from conformance.checks import check
from conformance.checks.session._common import (PHASE_TIMEOUT_S, SCHEDULE_SLACK_S, STOP_BUDGET_S, answered_at,
                                                backoff_ceiling, began, describe_run, each_variant, expect_summary,
                                                fault_at, faults, refusal)
from conformance.planes.session.control import OMIT, canonical
from conformance.timescale import expect_interval, tolerance

# Claim intervals the interval rule can judge (timescale.MIN_JUDGED_INTERVAL_S and twice that).
LEASE_POLL_S = 1.2
ANSWER_POLL_S = 0.6
# SESSION-CLAIM-2: "at once" after the attempt_started append or a report (which is followed by its
# settled append) is judged against a poll interval twice as long, so that a node waiting the
# interval stands apart from one slowed by a loaded machine.
AT_ONCE_S = 1.0
SLOW_POLL_S = 2.0
# A lease interval below MIN_INTERVAL_S (0.1 s, D24).
BELOW_FLOOR_S = 0.01
MIN_INTERVAL_S = 0.1
# The wait between an empty answer and the next claim (measured from the moment the fake began to
# answer to the moment the next claim began, so that it can only gain the node's latency) is never
# below the floored interval; a node without the floor waits about 0.01 s plus its latency. The
# threshold keeps 5 % below the floor for the clocks' rounding.
FLOOR_MEAN_S = 0.95 * MIN_INTERVAL_S
FLOOR_CLAIMS = 10
# The default claim interval as served (1 contract second scaled): the backoff's base.
DEFAULT_POLL_S = 0.1
# SESSION-CLAIM-7: failed claims in a row before the session ends.
MAX_CONSECUTIVE_CLAIM_FAILURES = 10
# A backoff delay is measured from the failed answer's first byte to the next attempt's first
# byte at the fake, which only adds the node's latency: never shorter than the draw. This
# allows the two clocks' rounding.
CLOCK_EPSILON_S = 0.005
ROWS = [["Oslo", 3], ["Lima", 19]]


def _poll_numbers(plane):
    attempt_id = plane.control.lease["attempt_id"]
    prefix = "session:%s:claim:" % attempt_id
    return [int(c.key[len(prefix):]) if c.key and c.key.startswith(prefix) and c.key[len(prefix):].isdigit()
            else c.key for c in plane.control.claims()]


def _claim_body(plane):
    lease = plane.control.lease
    doc = dict((k, lease[k]) for k in ("workspace_id", "run_id", "attempt_id", "fence", "session_id"))
    doc["schema_version"] = "3.0.0"
    return canonical(doc)


def expect_backoff_gaps(ctx, plane, failed, what):
    """Each claim in failed (pairs of a claim and n, its place in a run of failures) is followed by
    a claim begun within [v/2, v + tolerance(v)] of its answer (SESSION-BACKOFF-1)."""
    claims = plane.control.claims()
    index = dict((c.exchange.seq, i) for i, c in enumerate(claims))
    wrong = []
    for call, n in failed:
        after = index[call.exchange.seq] + 1
        if after >= len(claims):
            continue
        v = backoff_ceiling(DEFAULT_POLL_S, n)
        gap = began(plane.control, claims[after]) - answered_at(call)
        high = v + tolerance(v) + SCHEDULE_SLACK_S
        if not v / 2 - CLOCK_EPSILON_S <= gap <= high:
            wrong.append("retry %d waited %.3f s, not within [%.3f, %.3f]" % (n, gap, v / 2, high))
    ctx.expect(not wrong, expected="each retry of %s within [v/2, v] (v = min(16 x base, base x 2^(n-1)), "
                                   "plus the interval rule's tolerance and the machine's slack)" % what,
               actual=lambda: "; ".join(wrong[:4]),
               diagnosis="the n-th consecutive retry waits a draw from [v/2, v] (D25): doubling from the interval "
                         "in force, capped at 16 times it")


@check("claim.request", clauses=["SESSION-CLAIM-1"], level="MUST",
       title="a claim is the claim-request body, keyed claim:1, 2, 3, ... as answers are accepted",
       fakes="a healthy plane; no probe; the session closed after the fifth claim",
       expected="every claim body byte-equal to the canonical fence binding plus session_id; keys ending 1, 2, 3, "
                "... in order")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    # Act
    plane.start()
    plane.wait_claims(5)
    plane.close_session()
    plane.wait()
    # Assert
    numbers = _poll_numbers(plane)
    ctx.expect(numbers == list(range(1, len(numbers) + 1)), expected="keys ending :claim:1, :2, ... in order",
               actual=lambda: "poll numbers %s" % numbers,
               diagnosis="the claim key's poll number starts at 1 and advances after each accepted answer")
    body = _claim_body(plane)
    odd = [c.body for c in plane.control.claims() if c.body != body]
    ctx.expect(not odd, expected="every claim body %r" % body[:160], actual=lambda: repr(odd[0][:200]),
               diagnosis="a claim's body is the fence binding and session_id, canonically encoded")
    expect_summary(ctx, plane, terminal_state="closed")


@check("claim.key-after-failure", clauses=["SESSION-CLAIM-1"], level="MUST",
       title="a claim without a usable answer is sent again under its key; an answered one advances",
       fakes="claims answered in turn: 503, ok, reset (no answer), ok, 429, ok, 200 not JSON, ok, 409 with a "
             "code, ok, 404, ok",
       expected="poll numbers 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8: the same key after no answer, 429, 5xx or an "
                "unreadable 200; the next after a 4xx")
def _(ctx):
    plan = [(1, faults.status(503)), (3, faults.reset(after_bytes=0)), (5, faults.status(429)),
            (7, faults.garbage(b"not json")), (9, refusal(409, "CLAIM_CONFLICT")), (11, faults.status(404))]
    wanted = [1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8]
    # Arrange
    plane = ctx.plane()
    fault_at(plane.control, plane.control.claim_match, plan)
    # Act
    plane.start()
    plane.wait_claims(len(wanted))
    plane.close_session()
    plane.wait()
    # Assert
    numbers = _poll_numbers(plane)[:len(wanted)]
    ctx.expect(numbers == wanted, expected="poll numbers %s" % wanted, actual="poll numbers %s" % numbers,
               diagnosis="the poll number advances after an accepted 200 or a 4xx refusal (429 aside) and is sent "
                         "again after no answer, a 429, a 5xx or an unreadable 200, so a probe assigned under a "
                         "lost answer is handed out again (D26)")
    expect_summary(ctx, plane, terminal_state="closed")


@check("claim.one-at-a-time", clauses=["SESSION-CLAIM-2"], level="MUST",
       title="the first claim at once, the next at once after a report, the interval only after an empty answer",
       fakes="claim interval %.1f s; two probes queued" % SLOW_POLL_S,
       expected="no claim while another claim or a probe is in progress; the first claim and each claim after a "
                "report within %.2f s; the claim after an empty answer one interval later" % AT_ONCE_S)
def _(ctx):
    # Arrange
    plane = ctx.plane(claim_poll_s=SLOW_POLL_S)
    source = plane.add_source(columns=["city", "temp"], rows=ROWS)
    first = plane.probe("sample_rows", source, limit=5)
    second = plane.probe("source_inspect", source)
    # Act: the third claim's answer is empty; the session closes at the fourth
    plane.start()
    plane.wait_report(second)
    plane.wait_for(lambda: len(plane.control.claims()) >= 3 and plane.control.claims()[2].status is not None,
                   "the third claim answered")
    plane.close_session()
    plane.wait()
    # Assert
    claims = plane.control.claims()
    reports = dict((pid, plane.control.reports(pid)[0]) for pid in (first, second))
    append = plane.control.calls("append")[0].exchange
    lags = [("the first claim after the attempt_started append", claims[0].t - (append.t_end or append.t_start))]
    overlap = []
    for this, after in zip(claims, claims[1:]):
        if after.t < answered_at(this):
            overlap.append("a claim sent before the previous claim was answered")
        probe = (this.answer or {}).get("probe") if isinstance(this.answer, dict) else None
        if probe:
            report = reports.get(probe["probe_id"])
            if report is None or after.t < report.t:
                overlap.append("a claim sent while probe %s was unreported" % probe["probe_id"])
            elif report.exchange.t_end is not None:
                lags.append(("the claim after the report of %s" % probe["probe_id"], after.t - report.exchange.t_end))
    ctx.expect(not overlap, expected="one claim or one probe in progress at a time", actual="; ".join(overlap[:3]),
               diagnosis="the claim loop does one thing at a time: a claim, or a probe up to its report")
    slow = ["%s: %.3f s" % item for item in lags if item[1] > AT_ONCE_S]
    ctx.expect(len(lags) == 3 and not slow, expected="the first claim and each claim after a report within %.2f s"
               % AT_ONCE_S, actual=lambda: "; ".join(slow) or "%d such claims" % len(lags),
               diagnosis="after the attempt_started append and after a report the next claim goes out at once; only "
                         "an answer without a probe is followed by the interval")
    empty = [i for i, c in enumerate(claims[:-1]) if isinstance(c.answer, dict) and not c.answer.get("claimed")]
    gaps = [claims[i + 1].t - claims[i].t for i in empty]
    ctx.expect(bool(gaps), expected="an empty answer followed by a claim", actual=lambda: describe_run(plane),
               diagnosis="the run never reached the phase this check needs")
    expect_interval(ctx, gaps, SLOW_POLL_S, "the claim after an empty answer",
                    diagnosis="an answer that brings no probe is followed by the interval in force")


@check("claim.interval", clauses=["SESSION-CLAIM-3"], level="MUST",
       title="the interval in force: the lease's, replaced by an answer's positive number, kept otherwise (D4)",
       fakes="lease interval %.1f s; answers carrying: nothing (twice), %.1f, null, -5, \"abc\", true (three "
             "times), 0"
             % (LEASE_POLL_S, ANSWER_POLL_S),
       expected="gaps of %.1f s until an answer carries a number, then %.1f s after every later answer (interval "
                "rule)" % (LEASE_POLL_S, ANSWER_POLL_S))
def _(ctx):
    script = [OMIT, OMIT, ANSWER_POLL_S, None, -5, "abc", True, True, True, 0]
    sent = []

    def patch(doc):
        value = script[len(sent)] if len(sent) < len(script) else ANSWER_POLL_S
        sent.append(value)
        if value is OMIT:
            doc.pop("claim_poll_interval_seconds", None)
        else:
            doc["claim_poll_interval_seconds"] = value
        return doc
    # Arrange
    plane = ctx.plane(claim_poll_s=LEASE_POLL_S, claim_patch=patch)
    # Act
    plane.start()
    plane.wait_claims(len(script) + 1, timeout=PHASE_TIMEOUT_S + 2 * (LEASE_POLL_S * 2 + ANSWER_POLL_S * len(script)))
    plane.close_session()
    plane.wait()
    # Assert
    claims = [c for c in plane.control.claims() if isinstance(c.answer, dict)]
    in_force, groups = LEASE_POLL_S, {}
    for this, after in zip(claims, claims[1:]):
        value = this.answer.get("claim_poll_interval_seconds")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            in_force = max(MIN_INTERVAL_S, value)
        if this.answer.get("session_state") == "live":
            groups.setdefault(in_force, []).append(after.t - this.t)
    for nominal in sorted(groups):
        expect_interval(ctx, groups[nominal], nominal, "claims while %.1f s is in force" % nominal,
                        diagnosis="the interval in force starts as the lease's; only a number above 0 in an answer "
                                  "replaces it; null, 0, negatives, strings and booleans keep it (D4)")
    ctx.expect(set(groups) == {LEASE_POLL_S, ANSWER_POLL_S}, expected="gaps under both intervals",
               actual=lambda: describe_run(plane), diagnosis="the run never reached the phase this check needs")
    expect_summary(ctx, plane, terminal_state="closed")


@check("claim.interval-floor", clauses=["SESSION-CLAIM-3"], level="MUST",
       title="a claim interval below 0.1 s is raised to 0.1 s",
       fakes="lease and answers carry claim_poll_interval_seconds %.2f; no probe" % BELOW_FLOOR_S,
       expected="over %d claims a mean wait of at least %.3f s from an answer to the next claim"
                % (FLOOR_CLAIMS, FLOOR_MEAN_S))
def _(ctx):
    # Arrange
    plane = ctx.plane(claim_poll_s=BELOW_FLOOR_S)
    # Act
    plane.start()
    claims = plane.wait_claims(FLOOR_CLAIMS)
    plane.close_session()
    plane.wait()
    # Assert
    claims = claims[:FLOOR_CLAIMS]
    waits = [began(plane.control, after) - answered_at(this) for this, after in zip(claims, claims[1:])]
    mean = sum(waits) / len(waits)
    ctx.expect(mean >= FLOOR_MEAN_S, expected="a mean wait of at least %.3f s" % FLOOR_MEAN_S, actual="%.3f s" % mean,
               diagnosis="every claim interval is floored at MIN_INTERVAL_S = 0.1 s (D24), the answers' included")


@check("claim.closed", clauses=["SESSION-CLAIM-4"], level="MUST",
       title="a closed or failed session ends the worker quietly, exit 0; another state is live",
       fakes="session_state \"closed\"; \"failed\"; \"closed\" with claimed true and a probe; \"draining\" for two "
             "answers, then \"closed\"",
       expected="no claim after the closing answer, no :complete or :fail, attempt_finished with that state, the "
                "summary's terminal_state, exit 0 within 1 s (plus the final append); the probe never worked")
def _(ctx):
    def with_probe(doc):
        if doc.get("session_state") == "closed":
            doc.update(claimed=True, probe={"probe_id": "6a2f41a0-94b0-4d8e-9b52-1b1cf31a7c2e",
                                            "probe_kind": "source_inspect", "ordinal": 1,
                                            "request": {"source_id": "6a2f41a0-94b0-4d8e-9b52-1b1cf31a7c2f"}})
        return doc
    variants = [("closed", ("closed", None, None)), ("failed", ("failed", None, None)),
                ("closed with a probe", ("closed", with_probe, None)), ("draining, then closed", ("closed", None,
                                                                                                 "draining"))]

    def act(label, value):
        state, patch, before = value
        plane = ctx.plane(claim_patch=patch)
        plane.start()
        plane.wait_claims(2)
        if before:
            plane.close_session(before)
            seen = len(plane.control.claims())
            plane.wait_claims(seen + 2)
        plane.close_session(state)
        plane.wait()
        expect_summary(ctx, plane, terminal_state=state, variant=label)
        claims = plane.control.claims()
        closing = [i for i, c in enumerate(claims) if isinstance(c.answer, dict)
                   and c.answer.get("session_state") == state]
        ctx.expect(bool(closing) and closing[0] == len(claims) - 1,
                   expected="no claim after the answer saying %s (variant %s)" % (state, label),
                   actual=lambda: "%d claim(s) after it" % (len(claims) - 1 - closing[0]) if closing else
                   describe_run(plane),
                   diagnosis="session_state closed or failed ends the claim loop: no further claim")
        others = [c.verb for c in plane.control.calls() if c.verb in ("other", "report", "acquire", "read")]
        ctx.expect(not others, expected="no :complete, :fail, report or acquisition (variant %s)" % label,
                   actual="%s" % ", ".join(others),
                   diagnosis="a closed session is over: session_state is read before claimed, and nothing is "
                             "completed or failed")
        finished = [e.facts for e in plane.control.progress_events() if e.event_type == "attempt_finished"]
        ctx.expect(finished == [{"outcome": state}], expected="attempt_finished with outcome %s" % state,
                   actual="%s" % finished, diagnosis="the attempt finishes with the session's state as its outcome")
        close_t = answered_at(claims[closing[0]])
        final = [c for c in plane.control.calls("append") if c.t >= close_t]
        spent = sum(((c.exchange.t_end or c.t) - c.t) for c in final)
        took = plane.result.t_exit - close_t - spent
        ctx.expect(took <= STOP_BUDGET_S + SCHEDULE_SLACK_S,
                   expected="exit within %.2f s of the answer, plus the final append" % (STOP_BUDGET_S
                                                                                      + SCHEDULE_SLACK_S),
                   actual="%.2f s" % took, diagnosis="a closed session ends the worker at once")
        if before:
            live = [i for i, c in enumerate(claims) if isinstance(c.answer, dict)
                    and c.answer.get("session_state") == before]
            ctx.expect(bool(live) and live[0] + 1 < len(claims),
                       expected="claims went on after an answer saying %s" % before,
                       actual=lambda: describe_run(plane),
                       diagnosis="any other session_state means the session is live")
    each_variant(ctx, variants, act)


@check("claim.probe-invalid", clauses=["SESSION-CLAIM-5"], level="MUST",
       title="a claimed probe without a UUID probe_id ends the session PROBE_CLAIM_INVALID",
       fakes="claimed true with probe \"x\"; a probe without probe_id; probe_id \"abc\" or 42; "
             "and (live) a probe of an unknown kind; claimed null beside a well-formed probe",
       expected="PROBE_CLAIM_INVALID, exit 1, no report and no acquisition; the unknown kind reported failed and "
                "the session going on; nothing worked for claimed null")
def _(ctx):
    good = "0b3ac5a2-6d8e-4b55-8f0e-6c6b0c1f4d21"

    def probe_doc(probe):
        def patch(doc):
            if not patch.done:
                patch.done = True
                doc.update(claimed=patch.claimed, probe=probe)
            return doc
        patch.done, patch.claimed = False, True
        return patch
    request = {"source_id": "5b8d0f0e-8f4f-4a5e-9a4c-2f7f0f3e9a10"}
    variants = [("probe not an object", "x"),
                ("no probe_id", {"probe_kind": "source_inspect", "ordinal": 1, "request": request}),
                ("probe_id abc", {"probe_id": "abc", "probe_kind": "source_inspect", "ordinal": 1,
                                  "request": request}),
                ("probe_id 42", {"probe_id": 42, "probe_kind": "source_inspect", "ordinal": 1,
                                 "request": request})]

    def act(label, probe):
        plane = ctx.plane(claim_patch=probe_doc(probe))
        plane.run()
        expect_summary(ctx, plane, failure_code="PROBE_CLAIM_INVALID", variant=label)
        others = [c.verb for c in plane.control.calls() if c.verb in ("report", "acquire", "read", "other")]
        ctx.expect(not others, expected="no report and no acquisition (variant %s)" % label,
                   actual=", ".join(others), diagnosis="a probe the node cannot name is never worked or reported")
    each_variant(ctx, variants, act)

    def unknown(label, _value):
        plane = ctx.plane()
        source = plane.add_source(columns=["city", "temp"], rows=ROWS)
        probe_id = plane.probe("no_such_kind", source)
        plane.start()
        report = plane.wait_report(probe_id)
        plane.wait_claims(len(plane.control.claims()) + 1)
        plane.close_session()
        plane.wait()
        ctx.expect(isinstance(report.doc, dict) and report.doc.get("outcome") == "failed",
                   expected="the probe of an unknown kind reported failed", actual=lambda: describe_run(plane),
                   diagnosis="whatever else is wrong with a probe is the probe's failure, not the session's")
        expect_summary(ctx, plane, terminal_state="closed", variant=label)
    each_variant(ctx, [("unknown kind", None)], unknown)

    def not_claimed(label, _value):
        patch = probe_doc({"probe_id": good, "probe_kind": "source_inspect", "ordinal": 1, "request": request})
        patch.claimed = None
        plane = ctx.plane(claim_patch=patch)
        plane.start()
        plane.wait_claims(3)
        plane.close_session()
        plane.wait()
        others = [c.verb for c in plane.control.calls() if c.verb in ("report", "acquire", "read", "other")]
        ctx.expect(not others, expected="no report and no acquisition (variant %s)" % label,
                   actual=", ".join(others), diagnosis="claimed absent, null or false means no probe, whatever else "
                                                       "the answer carries")
        expect_summary(ctx, plane, terminal_state="closed", variant=label)
    each_variant(ctx, [("claimed null beside a probe", None)], not_claimed)


@check("claim.fence-lost", clauses=["SESSION-CLAIM-6"], level="MUST",
       title="a claim refused ATTEMPT_FENCE_STALE, ATTEMPT_STALE or AUTHORIZATION_DENIED ends the session at once",
       fakes="the second claim refused 409 ATTEMPT_FENCE_STALE (a stale fence), 409 ATTEMPT_STALE, or 403 "
             "AUTHORIZATION_DENIED",
       expected="exactly one such claim and none after it; the summary names the code; exit 1 within 1 s")
def _(ctx):
    variants = [("stale fence", ("ATTEMPT_FENCE_STALE", None)),
                ("409 ATTEMPT_STALE", ("ATTEMPT_STALE", refusal(409, "ATTEMPT_STALE"))),
                ("403 AUTHORIZATION_DENIED", ("AUTHORIZATION_DENIED", refusal(403, "AUTHORIZATION_DENIED")))]

    def act(label, value):
        code, fault = value
        plane = ctx.plane()
        if fault is not None:
            plane.control.add_fault(fault, plane.control.claim_match(skip=1, first=1))
        plane.start()
        plane.wait_claims(1)
        if fault is None:
            plane.control.stale_fence()
        plane.wait()
        expect_summary(ctx, plane, failure_code=code, variant=label)
        claims = plane.control.claims()
        refused = [i for i, c in enumerate(claims) if c.code == code or (c.status == "fault" and fault is not None)]
        ctx.expect(len(refused) == 1 and refused[0] == len(claims) - 1,
                   expected="one refused claim and no claim after it (variant %s)" % label,
                   actual=lambda: "%d claims, refused at %s" % (len(claims), [i + 1 for i in refused]),
                   diagnosis="a lost fence means the attempt is someone else's: retrying only contends with them")
        refused_t = answered_at(claims[refused[0]])
        spent = sum(((c.exchange.t_end or c.t) - c.t) for c in plane.control.calls("append") if c.t >= refused_t)
        took = plane.result.t_exit - refused_t - spent
        ctx.expect(took <= STOP_BUDGET_S + SCHEDULE_SLACK_S,
                   expected="exit within %.2f s of the refusal, plus the final append" % (STOP_BUDGET_S
                                                                                       + SCHEDULE_SLACK_S),
                   actual="%.2f s" % took, diagnosis="a lost fence ends the session at once, with no backoff")
    each_variant(ctx, variants, act)


@check("claim.failures", clauses=["SESSION-CLAIM-7", "SESSION-BACKOFF-1"], level="MUST",
       title="claim failures are retried; an accepted answer resets the count; the tenth in a row ends the session",
       fakes="claim 1 answered 503, claim 2 ok, then ten failures in a row: reset, 200 not JSON, 200 with a "
             "duplicate key, 500, 409 with a code, 429, 400, 200 [], 503 with a code, 500 CLAIM_BACKEND_DOWN (about 10 s)",
       expected="exactly 12 claims; the session ends CLAIM_BACKEND_DOWN, exit 1; each retry within [v/2, v] of "
                "the jittered schedule")
def _(ctx):
    series = [faults.reset(after_bytes=0), faults.garbage(b"not json"),
              faults.garbage(b'{"session_state":"live","session_state":"closed"}'), faults.status(500),
              refusal(409, "CLAIM_CONFLICT"), faults.status(429), faults.status(400), faults.garbage(b"[]"),
              refusal(503, "STUDIO_BUSY"), refusal(500, "CLAIM_BACKEND_DOWN")]
    plan = [(1, faults.status(503))] + [(3 + i, fault) for i, fault in enumerate(series)]
    # Arrange
    plane = ctx.plane()
    fault_at(plane.control, plane.control.claim_match, plan)
    # Act
    plane.run()
    # Assert
    claims = plane.control.claims()
    ctx.expect(len(claims) == 2 + MAX_CONSECUTIVE_CLAIM_FAILURES,
               expected="%d claims: the session ends at the tenth failure in a row" % (
                   2 + MAX_CONSECUTIVE_CLAIM_FAILURES),
               actual=lambda: "%d claims (%s)" % (len(claims), describe_run(plane)),
               diagnosis="every failure counts (no answer and an unusable 200 included, D21), an accepted answer "
                         "resets the count, and the tenth failure in a row ends the session")
    expect_summary(ctx, plane, failure_code="CLAIM_BACKEND_DOWN")
    expect_backoff_gaps(ctx, plane, [(claims[0], 1)] + [(claims[2 + i], i + 1) for i in range(
        MAX_CONSECUTIVE_CLAIM_FAILURES - 1)], "a failed claim")
