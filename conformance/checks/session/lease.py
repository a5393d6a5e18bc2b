"""The lease: its exact shape, judged before its capability is ever used.

Every rule of SESSION-LEASE-1..7 is checked before the first capability call; a lease that
breaks one is SESSION_LEASE_INVALID (or, for its window, SESSION_LEASE_EXPIRY_UNREASONABLE),
exit 1, and its capability is discarded unused: a node that reads a lease with defaults and
truthiness would turn a malformed answer into a bearer, a fence or an allowlist. The control
plane builds the lease at the exchange; each variant changes one key through the plane's
lease_patch option (section *The lease* of the fake), and expect_lease_refused asserts that
nothing followed the exchange. The accepted variants pin the other edge: a window just under
30 minutes, a callback base with a path and a trailing '/', the floor of the intervals, and an
allowlist that is absent or empty (D3: it admits no source).
"""

import time

from conformance.checks import check
from conformance.checks.session._common import (
    capability_calls, describe_run, each_variant, expect_lease_refused, expect_report,
    expect_summary, lease_patch)
from conformance.planes.session import OMIT, TEMPLATES, deploy
from conformance.planes.session.control import utc_text

UPPER_UUID = "6BA7B810-9DAD-41D1-80B4-00C04FD430C8"
PREFIX = "/internal/v3/producer/"
# A capability window in seconds: just over and just under MAX_SESSION_CAPABILITY_REMAINING_SECONDS.
OVER_WINDOW_S = 31 * 60
UNDER_WINDOW_S = 29 * 60 + 50
# SESSION-LEASE-6 (D24): the floor the node applies to the lease's two intervals, and what the check
# hands out below it.
MIN_INTERVAL_S = 0.1
BELOW_FLOOR_S = 0.01
# Claims the floor check waits for: with the floor, ten take about a second.
FLOOR_CLAIMS = 10
# How much shorter than the floor a gap between two claims may look: both ends are arrival times at
# the fake, and a wait the node measures from its answer can only make the gap longer; this is
# the timer's own granularity.
FLOOR_TOLERANCE = 0.9
# The expiry a malformed-timestamp variant respells: far enough out that only its form can be wrong.
FORM_EXPIRY_S = 60.0


def _template(verb):
    return TEMPLATES[verb][1]


def _all_templates():
    return [_template(verb) for verb in TEMPLATES]


def _refused_variants(ctx, variants, code="SESSION_LEASE_INVALID", **options):
    """Each variant (label, changes for lease_patch) refused as `code` with no capability call."""
    def act(label, changes):
        plane = ctx.plane(lease_patch=lease_patch(**changes), **options)
        plane.close_session()  # a node that wrongly goes on ends at its first claim
        plane.run()
        expect_lease_refused(ctx, plane, code, label)

    each_variant(ctx, variants, act)


def _runs_to_close(ctx, plane, label):
    """Start, wait for the first claim, close; the session closed normally."""
    plane.start()
    plane.wait_claims(1)
    plane.close_session()
    plane.wait()
    expect_summary(ctx, plane, terminal_state="closed", variant=label)


@check("lease.keys", clauses=["SESSION-LEASE-1"], level="MUST",
       title="a lease without exactly its fifteen keys is refused before any capability call",
       fakes="the lease lacks idle_timeout_seconds, lacks context, or has an extra key (one variant per run)",
       expected="SESSION_LEASE_INVALID, exit 1, nothing after the exchange")
def _(ctx):
    _refused_variants(ctx, [
        ("idle_timeout_seconds missing", {"idle_timeout_seconds": OMIT}),
        ("context missing", {"context": OMIT}),
        ("an extra key", {"lease_extension": {"ttl": 60}}),
        ("an extra null key", {"nonce": None}),
    ])


@check("lease.identity", clauses=["SESSION-LEASE-2"], level="MUST",
       title="canonical UUIDs and integer generation and fence, or the lease is refused",
       fakes="one key wrong per run: a session id in upper case, a run id without hyphens, "
             "generation true or 0, fence \"7\" or 7.0",
       expected="SESSION_LEASE_INVALID, exit 1, nothing after the exchange")
