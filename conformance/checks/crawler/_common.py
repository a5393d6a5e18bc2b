"""Shared assertions of the crawler checks.

Each helper states one expectation in the contract's words, so a check reads as
Arrange / Act / Assert and a failure names what the node did instead.

Variants: many clauses list several inputs that must all be refused the same
way (every rule of the capability, every malformed base URL). `each_variant`
runs the node once per variant, on a fresh plane, and names the first variant
that went wrong, so the report says "variant 'uppercase host'" rather than a
loop index.
"""

from conformance import faults
from conformance.faults import Match
from conformance.planes import crawler_docs as docs
from conformance.planes.crawler import BUCKET, SESSION_ID

__all__ = ["faults", "Match", "docs", "BUCKET", "SESSION_ID", "STOP_BUDGET_S", "SHORT_DEADLINE_S",
           "DEADLINE_SLACK_S", "expect_outcome", "expect_no_network", "expect_untouched",
           "expect_reported", "expect_success", "each_variant", "run_variants", "retire_plane", "describe_run"]

# A stop must end the run this fast in conformance (CRAWLER-STOP-2..5).
STOP_BUDGET_S = 1.0

# The value checks give the timeout variables (CRAWLER-CONFIG-6) when they
# wait for a deadline, and the slack allowed on top of it for start-up, the
# report and a loaded machine.
SHORT_DEADLINE_S = 2.0
DEADLINE_SLACK_S = 4.0


def describe_run(plane):
    """One line: exit status, status line, and the last requests the fakes saw."""
    result = plane.result
    if result is None:
        return "the node did not run"
    line = plane.status_line()
    return "exit %s, status line %s; %s" % (
        result.exit_code, "%s/%s" % line if line else repr(plane.stderr_text()[:200]),
        plane.describe_exchanges())


def expect_outcome(ctx, plane, code, status, exit_code, variant=None):
    """The run ended with exactly this status line and exit status."""
    where = " (variant %s)" % variant if variant else ""
    expected = "status line {\"code\":\"%s\",\"status\":\"%s\"} and exit %d%s" % (code, status, exit_code, where)
    got = plane.status_line()
    ctx.expect(got == (code, status) and plane.result.exit_code == exit_code, expected=expected,
               actual=lambda: describe_run(plane),
               diagnosis="the node ended this run with another code, status or exit status than the contract gives")


def expect_success(ctx, plane):
    """Exit 0, nothing on stdout or stderr, and a stored result the harness agrees with."""
    result = plane.result
    ctx.expect(result.exit_code == 0 and not result.stderr and not result.stdout,
               expected="exit 0 with empty stdout and stderr", actual=lambda: describe_run(plane),
               diagnosis="a run the contract expects to succeed did not")
    stored = plane.stored_result()
    ctx.expect(stored is not None, expected="the result stored under the capability's object name",
               actual="nothing stored (%s)" % plane.describe_exchanges())
    problems = plane.verify_result(stored.raw)
    ctx.expect(not problems, expected="a stored result that restates what was fetched",
               actual=lambda: "; ".join(problems[:4]))


def expect_reported(ctx, plane, code, variant=None, exit_code=0):
    """A failure bundle with this code was stored and the status line says so."""
    expect_outcome(ctx, plane, code, "reported", exit_code, variant)
    bundle = plane.stored_bundle()
    ctx.expect(bundle is not None and bundle.doc.get("failure_code") == code,
               expected="a stored failure bundle with failure_code %s" % code,
               actual=lambda: "stored: %s" % (bundle.doc if bundle else None))


def expect_untouched(ctx, plane, what, variant=None):
    """None of the named fakes saw a request: what is a subset of
    identity, redeem, fail, source, put, tripwire."""
    seen = {
        "identity": lambda: len(plane.identity_requests()),
        "redeem": lambda: len(plane.redeems()),
        "fail": lambda: len(plane.fails()),
        "source": lambda: len(plane.source_requests()),
        "put": lambda: len(plane.puts()),
        "tripwire": lambda: len(plane.tripwire_connections()),
    }
    where = " (variant %s)" % variant if variant else ""
    for name in what:
        count = seen[name]()
        ctx.expect(count == 0, expected="no request to the %s fake%s" % (name, where),
                   actual="%d request(s): %s" % (count, plane.describe_exchanges()),
                   diagnosis="the node reached the %s when the contract says it must already have stopped" % name)


def expect_no_network(ctx, plane, variant=None):
    expect_untouched(ctx, plane, ("identity", "redeem", "fail", "source", "put", "tripwire"), variant)


def retire_plane(ctx, plane):
    """Judge a finished variant's plane now (the invariants run_check would
    apply at the end, a broken one failing the check here, named), then close it.

    A plane holds about 20 descriptors and five server threads until it is
    closed: a check with dozens of variants, several such checks under
    --jobs, would otherwise hold thousands at once.
    """
    violations = plane.invariants() or []
    ctx.planes.remove(plane)
    plane.close()
    if violations:
        first = violations[0]
        ctx.fail(expected="invariant %s: %s" % (first.name, first.expected),
                 actual="; ".join(v.actual for v in violations),
                 diagnosis=first.diagnosis or "invariant broken: %s" % first.name)


def each_variant(ctx, variants, act):
    """Run act(label, value) for each (label, value) in variants; each call
    makes its own plane with ctx.plane(...) and asserts with variant=label.
    The planes of a variant whose assertions held are judged and closed at
    once (retire_plane); a failing variant's stay for the report."""
    for label, value in variants:
        ctx.note("variant: %s" % label)
        before = len(ctx.planes)
        act(label, value)
        for plane in list(ctx.planes[before:]):
            retire_plane(ctx, plane)


def run_variants(ctx, variants, act):
    """each_variant for an act that returns its plane (kept for the modules
    that use that form; each_variant retires every plane a variant made)."""
    each_variant(ctx, variants, act)
