"""What several scan check modules share: describing a run, expecting no request, timing."""

from conformance import faults  # noqa: F401 (re-exported for the check modules)
from conformance.checks.variants import each_variant  # noqa: F401 (re-exported)
from conformance.planes.scan import PHASE_TIMEOUT_S, RUN_TIMEOUT_S  # noqa: F401 (re-exported)

# How late a wait the node schedules may come on a loaded 2-core machine (an interpreter
# start, a thread that was not scheduled): every timing bound a check applies adds it.
SCHEDULE_SLACK_S = 1.0


def describe_run(plane, limit=12):
    """One line for an Actual: what the server saw, and how each life ended."""
    return plane.describe(limit)


def calls(plane, verb, reservation=None, since=None):
    return plane.server.calls(verb, reservation=reservation, since=since)
