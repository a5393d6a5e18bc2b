"""Checks of the _worker contract: the harness's own test contract for long-lived nodes.

Its document is conformance/tests/data/contract/_worker.md, its node
conformance/tests/data/toy_worker.py, its mutants
conformance/tests/data/mutants/_worker/. Nothing here is part of a real
contract: it proves, end to end, the core facilities the long-lived contracts
(session, scan) build on, one check each: the timeline of requests around a
SIGTERM (stop), crash points and restarts on the same state (state), time
scaling and the interval rule (poll), and the idle cost of a waiting node
(idle). A second self-test contract rather than more _selftest checks: a
contract is judged against one node, and the toy worker is not the toy node.
"""

from conformance.checks._worker import idle, poll, state, stop  # noqa: F401 (registers the checks)
