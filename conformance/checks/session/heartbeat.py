"""Heartbeat: its own schedule, a steady cadence with a key per beat, failures that do not matter,
and no beat once the attempt is over (SESSION-HEARTBEAT-1..4, D1, D24).

The heartbeat is how the control plane tells a live worker from a dead one while a probe takes
long: a beat driven by the claim loop goes quiet exactly when it matters. Beats are scheduled
from the `attempt_started` append, k intervals after it, so that a slow beat never shifts the
next; each has a key of its own, since an idempotency store would otherwise replay the first
beat's answer for ever (D1). A failed beat is replaced by the next, never retried and never fatal:
the claim loop learns of a lost fence on its own calls.
"""

from conformance.checks import check
from conformance.checks.session._common import (SCHEDULE_SLACK_S, describe_run, each_variant, expect_report,
                                                expect_summary, fault_at, faults, refusal)
from conformance.planes.session.control import canonical
from conformance.timescale import expect_interval, tolerance

# A heartbeat interval the interval rule can judge (timescale.MIN_JUDGED_INTERVAL_S).
JUDGED_HEARTBEAT_S = 0.6
# A lease interval below MIN_INTERVAL_S (0.1 s, D24), which the node raises to the floor.
BELOW_FLOOR_S = 0.05
MIN_INTERVAL_S = 0.1
# The mean a floored heartbeat cannot go below: beat k is never sent before k x 0.1 s after the
# attempt_started append ended at the node, which is after the fake began to answer it, so from
# that moment on the mean per beat is at least 0.1 s whatever the load; a node that keeps 0.05 s
# shows 0.05 s plus its latency (0.06 to 0.07 s measured on a busy machine). The threshold keeps
# 5 % below the floor for the clocks' rounding.
FLOOR_MEAN_S = 0.95 * MIN_INTERVAL_S
# How many beats the floor is judged over.
FLOOR_BEATS = 10
# A final append held this long: several default intervals (0.2 s) in which no beat may start.
SLOW_FINAL_APPEND_S = 1.0
# A capability lifetime (seconds as served) that ends a session within a check.
SHORT_LIFETIME_S = 2.5
# SESSION-DEADLINE-2's allowance for a request that started before the expiry to arrive after it.
ARRIVAL_SLACK_S = 0.1
# A pending acquisition: the fake answers "pending" this many reads (ACQUISITION_POLL_S = 1 s apart).
PENDING_READS = 2
ROWS = [["Oslo", 3], ["Lima", 19]]


def _start_body(plane):
    lease = plane.control.lease
    binding = dict((k, lease[k]) for k in ("workspace_id", "run_id", "attempt_id", "fence"))
    binding["schema_version"] = "3.0.0"
    return canonical(binding)


def _gaps(calls):
    return [b.t - a.t for a, b in zip(calls, calls[1:])]


@check("heartbeat.during-probe", clauses=["SESSION-HEARTBEAT-1"], level="MUST",
       title="beats keep coming while a probe's acquisition is pending",
       fakes="heartbeat every %.1f s; one probe whose acquisition stays pending for %d reads (about %d s)"
             % (JUDGED_HEARTBEAT_S, PENDING_READS, PENDING_READS),
       expected="beats throughout the probe, keeping the interval by the interval rule")
def _(ctx):
    # Arrange
    plane = ctx.plane(heartbeat_s=JUDGED_HEARTBEAT_S)
    source = plane.add_source(columns=["city", "temp"], rows=ROWS, ready_after_reads=PENDING_READS)
    probe_id = plane.probe("sample_rows", source, limit=5)
    # Act
    plane.start()
    report = plane.wait_report(probe_id)
    plane.close_session()
    plane.wait()
    # Assert
    created = plane.control.calls("acquire")
    ctx.expect(bool(created), expected="an acquisition for the probe", actual=lambda: describe_run(plane),
               diagnosis="the run never reached the phase this check needs")
    begin, end = created[0].t, report.t
    beats = plane.control.heartbeats()
    around = [b for b in beats if begin - JUDGED_HEARTBEAT_S * 2 <= b.t <= end + JUDGED_HEARTBEAT_S * 2]
    inside = [b for b in beats if begin <= b.t <= end]
    ctx.expect(len(inside) >= 2, expected="at least 2 beats during the %.2f s the probe was acquired" % (end - begin),
               actual="%d" % len(inside),
               diagnosis="the heartbeat runs on its own schedule, not between claims: it must not go quiet "
                         "while a probe is acquired, downloaded or answered")
    expect_interval(ctx, _gaps(around), JUDGED_HEARTBEAT_S, "heartbeats around and during the probe",
                    diagnosis="the heartbeat keeps its cadence while a probe is in flight")