def _(ctx):
    _refused_variants(ctx, [
        ("session_id in upper case", {"session_id": UPPER_UUID}),
        ("run_id without hyphens", {"run_id": UPPER_UUID.lower().replace("-", "")}),
        ("generation true", {"generation": True}),
        ("generation 0", {"generation": 0}),
        ("fence as a string", {"fence": "7"}),
        ("fence 7.0", {"fence": 7.0}),
    ])


@check("lease.capability", clauses=["SESSION-LEASE-3"], level="MUST",
       title="only a capability-shaped token becomes a bearer",
       fakes="the capability is a JWT, a URL, mr_cap_ with one character less than MIN_CAPABILITY_BYTES (39) or "
             "one more than MAX_CAPABILITY_BYTES (263) allow, one with a '.', a "
             "`Bearer ` prefix, a number (one variant per run); then one of exactly MAX_CAPABILITY_BYTES",
       expected="SESSION_LEASE_INVALID, exit 1, the value in no request; the longest capability runs a session")
def _(ctx):
    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjb25mb3JtYW5jZSJ9.c2lnbmF0dXJlLWJ5dGVz"
    shortest, longest = deploy.MIN_CAPABILITY_BYTES - len("mr_cap_"), deploy.MAX_CAPABILITY_BYTES - len("mr_cap_")
    _refused_variants(ctx, [
        ("a JWT", {"capability": jwt}),
        ("a URL", {"capability": "https://studio.invalid/capabilities/mr_cap_" + "a" * 32}),
        ("one character too short", {"capability": "mr_cap_" + "b" * (shortest - 1)}),
        ("one character too long", {"capability": "mr_cap_" + "c" * (longest + 1)}),
        ("a dot inside", {"capability": "mr_cap_" + "d" * 20 + "." + "d" * 20}),
        ("a Bearer prefix", {"capability": "Bearer mr_cap_" + "e" * 40}),
        ("a number", {"capability": 123456789012345}),
    ])
    ctx.note("variant: MAX_CAPABILITY_BYTES (accepted)")
    plane = ctx.plane(lease_patch=lease_patch(capability="mr_cap_" + "F" * longest))
    _runs_to_close(ctx, plane, "the longest capability")
    ctx.expect(len(capability_calls(plane)) >= 2, expected="capability calls bearing the longest capability",
               actual=lambda: describe_run(plane), diagnosis="a capability of MAX_CAPABILITY_BYTES is valid")


@check("lease.window", clauses=["SESSION-LEASE-4"], level="MUST",
       title="the expiry is a canonical timestamp; expired at admission ends quietly, over 30 minutes is refused",
       fakes="capability_expires_at with +00:00, with 7 fraction digits, on 30 February, with a lower-case z (one "
             "per run); then a window of -1 s, of 31 min, of 29 min 50 s",
       expected="SESSION_LEASE_INVALID for the forms; capability_expired, exit 0, no capability call for -1 s; "
                "SESSION_LEASE_EXPIRY_UNREASONABLE, exit 1, no capability call for 31 min; 29 min 50 s runs")
