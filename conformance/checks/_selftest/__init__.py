"""Checks of the _selftest contract: the harness's own test contract.

Its document is conformance/tests/data/contract/_selftest.md, its node
conformance/tests/data/toy_node.py, its mutants
conformance/tests/data/mutants/_selftest/. Nothing here is part of a real
contract; the unit tests use it to run the framework, the CLI, the reports,
the mutants and the traceability tables end to end.
"""

from conformance.checks._selftest import greet, redact, scratch, stop, work  # noqa: F401 (registers the checks)
