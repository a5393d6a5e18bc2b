"""Retries and backoff: one jittered schedule for failed steps, the server's Retry-After as a floor,
the no-work wait, and the pace of idle and busy steps (SCAN-BACKOFF-1 to SCAN-BACKOFF-4).

A fleet of workers that fail together must not retry together, or a server that recovers is
knocked over again by the same wave: the n-th failed step in a row waits a draw from [v/2, v],
v = min(E x 2^(n-1), 8 E), so failures spread out and slow down, and an outage is ridden out at a
bounded rate. What the server asks for (a 503's or a 429's Retry-After, a 204's no-work wait) is a
floor the jitter never undercuts. Steps that found nothing to do wait the poll interval; steps
that did work go on at once, but never faster than every 0.1 s, so no bug in a step can turn a
slot into a busy loop against the server.
"""

import email.utils
import secrets
import time

from conformance.checks import check
from conformance.checks.scan._common import (CLOCK_EPSILON_S, PHASE_TIMEOUT_S, SCHEDULE_SLACK_S, calls,
                                             describe_run, each_variant, wait_between)

# SCAN-BACKOFF-1: the error delay E the schedule check passes (the contract's floor, 0.1 s), and
# the cap factor: v = min(E x 2^(n-1), BACKOFF_CAP_FACTOR x E).
ERROR_DELAY_S = 0.1
BACKOFF_CAP_FACTOR = 8
# Claims answered 500 in a row: n = 1..FAILURES (v = 0.1, 0.2, 0.4, then 0.8 s, capped, from n = 4).
FAILURES = 12
# Jitter. Only retries with v >= JITTER_MIN_V_S are used (n = 4..12, k = 9 of them): there a node
# without jitter shows ratios delay/v of 1 plus its latency over v, and that latency (the answer
# read, a state load and save, a TLS connect: a few ms, up to 40 ms on a busy 2-core machine) moves
# a ratio by 0.05 at most, so its ratios stay within JITTER_SPREAD of each other. A correct node
# draws each delay uniformly from [v/2, v]: its ratio is uniform on [0.5, 1] (width 0.5); the
# latency added to each only widens their spread. The chance that k independent uniform draws on
# [0, 1] all fall within d = JITTER_SPREAD / 0.5 = 0.2 of each other is k d^(k-1) - (k-1) d^k:
# with k = 9, 9 x 0.2^8 - 8 x 0.2^9 = 1.9e-5, a false failure in about 1 in 50,000 runs.
JITTER_SPREAD = 0.1
JITTER_MIN_V_S = 0.8
# SCAN-BACKOFF-2: the Retry-After values of the error answers (whole seconds), each far above the
# jittered error delay (at most 0.4 s for the three failures here).
RETRY_AFTER_503_S = 2
RETRY_AFTER_429_S = 1
# The HTTP-date is set this far ahead of the moment the check installs it (just after the second
# answer): the third answer comes at least RETRY_AFTER_429_S later, the date still ahead of it.
HTTP_DATE_AHEAD_S = 4
# SCAN-BACKOFF-3: the spread a fleet told the same Retry-After may add (1.1 x Retry-After).
NO_WORK_SPREAD = 1.1
# SCAN-BACKOFF-4: the floor between two steps of one slot.
MIN_STEP_S = 0.1
# The poll interval of the idle-poll check: large enough that a node stepping at the 0.1 s floor
# instead is plainly too fast.
IDLE_POLL_S = 0.4
IDLE_POLLS = 5
# A wait the work-pace check must not see (the poll interval and error delay it passes): a node
# that waits either after a step that did work is caught with room to spare.
LONG_WAIT_S = 3.0
# Claims answered with a valid 200 resolution in a row (each a step that did work).
RESOLVED_CLAIMS = 6


def ceiling(n):
    """v of the n-th consecutive failure (SCAN-BACKOFF-1)."""
    return min(ERROR_DELAY_S * 2 ** (n - 1), BACKOFF_CAP_FACTOR * ERROR_DELAY_S)