def _(ctx):
    def later(form):  # the expiry FORM_EXPIRY_S out, respelled at the exchange
        return lambda: form(utc_text(time.time() + FORM_EXPIRY_S))

    forms = [
        ("+00:00 offset", later(lambda t: t[:-1] + "+00:00")),
        ("7 fraction digits", later(lambda t: t[:-1] + "1Z")),
        ("30 February", later(lambda t: "2031-02-30" + t[10:])),
        ("lower-case z", later(lambda t: t[:-1] + "z")),
    ]

    def act(label, build):
        def patch(lease):
            lease["capability_expires_at"] = build()
            return lease
        plane = ctx.plane(lease_patch=patch)
        plane.close_session()  # a node that wrongly goes on ends at its first claim
        plane.run()
        expect_lease_refused(ctx, plane, "SESSION_LEASE_INVALID", label)

    each_variant(ctx, forms, act)
    ctx.note("variant: expired a second before admission")
    plane = ctx.plane(lifetime_s=-1.0)
    plane.close_session()  # a node that wrongly goes on ends at its first claim
    plane.run()
    expect_summary(ctx, plane, terminal_state="capability_expired", variant="expired at admission")
    ctx.expect(not capability_calls(plane) and [c.verb for c in plane.control.calls()] == ["exchange"],
               expected="no capability call of any kind", actual=lambda: describe_run(plane),
               diagnosis="a lease already expired is admitted as expired: nothing is sent with a dead capability")
    ctx.note("variant: a 31-minute window")
    plane = ctx.plane(lifetime_s=float(OVER_WINDOW_S))
    plane.close_session()  # a node that wrongly goes on ends at its first claim
    plane.run()
    expect_lease_refused(ctx, plane, "SESSION_LEASE_EXPIRY_UNREASONABLE", "31-minute window")
    ctx.note("variant: a window of 29 min 50 s (accepted)")
    _runs_to_close(ctx, ctx.plane(lifetime_s=float(UNDER_WINDOW_S)), "29 min 50 s window")


@check("lease.callbacks", clauses=["SESSION-LEASE-5"], level="MUST",
       title="callback_base_url is an https URL and allowed_callback_paths a list of producer paths that "
             "allows start, claim and result",
       fakes="one key wrong per run: the base over http or with a query; the paths empty, not a list, one outside "
             "/internal/v3/producer/, one not a string, or none allowing the claim; then a "
             "base on a path with a trailing '/' and only the three required templates",
       expected="SESSION_LEASE_INVALID, exit 1, nothing after the exchange; the last lease runs a session, its "
                "calls under the base's path")
def _(ctx):
    def paths_without(verb):
        return [path for path in _all_templates() if path != _template(verb)]

    _refused_variants(ctx, [
        ("base over http", {"callback_base_url": lambda lease: "http" + lease["callback_base_url"][5:]}),
        ("base with a query", {"callback_base_url": lambda lease: lease["callback_base_url"] + "/cb?x=1"}),
        ("paths empty", {"allowed_callback_paths": []}),
        ("a path outside the producer API", {"allowed_callback_paths": _all_templates()
                                             + ["/admin/attempts/{attempt_id}:start"]}),
        ("paths a string", {"allowed_callback_paths": PREFIX}),
        ("a path that is a number", {"allowed_callback_paths": _all_templates() + [7]}),
        ("claim template missing", {"allowed_callback_paths": paths_without("claim")}),
    ])
    ctx.note("variant: a base with a path and a trailing '/', only the required templates (accepted)")
    required = [_template(verb) for verb in ("start", "claim", "report")]
    plane = ctx.plane(callback_prefix="/studio-callbacks", allowed_paths=required)
    plane.control.lease_patch = lambda lease: dict(lease, callback_base_url=lease["callback_base_url"] + "/")
    _runs_to_close(ctx, plane, "a base with a path")
    calls = capability_calls(plane)
    ctx.expect(calls and all(c.path.startswith("/studio-callbacks" + PREFIX) for c in calls),
               expected="every capability call under /studio-callbacks/internal/v3/producer/",
               actual=lambda: ", ".join(c.path for c in calls[:4]) or "no capability call",
               diagnosis="callback_base_url may carry a path (D16): it is the prefix of every capability call")


@check("lease.intervals", clauses=["SESSION-LEASE-6"], level="MUST",
       title="the three intervals are positive numbers; the heartbeat and claim intervals are floored at 0.1 s",
       fakes="one interval wrong per run: the heartbeat \"1\", true or -1; the claim poll 0; the idle timeout "
             "\"600\" or false; then both intervals at 0.01 s and no probe",
       expected="SESSION_LEASE_INVALID, exit 1, nothing after the exchange; with 0.01 s the claims and beats come "
                "no more often than every 0.1 s")
