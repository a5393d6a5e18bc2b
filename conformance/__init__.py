"""The conformance harness: judge a node against a contract, clause by clause.

    python3 -m conformance step nodes/hello_node.py        # run every check
    python3 -m conformance step --list                     # what would run
    python3 -m conformance.mutants step                    # every check can fail
    python3 -m conformance.trace step                      # clause -> check -> mutant

Map of the package:

cli, __main__   the command line; exit 0 / 1 / 2
checks/         the framework (Check, @check, Context, run_check) and one
                package per contract: checks/<contract>/<area>.py
planes/         one fake control plane per contract
runner          starts the node (as PID 1, under a memory cgroup), captures
                its output, measures it, always reaps it
static          checks on the node file before it runs (section NODE)
invariants      generic after-run invariants (secrets, leftovers, empty dirs)
clauses         reads contract/<name>.md: clause text by ID, Decisions
report          terminal tree, --json, --junit; the summary line
schema          the JSON Schema subset used for contract documents
mutants         runs conformance/mutants/<contract>/*.py; each must be killed
trace           traceability tables; fails on any hole
timeouts        every named timeout, with when to use it
servers, faults, store, sync, suite: loopback servers, fault vocabulary,
                object store, shared-block sync, the project's test driver

Standard library only; Python 3.9+.
"""

# The harness's own version: --version prints it with each contract's, and
# every report records both.
__version__ = "2026.12.1"

# How this harness was started, as the words a person types to start it again:
# `python3 -m conformance` in a checkout, `python3 PATH` from the archive
# (conformance.pyz sets it to the path the user typed).  Every rerun line, usage
# line and example the harness prints is written with it, so that a line copied
# from a report runs where the report was made.
LAUNCHER = ("python3", "-m", "conformance")


def launcher():
    """LAUNCHER as a list of argv words."""
    return list(LAUNCHER)


def launcher_text():
    """LAUNCHER as shell text."""
    import shlex
    return " ".join(shlex.quote(word) for word in LAUNCHER)