@check("backoff.schedule", clauses=["SCAN-BACKOFF-1"], level="MUST",
       title="the n-th failed step in a row waits a draw from [v/2, v], v = min(E x 2^(n-1), 8 E), with jitter",
       fakes="error delay %.1f s; the first %d claims answered 500" % (ERROR_DELAY_S, FAILURES),
       expected="each retry within [v/2, v] (plus the machine's slack above); over the retries with v = %.1f s, "
                "ratios of delay to v that differ by more than %.1f" % (JITTER_MIN_V_S, JITTER_SPREAD))
def _(ctx):
    # Arrange
    plane = ctx.plane()
    plane.server.add_fault(plane.server.error_answer(500, "internal"), plane.server.claim_match(first=FAILURES))
    # Act
    plane.start(error_delay_s=ERROR_DELAY_S)
    longest = sum(ceiling(n) for n in range(1, FAILURES + 1))
    claims = plane.wait_claims(FAILURES + 1, timeout=PHASE_TIMEOUT_S + longest + SCHEDULE_SLACK_S)
    # Assert
    gaps = [(n, ceiling(n), wait_between(plane, claims[n - 1], claims[n])) for n in range(1, FAILURES + 1)]
    ctx.note("retries (n, v, delay): %s" % "; ".join("%d %.1f %.3f" % g for g in gaps))
    wrong = ["retry %d waited %.3f s, outside [%.3f, %.3f]" % (n, gap, v / 2, v + SCHEDULE_SLACK_S)
             for n, v, gap in gaps if not v / 2 - CLOCK_EPSILON_S <= gap <= v + SCHEDULE_SLACK_S]
    ctx.expect(not wrong,
               expected="each retry within [v/2, v], v = min(%.1f x 2^(n-1), %.1f) s" % (
                   ERROR_DELAY_S, BACKOFF_CAP_FACTOR * ERROR_DELAY_S),
               actual=lambda: "; ".join(wrong[:4]),
               diagnosis="the n-th failure in a row waits a draw from [v/2, v], doubling from the error delay and "
                         "capped at 8 times it (D16)")
    ratios = [gap / v for _n, v, gap in gaps if v >= JITTER_MIN_V_S - 1e-9]
    spread = max(ratios) - min(ratios)
    ctx.expect(spread > JITTER_SPREAD,
               expected="ratios of delay to v differing by more than %.1f over %d retries" % (JITTER_SPREAD,
                                                                                            len(ratios)),
               actual="ratios %s (spread %.3f)" % (", ".join("%.3f" % r for r in ratios), spread),
               diagnosis="the delays are drawn from [v/2, v], not fixed: workers that failed together must not "
                         "retry together")


def _error_body(plane, code):
    return ('{"error":{"code":"%s","message":"busy (%s)"}}' % (code, plane.server.marker)).encode("ascii")


@check("backoff.retry-after", clauses=["SCAN-BACKOFF-2"], level="MUST",
       title="a 503's or 429's Retry-After, in seconds or as an HTTP-date, is a floor on the next attempt",
       fakes="error delay %.1f s; claim 1 answered 503 Retry-After: %d; claim 2 answered 429 Retry-After: %d; "
             "claim 3 answered 503 with Retry-After an HTTP-date about %d s ahead" % (
                 ERROR_DELAY_S, RETRY_AFTER_503_S, RETRY_AFTER_429_S, HTTP_DATE_AHEAD_S - RETRY_AFTER_429_S),
       expected="claim 2 no sooner than %d s after answer 1, claim 3 no sooner than %d s after answer 2, claim 4 "
                "no sooner than the date" % (RETRY_AFTER_503_S, RETRY_AFTER_429_S))