def _(ctx):
    _refused_variants(ctx, [
        ("heartbeat as a string", {"heartbeat_interval_seconds": "1"}),
        ("heartbeat true", {"heartbeat_interval_seconds": True}),
        ("heartbeat -1", {"heartbeat_interval_seconds": -1}),
        ("claim poll 0", {"claim_poll_interval_seconds": 0}),
        ("idle timeout as a string", {"idle_timeout_seconds": "600"}),
        ("idle timeout false", {"idle_timeout_seconds": False}),
    ])
    ctx.note("variant: both intervals 0.01 s (accepted, floored)")
    plane = ctx.plane(heartbeat_s=BELOW_FLOOR_S, claim_poll_s=BELOW_FLOOR_S)
    plane.start()
    plane.wait_claims(FLOOR_CLAIMS)
    plane.close_session()
    plane.wait()
    expect_summary(ctx, plane, terminal_state="closed", variant="intervals below the floor")
    claims = [c.t for c in plane.control.claims()]
    gaps = [b - a for a, b in zip(claims, claims[1:])]
    ctx.expect(min(gaps) >= MIN_INTERVAL_S * FLOOR_TOLERANCE,
               expected="claims at least %.1f s apart with a claim poll of %.2f s" % (MIN_INTERVAL_S, BELOW_FLOOR_S),
               actual="smallest gap %.3f s" % min(gaps),
               diagnosis="the claim interval is floored at MIN_INTERVAL_S (D24): never a hot loop on the server")
    beats = [c.t for c in plane.control.heartbeats()]
    span = (plane.result.t_exit - beats[0]) if beats else 0.0
    allowed = int(span / MIN_INTERVAL_S) + 2
    ctx.expect(len(beats) <= allowed,
               expected="at most %d heartbeats over %.2f s with a heartbeat of %.2f s" % (allowed, span, BELOW_FLOOR_S),
               actual="%d heartbeats" % len(beats),
               diagnosis="the heartbeat interval is floored at MIN_INTERVAL_S (D24)")


@check("lease.context", clauses=["SESSION-LEASE-7"], level="MUST",
       title="the context holds canonical ids and an allowlist of at most 32 UUIDs; an empty one admits "
             "no source",
       fakes="one context fault per run: not an object, dataset_id missing, table_id not a UUID, 33 source ids, "
             "one that is no UUID; then the "
             "allowlist absent (with an unknown context key and no table_id), then empty, each with one probe",
       expected="SESSION_LEASE_INVALID, exit 1, nothing after the exchange; without an allowlist the probe is "
                "reported failed PROBE_SOURCE_OUT_OF_SCOPE and no acquisition is created")
def _(ctx):
    many = ["%08x-0000-4000-8000-%012x" % (n, n) for n in range(33)]
    _refused_variants(ctx, [
        ("context a list", {"context": [UPPER_UUID.lower()]}),
        ("dataset_id missing", {"context": {"dataset_id": OMIT}}),
        ("table_id not a UUID", {"context": {"table_id": "table-1"}}),
        ("33 source ids", {"context": {"source_ids": many}}),
        ("a source id not a UUID", {"context": {"source_ids": ["source-1"]}}),
    ])

    def act(label, allowlist):
        plane = ctx.plane(lease_patch=lease_patch(context={"source_ids": allowlist, "table_id": OMIT,
                                                           "conformance_note": "ignored"}))
        probe_id = plane.probe("source_inspect")  # the source the fake would have allowed
        plane.start()
        expect_report(ctx, plane, probe_id, "failed", "PROBE_SOURCE_OUT_OF_SCOPE",
                      what="a probe with the allowlist %s" % label)
        plane.close_session()
        plane.wait()
        expect_summary(ctx, plane, terminal_state="closed", variant=label)
        creates = plane.control.calls("acquire")
        ctx.expect(not creates, expected="no acquisition create (variant %s)" % label,
                   actual="%d create(s)" % len(creates),
                   diagnosis="an absent or empty allowlist admits no source (D3): it never widens to everything")

    each_variant(ctx, [("absent", OMIT), ("empty", [])], act)
