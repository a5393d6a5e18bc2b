"""Retries and backoff: one jittered schedule, Retry-After as a floor, and what is never retried
(SESSION-BACKOFF-1..3, D25).

Workers that fail together must not retry together: the n-th consecutive retry waits a draw from
[v/2, v], v doubling from the server's own interval up to 16 times it, so a control plane that
raises its interval slows every worker, and an outage of about a minute is ridden out. A
`Retry-After` the server sends is a floor; one the node cannot read counts as none. What is not
idempotent, or is replaced by the next attempt anyway, is sent once.
"""

from conformance.checks import check
from conformance.checks.session._common import (PHASE_TIMEOUT_S, SCHEDULE_SLACK_S, answered_at, backoff_ceiling,
                                                began, describe_run, each_variant, expect_summary, fault_at, faults)
from conformance.timescale import tolerance

# The claim interval the lease and every answer carry: the base of claim retries (D25).
BASE_S = 0.3
# A retry delay is measured from the failed answer's first byte to the moment the next attempt
# began at the fake, which only adds the node's latency to the draw: never shorter than it. This
# allows the rounding of the two readings of one monotonic clock.
CLOCK_EPSILON_S = 0.005
# The schedule is observed over SERIES runs of FAILURES failed claims, each ended by an accepted
# claim (which resets the count): retries n = 1..3, v = 0.3, 0.6, 1.2 s.
SERIES = 5
FAILURES = 3
# Jitter. The contract's test: over one series of retries, ratios of delay to v that differ by
# more than JITTER_SPREAD. Only retries with v >= JITTER_MIN_V_S are used: there a node without
# jitter shows ratios of 1 plus its latency over v, and that latency (from the answer to the next
# connection: a few ms, up to 40 ms measured on a busy 2-core machine) moves a ratio by 0.07 at
# most. A correct node draws each delay uniformly from [v/2, v], so its ratio is uniform on
# [0.5, 1] (width 0.5); the measure adds a latency drawn independently of it, which shifts each
# ratio's interval, and shifting independent uniform intervals apart only lowers the chance that
# all of them fall within the spread of one another. So the chance that a correct node shows k
# ratios within 0.1 of each other is at most that of k uniform draws on [0, 1] within d =
# 0.1 / 0.5 = 0.2: k d^(k-1) - (k-1) d^k. With k = 10 (five series, v = 0.6 and 1.2 in each):
# 10 x 0.2^9 - 9 x 0.2^10 = 4.2e-6, a false failure in about 1 in 240,000 runs (the requirement is
# below 1 in 10,000; k = 8 would give 8.4e-5).
JITTER_SPREAD = 0.1
JITTER_MIN_V_S = 0.6
# SESSION-ACQUIRE-4 (D33): the base of acquisition read retries; it does not scale.
ACQUISITION_POLL_S = 1.0
# Failed reads in a row: retries n = 1, 2 (v = 1 s, 2 s).
FAILED_READS = 2
# The default claim interval as served (1 contract second scaled): the base where a check keeps it.
DEFAULT_POLL_S = 0.1
# Retry-After (whole seconds, SESSION-BACKOFF-2): honoured, it outlasts any draw at base 0.1 s.
RETRY_AFTER_S = 1
ROWS = [["Oslo", 3], ["Lima", 19]]


def _retry_gaps(plane, calls, failed):
    """[(n, v, measured delay)] for each failed call (with n, its place in a run) followed by another."""
    index = dict((c.exchange.seq, i) for i, c in enumerate(calls))
    found = []
    for call, n in failed:
        after = index[call.exchange.seq] + 1
        if after < len(calls):
            found.append((n, backoff_ceiling(BASE_S, n), began(plane.control, calls[after]) - answered_at(call)))
    return found