def _(ctx):
    # Arrange
    plane = ctx.plane()
    plane.server.add_fault(plane.server.error_answer(503, "unavailable", retry_after=RETRY_AFTER_503_S),
                           plane.server.claim_match(first=1))
    plane.server.add_fault(plane.server.error_answer(429, "rate_limited", retry_after=RETRY_AFTER_429_S),
                           plane.server.claim_match(first=1))
    # Act
    plane.start(error_delay_s=ERROR_DELAY_S)
    plane.wait_claims(2, timeout=PHASE_TIMEOUT_S + RETRY_AFTER_503_S)
    date_epoch = int(time.time()) + HTTP_DATE_AHEAD_S
    plane.server.script("claim", 503, _error_body(plane, "unavailable"),
                        headers=[("Retry-After", email.utils.formatdate(date_epoch, usegmt=True))])
    claims = plane.wait_claims(4, timeout=PHASE_TIMEOUT_S + RETRY_AFTER_429_S + HTTP_DATE_AHEAD_S)
    # Assert
    offset = time.time() - time.monotonic()  # wall = monotonic + offset
    date_wait = date_epoch - (claims[2].exchange.t_answer + offset)
    floors = [(RETRY_AFTER_503_S, "503 Retry-After: %d" % RETRY_AFTER_503_S),
              (RETRY_AFTER_429_S, "429 Retry-After: %d" % RETRY_AFTER_429_S),
              (date_wait, "503 Retry-After: %s (%.2f s ahead)" % (email.utils.formatdate(date_epoch, usegmt=True),
                                                                   date_wait))]
    for i, (floor, what) in enumerate(floors):
        gap = wait_between(plane, claims[i], claims[i + 1])
        ctx.expect(gap >= floor - CLOCK_EPSILON_S,
                   expected="after the %s, the next claim no sooner than %.2f s" % (what, floor),
                   actual="it came %.3f s after the answer" % gap,
                   diagnosis="a 429 or 503 with a Retry-After makes the wait at least that long, whatever the "
                             "jittered error delay says")


@check("backoff.no-work-wait", clauses=["SCAN-BACKOFF-3", "SCAN-CLAIM-4"], level="MUST",
       title="after a valid 204 the state is deleted and the next claim, with a fresh id, waits Retry-After",
       fakes="an empty queue: the first claim answered 204 with Retry-After 1 (then, on a fresh plane, 2); an "
             "assignment queued once that answer is out",
       expected="slot-0.json gone after the 204; the next claim carries a fresh id, between Retry-After and 1.1 x "
                "Retry-After seconds after the answer (plus the machine's slack above), and gets the assignment")
def _(ctx):
    def act(label, retry_after):
        # Arrange
        plane = ctx.plane(retry_after=retry_after)
        # Act
        plane.start(poll_s=MIN_STEP_S, error_delay_s=MIN_STEP_S)
        first = plane.wait_claims(1)[0]
        res = plane.add_assignment()
        plane.wait_phase(0, None)
        claims = plane.wait_claims(2, timeout=PHASE_TIMEOUT_S + retry_after)
        # Assert
        second = claims[1]
        ctx.expect(first.status == 204 and second.request_id not in (None, first.request_id),
                   expected="a fresh request id after the 204 (the first carried %s)" % first.request_id,
                   actual="the next claim carried %s" % second.request_id,
                   diagnosis="a valid 204 ends the claim: the state is deleted and the next claim is a new one")
        gap = wait_between(plane, first, second)
        low, high = retry_after - CLOCK_EPSILON_S, NO_WORK_SPREAD * retry_after + SCHEDULE_SLACK_S
        ctx.expect(low <= gap <= high,
                   expected="the next claim %.2f..%.2f s after the 204" % (low, high),
                   actual="it came %.3f s after" % gap,
                   diagnosis="the no-work wait is Retry-After to 1.1 x Retry-After, not the poll interval or the "
                             "error delay")
        ctx.expect(second.reservation is res,
                   expected="the fresh claim gets reservation %d" % res.reservation_id,
                   actual=lambda: describe_run(plane),
                   diagnosis="the claim after the no-work wait is an ordinary claim")
        plane.life.kill()
    each_variant(ctx, [("Retry-After 1", 1), ("Retry-After 2", 2)], act)


