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

__version__ = "1.0"

# The harness's own version: --version prints it with each contract's, and
# every report records both.
__version__ = "2026.12.1"