@check("heartbeat.cadence", clauses=["SESSION-HEARTBEAT-2"], level="MUST",
       title="beat k is due k intervals after the attempt_started append, with key k and the start's body",
       fakes="heartbeat every %.1f s; no probe" % JUDGED_HEARTBEAT_S,
       expected="the first beat one interval after the append ended, then one per interval (interval rule), "
                "keys session:<attempt>:heartbeat:1, 2, ..., each body byte-equal to attempt:start's")
def _(ctx):
    # Arrange
    plane = ctx.plane(heartbeat_s=JUDGED_HEARTBEAT_S)
    # Act
    plane.start()
    plane.wait_heartbeats(5)
    plane.close_session()
    plane.wait()
    # Assert
    beats = plane.control.heartbeats()
    appended = plane.control.calls("append")[0].exchange
    first = beats[0].t - (appended.t_end or appended.t_start)
    # Load only delays a beat: the interval rule's tolerance below, and the machine's slack above.
    low, high = JUDGED_HEARTBEAT_S - tolerance(JUDGED_HEARTBEAT_S), JUDGED_HEARTBEAT_S + tolerance(
        JUDGED_HEARTBEAT_S) + SCHEDULE_SLACK_S
    ctx.expect(low <= first <= high,
               expected="the first beat %.3f..%.3f s after the attempt_started append ended" % (low, high),
               actual="%.3f s" % first,
               diagnosis="the first beat is due one heartbeat interval after the attempt_started append, never "
                         "at once")
    expect_interval(ctx, _gaps(beats), JUDGED_HEARTBEAT_S, "heartbeats",
                    diagnosis="beat k is due k intervals after the append, whatever the earlier beats met")
    attempt_id = plane.control.lease["attempt_id"]
    keys = [b.key for b in beats]
    wanted = ["session:%s:heartbeat:%d" % (attempt_id, n) for n in range(1, len(beats) + 1)]
    ctx.expect(keys == wanted, expected="keys ending :heartbeat:1, :2, ... in order",
               actual=lambda: ", ".join(str(k).rsplit(":", 2)[-2:][-1] if k else "none" for k in keys),
               diagnosis="each beat has a key of its own, numbered from 1 (D1): a repeated key is replayed by an "
                         "idempotency store")
    body = _start_body(plane)
    ctx.expect(all(b.body == body for b in beats), expected="every beat's body byte-equal to attempt:start's",
               actual=lambda: repr(next(b.body for b in beats if b.body != body)[:200]),
               diagnosis="a beat's body is the attempt-callback document, the same bytes as attempt:start's")


@check("heartbeat.floor", clauses=["SESSION-HEARTBEAT-2"], level="MUST",
       title="a heartbeat interval below 0.1 s is raised to 0.1 s",
       fakes="heartbeat_interval_seconds %.2f" % BELOW_FLOOR_S,
       expected="over %d beats, a mean of at least %.3f s per beat from the attempt_started append's answer"
                % (FLOOR_BEATS, FLOOR_MEAN_S))
def _(ctx):
    # Arrange
    plane = ctx.plane(heartbeat_s=BELOW_FLOOR_S)
    # Act
    plane.start()
    beats = plane.wait_heartbeats(FLOOR_BEATS)
    plane.close_session()
    plane.wait()
    # Assert
    appended = plane.control.calls("append")[0].exchange
    mean = (beats[FLOOR_BEATS - 1].t - (appended.t_answer or appended.t_start)) / FLOOR_BEATS
    ctx.expect(mean >= FLOOR_MEAN_S, expected="a mean of at least %.3f s per beat" % FLOOR_MEAN_S,
               actual="%.3f s" % mean,
               diagnosis="the heartbeat interval is floored at MIN_INTERVAL_S = 0.1 s (D24): a control plane's "
                         "tiny interval must not become a hot loop")


@check("heartbeat.failures-ignored", clauses=["SESSION-HEARTBEAT-3", "SESSION-CALLBACK-6"], level="MUST",
       title="refused, reset and hung beats are neither retried nor fatal",
       fakes="heartbeat every %.1f s; beat 1 answered 503, beat 2 409 ATTEMPT_FENCE_STALE, beat 3 reset, beat 4 "
             "never answered, every later beat 500; one probe" % JUDGED_HEARTBEAT_S,
       expected="the beats keep their cadence with keys 1, 2, ... (no retry), the hung beat cut within its "
                "interval, the probe answered, claims going on, and the session closing normally")