@check("backoff.idle-poll", clauses=["SCAN-BACKOFF-4"], level="MUST",
       title="a slot awaiting the server's resolution reads the status once every poll interval, nothing more",
       fakes="slot-0.json planted in awaiting_resolution (a 410 seen) for a reservation the server keeps "
             "unresolved; poll interval %.1f s; resolved expired after %d status reads" % (IDLE_POLL_S, IDLE_POLLS),
       expected="status reads %.1f s apart (plus the machine's slack above), no claim, upload or report meanwhile; "
                "then the state is cleaned up" % IDLE_POLL_S)
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment(queued=False)
    _request_id, doc = plane.grant(res)
    plane.write_slot(0, {"schema": 2, "phase": "awaiting_resolution", "assignment": doc, "runner": None,
                         "retained_work": [], "stale": {"status_code": 410, "code": "assignment_expired"}})
    # Act
    plane.start(poll_s=IDLE_POLL_S, error_delay_s=IDLE_POLL_S)
    reads = plane.wait_calls("status", IDLE_POLLS, timeout=PHASE_TIMEOUT_S + IDLE_POLLS * IDLE_POLL_S)
    others = calls(plane, "claim") + calls(plane, "bundle") + calls(plane, "terminal")
    plane.resolve(res, "expired")
    plane.wait_phase(0, None)
    # Assert
    gaps = [wait_between(plane, reads[i], reads[i + 1]) for i in range(IDLE_POLLS - 1)]
    wrong = ["%.3f s" % g for g in gaps if not IDLE_POLL_S - CLOCK_EPSILON_S <= g <= IDLE_POLL_S + SCHEDULE_SLACK_S]
    ctx.expect(not wrong,
               expected="status reads %.1f..%.1f s apart" % (IDLE_POLL_S, IDLE_POLL_S + SCHEDULE_SLACK_S),
               actual="gaps %s" % ", ".join("%.3f" % g for g in gaps),
               diagnosis="a step that did nothing waits the poll interval before the next")
    ctx.expect(not others,
               expected="no claim, upload or report while the slot awaits the resolution",
               actual=lambda: describe_run(plane),
               diagnosis="awaiting_resolution only reads the status (SCAN-RECONCILE-8)")


@check("backoff.work-pace", clauses=["SCAN-BACKOFF-4"], level="MUST",
       title="a step that did work is followed by the next at once, but never within 0.1 s",
       fakes="poll interval and error delay %.0f s; the first %d claims answered 200 with a valid resolution "
             "(work)" % (LONG_WAIT_S, RESOLVED_CLAIMS),
       expected="each next claim %.1f..%.1f s after the previous answer" % (MIN_STEP_S, MIN_STEP_S + SCHEDULE_SLACK_S))
def _(ctx):
    def resolution(_call, _status, _doc):
        return {"resolution": {"reservation_id": 7, "resolution": "expired", "receipt_id": secrets.token_hex(32),
                               "bundle_id": secrets.token_hex(16), "scan_event_id": secrets.token_hex(16)}}
    # Arrange
    plane = ctx.plane()
    plane.server.script("claim", 200, resolution, first=RESOLVED_CLAIMS)
    # Act
    plane.start(poll_s=LONG_WAIT_S, error_delay_s=LONG_WAIT_S)
    claims = plane.wait_claims(RESOLVED_CLAIMS + 1)
    # Assert
    gaps = [wait_between(plane, claims[i], claims[i + 1]) for i in range(RESOLVED_CLAIMS)]
    ctx.expect(all(c.status == 200 for c in claims[:RESOLVED_CLAIMS]),
               expected="the first %d claims answered 200" % RESOLVED_CLAIMS, actual=lambda: describe_run(plane),
               diagnosis="the worker's claims were not the ones this arrangement answers 200: claim again after each "
                         "resolved claim, one at a time")
    wrong = [g for g in gaps if not MIN_STEP_S - CLOCK_EPSILON_S <= g <= MIN_STEP_S + SCHEDULE_SLACK_S]
    ctx.expect(not wrong,
               expected="each next claim %.1f..%.1f s after the previous 200" % (MIN_STEP_S,
                                                                                 MIN_STEP_S + SCHEDULE_SLACK_S),
               actual="gaps %s" % ", ".join("%.3f" % g for g in gaps),
               diagnosis="a 200 resolution is work: the next step comes at once, yet no slot steps more often than "
                         "every 0.1 s")