@check("backoff.schedule", clauses=["SESSION-BACKOFF-1"], level="MUST",
       title="the n-th consecutive retry waits a draw from [v/2, v], v doubling from the interval in force",
       fakes="claim interval %.1f s; claims answered 503 three times in a row, then ok, five times over" % BASE_S,
       expected="each retry's delay within [v/2, v] (plus the interval rule's tolerance and the machine's slack "
                "above); over the retries "
                "with v >= %.1f s, ratios of delay to v that differ by more than %.1f" % (JITTER_MIN_V_S,
                                                                                        JITTER_SPREAD))
def _(ctx):
    plan, failed_at = [], []
    for series in range(SERIES):
        first = 1 + series * (FAILURES + 1)
        plan += [(first + i, faults.status(503)) for i in range(FAILURES)]
        failed_at += [(first + i, i + 1) for i in range(FAILURES)]
    # Arrange
    plane = ctx.plane(claim_poll_s=BASE_S)
    fault_at(plane.control, plane.control.claim_match, plan)
    # Act
    plane.start()
    longest = SERIES * (BASE_S + sum(backoff_ceiling(BASE_S, n) for n in range(1, FAILURES + 1)))
    plane.wait_claims(SERIES * (FAILURES + 1) + 1, timeout=PHASE_TIMEOUT_S + 2 * longest)
    plane.close_session()
    plane.wait()
    # Assert
    claims = plane.control.claims()
    gaps = _retry_gaps(plane, claims, [(claims[k - 1], n) for k, n in failed_at])
    # Load only lengthens a delay as measured: the upper bound adds the machine's slack.
    wrong = ["retry %d waited %.3f s, outside [%.3f, %.3f]" % (n, gap, v / 2, v + tolerance(v) + SCHEDULE_SLACK_S)
             for n, v, gap in gaps if not v / 2 - CLOCK_EPSILON_S <= gap <= v + tolerance(v) + SCHEDULE_SLACK_S]
    ctx.expect(len(gaps) == len(failed_at) and not wrong,
               expected="each retry within [v/2, v], v = min(16 x base, base x 2^(n-1)), base %.1f s" % BASE_S,
               actual=lambda: "; ".join(wrong[:4]) or describe_run(plane),
               diagnosis="the n-th consecutive retry waits a draw from [v/2, v] (D25): doubling from the "
                         "interval in force, reset by an accepted answer")
    ratios = [gap / v for _n, v, gap in gaps if v >= JITTER_MIN_V_S - 1e-9]
    ctx.note("retries (n, v, delay): %s" % "; ".join("%d %.1f %.4f" % g for g in gaps))
    spread = max(ratios) - min(ratios)
    ctx.expect(spread > JITTER_SPREAD,
               expected="ratios of delay to v differing by more than %.1f over %d retries" % (JITTER_SPREAD,
                                                                                            len(ratios)),
               actual="ratios %s (spread %.3f)" % (", ".join("%.3f" % r for r in ratios), spread),
               diagnosis="the delays are drawn from [v/2, v], not fixed: workers that failed together must not "
                         "retry together")


@check("backoff.read-base", clauses=["SESSION-BACKOFF-1"], level="MUST",
       title="a failed acquisition read is retried on the schedule whose base is ACQUISITION_POLL_S",
       fakes="one probe whose acquisition is pending; its first %d reads answered 503" % FAILED_READS,
       expected="the n-th retried read within [v/2, v] of the failure, v = %.0f s x 2^(n-1); the probe answered"
                % ACQUISITION_POLL_S)
