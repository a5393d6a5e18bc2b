"""Checks of the session contract (contract/session.md), one module per contract area
(conformance.checks.load imports every module here whose name does not start with "_")."""

# The node `make test`, `make conformance` and the mutants judge with --reference.
REFERENCE_NODE = "nodes/session_worker.py"

from conformance.planes.session import deploy as _deploy  # noqa: E402

# The deployment constants of this contract (D38): --deploy NAME=VALUE.
DEPLOYMENT = _deploy.make_deployment()
