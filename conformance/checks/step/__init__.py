"""Checks of the step contract (contract/step.md), one module per contract area."""

# The node `make test`, `make conformance` and the mutants judge with --reference.
REFERENCE_NODE = "nodes/hello_node.py"

from conformance.checks.step import (  # noqa: F401  (registers the checks)
    creds, exit, http, input, manifest, marker, output, peer, progress, proxy, redact, result, stop,
    stream, work)