def _(ctx):
    # Arrange
    plane = ctx.plane()
    source = plane.add_source(columns=["city", "temp"], rows=ROWS, ready_after_reads=1)
    probe_id = plane.probe("sample_rows", source, limit=5)
    plane.control.add_fault(faults.status(503), plane.control.acquisition_read_match(first=FAILED_READS))
    # Act
    plane.start()
    report = plane.wait_report(probe_id, timeout=PHASE_TIMEOUT_S + 2 * ACQUISITION_POLL_S * 2 ** FAILED_READS)
    plane.close_session()
    plane.wait()
    # Assert
    reads = plane.control.calls("read")
    wrong = []
    for n in range(1, FAILED_READS + 1):
        if n >= len(reads):
            wrong.append("retry %d never came" % n)
            continue
        v = backoff_ceiling(ACQUISITION_POLL_S, n)
        gap = began(plane.control, reads[n]) - answered_at(reads[n - 1])
        high = v + tolerance(v) + SCHEDULE_SLACK_S
        if not v / 2 - CLOCK_EPSILON_S <= gap <= high:
            wrong.append("retry %d waited %.3f s, outside [%.3f, %.3f]" % (n, gap, v / 2, high))
    ctx.expect(not wrong, expected="each retried read within [v/2, v], base ACQUISITION_POLL_S",
               actual=lambda: "; ".join(wrong) + " (%s)" % describe_run(plane),
               diagnosis="a failed acquisition read waits a draw from [v/2, v] with base ACQUISITION_POLL_S (1 s), "
                         "doubling per failure in a row (D25)")
    ctx.expect(isinstance(report.doc, dict) and report.doc.get("outcome") == "succeeded",
               expected="the probe answered once a read succeeded", actual=lambda: describe_run(plane),
               diagnosis="a transient read failure is retried, not the probe's end")


@check("backoff.retry-after", clauses=["SESSION-BACKOFF-2"], level="MUST",
       title="a refusal's Retry-After is a floor on the next attempt; 0 or a value past 3600 counts as none",
       fakes="a claim refused 429 with Retry-After: %d; a report refused 503 with Retry-After: %d; claims "
             "refused 503 with Retry-After: 0 and 3601" % (RETRY_AFTER_S, RETRY_AFTER_S),
       expected="the next claim and the resent report no sooner than %d s after the refusal; after 0 and 3601 the "
                "next claim on the jittered schedule (within v plus its tolerance and the machine's slack)"
                % RETRY_AFTER_S)
def _(ctx):
    def claim(label, value):
        retry_after, honoured = value
        plane = ctx.plane()
        plane.control.add_fault(faults.status(429 if honoured else 503, retry_after_s=retry_after),
                                plane.control.claim_match(first=1))
        plane.start()
        claims = plane.wait_claims(2)
        plane.close_session()
        plane.wait()
        waited = began(plane.control, claims[1]) - answered_at(claims[0])
        if honoured:
            ctx.expect(waited >= retry_after - CLOCK_EPSILON_S,
                       expected="the next claim no sooner than %d s (variant %s)" % (retry_after, label),
                       actual="%.3f s" % waited,
                       diagnosis="a Retry-After of 1..3600 whole seconds is a floor on the next attempt")
        else:
            bound = DEFAULT_POLL_S + tolerance(DEFAULT_POLL_S) + SCHEDULE_SLACK_S
            ctx.expect(waited <= bound, expected="the next claim within %.3f s (variant %s)" % (bound, label),
                       actual="%.3f s" % waited,
                       diagnosis="a Retry-After that is 0, past 3600, a date or other text counts as none")
        expect_summary(ctx, plane, terminal_state="closed", variant=label)
    each_variant(ctx, [("claim 429, Retry-After: %d" % RETRY_AFTER_S, (RETRY_AFTER_S, True)),
                       ("claim 503, Retry-After: 0", (0, False)), ("claim 503, Retry-After: 3601", (3601, False))],
                 claim)

    def report(label, _value):
        plane = ctx.plane()
        source = plane.add_source(columns=["city", "temp"], rows=ROWS)
        probe_id = plane.probe("sample_rows", source, limit=5)
        plane.control.add_fault(faults.status(503, retry_after_s=RETRY_AFTER_S),
                                plane.control.report_match(first=1))
        plane.start()
        plane.wait_for(lambda: len(plane.control.reports(probe_id)) >= 2, "the report sent again")
        plane.close_session()
        plane.wait()
        sent = plane.control.reports(probe_id)
        waited = began(plane.control, sent[1]) - answered_at(sent[0])
        ctx.expect(waited >= RETRY_AFTER_S - CLOCK_EPSILON_S,
                   expected="the report resent no sooner than %d s (variant %s)" % (RETRY_AFTER_S, label),
                   actual="%.3f s" % waited, diagnosis="a refused report's Retry-After is a floor on its resend")
        expect_summary(ctx, plane, terminal_state="closed", variant=label)
    each_variant(ctx, [("report 503, Retry-After: %d" % RETRY_AFTER_S, None)], report)