def _(ctx):
    # Arrange
    plane = ctx.plane(heartbeat_s=JUDGED_HEARTBEAT_S)
    control = plane.control
    fault_at(control, control.heartbeat_match, [(1, faults.status(503)), (2, refusal(409, "ATTEMPT_FENCE_STALE")),
                                                (3, faults.reset(after_bytes=0)), (4, faults.hang())])
    control.add_fault(faults.status(500), control.heartbeat_match())
    source = plane.add_source(columns=["city", "temp"], rows=ROWS)
    probe_id = plane.probe("sample_rows", source, limit=5)
    # Act
    plane.start()
    beats = plane.wait_heartbeats(6)
    claims_before = len(control.claims())
    plane.wait_claims(claims_before + 2)
    plane.close_session()
    plane.wait()
    # Assert
    expect_report(ctx, plane, probe_id, "succeeded")
    expect_summary(ctx, plane, terminal_state="closed")
    beats = control.heartbeats()
    attempt_id = control.lease["attempt_id"]
    keys = [b.key for b in beats]
    ctx.expect(keys == ["session:%s:heartbeat:%d" % (attempt_id, n) for n in range(1, len(beats) + 1)],
               expected="one beat per key, 1, 2, ... in order", actual=lambda: ", ".join(map(str, keys)),
               diagnosis="a failed beat is not retried: the next beat, with the next key, comes on schedule")
    expect_interval(ctx, _gaps(beats), JUDGED_HEARTBEAT_S, "failing heartbeats",
                    diagnosis="a failed or hung beat neither delays the next nor brings it early")
    # A beat is bounded by min(interval, CALLBACK_TIMEOUT_S): the hung one is cut at the interval, and
    # the next is due at most one interval later.
    longest = max(_gaps(beats))
    bound = 2 * JUDGED_HEARTBEAT_S + SCHEDULE_SLACK_S
    ctx.expect(longest <= bound, expected="no gap between beats above %.2f s" % bound, actual="%.3f s" % longest,
               diagnosis="a heartbeat's exchange is bounded by the heartbeat interval, not CALLBACK_TIMEOUT_S: a "
                         "hung beat must not hold back the next")


@check("heartbeat.end", clauses=["SESSION-HEARTBEAT-4"], level="MUST",
       title="no beat starts after the attempt_finished append has begun, or at the deadline",
       fakes="a closed session whose attempt_finished append is answered %.1f s late; a capability that "
             "expires %.1f s after the lease" % (SLOW_FINAL_APPEND_S, SHORT_LIFETIME_S),
       expected="no beat arrives after the attempt_finished append arrived; none after the expiry")
def _(ctx):
    def closed(label, _value):
        plane = ctx.plane()
        plane.control.add_fault(faults.delay(SLOW_FINAL_APPEND_S), plane.control.events_match(skip=1, first=1))
        plane.start()
        plane.wait_heartbeats(2)
        plane.close_session()
        plane.wait()
        expect_summary(ctx, plane, terminal_state="closed", variant=label)
        finished = [e.call.t for e in plane.control.progress_events() if e.event_type == "attempt_finished"]
        ctx.expect(bool(finished), expected="an attempt_finished append", actual=lambda: describe_run(plane),
                   diagnosis="the run never reached the phase this check needs")
        late = [b.t - finished[0] for b in plane.control.heartbeats() if b.t > finished[0]]
        ctx.expect(not late, expected="no beat after the attempt_finished append began (variant %s)" % label,
                   actual=lambda: "beats %s s after it" % ", ".join("%.3f" % t for t in late),
                   diagnosis="the heartbeat stops before the last append: attempt_finished is the last word")

    def expired(label, _value):
        plane = ctx.plane(lifetime_s=SHORT_LIFETIME_S)
        plane.start()
        plane.wait()
        expect_summary(ctx, plane, terminal_state="capability_expired", variant=label)
        expiry = plane.control.expiry()[1]
        late = [b.t - expiry for b in plane.control.heartbeats() if b.t > expiry + ARRIVAL_SLACK_S]
        ctx.expect(not late, expected="no beat after the expiry (variant %s)" % label,
                   actual=lambda: "beats %s s after it" % ", ".join("%.3f" % t for t in late),
                   diagnosis="no beat starts at or after the deadline")
        ctx.expect(bool(plane.control.heartbeats()), expected="beats before the expiry",
                   actual="none", diagnosis="the run never reached the phase this check needs")

    each_variant(ctx, [("closed, slow last append", None)], closed)
    each_variant(ctx, [("capability expiry", None)], expired)