@check("backoff.never-retried", clauses=["SESSION-BACKOFF-3"], level="MUST",
       title="identity, exchange, attempt:start, an event append, an acquisition create and a download are sent once",
       fakes="each answered 503 (the store's bundle GET too)",
       expected="one request for each; the identity, exchange and start failures end the session (exit 1); the "
                "append is dropped and the session goes on; the create and the download fail their probe")
def _(ctx):
    def fatal(label, value):
        fake_name, match_name, count = value
        plane = ctx.plane()
        fake = getattr(plane, fake_name)
        fake.add_fault(faults.status(503), getattr(fake, match_name)())
        plane.run()
        sent = count(plane)
        ctx.expect(sent == 1 and plane.result.exit_code == 1,
                   expected="one request and exit 1 (variant %s)" % label,
                   actual=lambda: "%d request(s); %s" % (sent, describe_run(plane)),
                   diagnosis="the identity request, the exchange and attempt:start are sent once")
    each_variant(ctx, [
        ("identity 503", ("metadata", "identity_match", lambda plane: len(plane.metadata.transcript))),
        ("exchange 503", ("control", "exchange_match", lambda plane: len(plane.control.calls("exchange")))),
        ("attempt:start 503", ("control", "start_match", lambda plane: len(plane.control.calls("start"))))], fatal)

    def append(label, _value):
        plane = ctx.plane()
        plane.control.add_fault(faults.status(503), plane.control.events_match(first=1))
        plane.start()
        plane.wait_claims(3)
        plane.close_session()
        plane.wait()
        carrying = [c for c in plane.control.calls("append")
                    if isinstance(c.doc, list) and any(isinstance(e, dict) and e.get("event_type")
                                                       == "attempt_started" for e in c.doc)]
        ctx.expect(len(carrying) == 1, expected="attempt_started in one append only (variant %s)" % label,
                   actual="in %d appends" % len(carrying),
                   diagnosis="an event append that fails is dropped, not retried")
        expect_summary(ctx, plane, terminal_state="closed", variant=label)
    each_variant(ctx, [("event append 503", None)], append)

    def probe(label, where):
        plane = ctx.plane()
        source = plane.add_source(columns=["city", "temp"], rows=ROWS)
        probe_id = plane.probe("sample_rows", source, limit=5)
        if where == "create":
            plane.control.add_fault(faults.status(503), plane.control.acquisition_match())
        else:
            plane.store.add_fault(faults.status(503), source.match())
        plane.start()
        report = plane.wait_report(probe_id)
        plane.close_session()
        plane.wait()
        sent = (len(plane.control.calls("acquire")) if where == "create"
                else len([ex for ex in plane.store.transcript if ex.key == source.key]))
        ctx.expect(sent == 1, expected="one %s (variant %s)" % ("create" if where == "create" else "download GET",
                                                               label),
                   actual="%d" % sent, diagnosis="an acquisition create and a download are never retried: they "
                                                 "fail their probe")
        ctx.expect(isinstance(report.doc, dict) and report.doc.get("outcome") == "failed",
                   expected="the probe reported failed (variant %s)" % label, actual=lambda: describe_run(plane),
                   diagnosis="a failed create or download fails its probe, and the session goes on")
        expect_summary(ctx, plane, terminal_state="closed", variant=label)
    each_variant(ctx, [("acquisition create 503", "create"), ("download 503", "download")], probe)
