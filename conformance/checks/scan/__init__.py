"""Checks of the scan contract (contract/scan.md), one module per contract area
(conformance.checks.load imports every module here whose name does not start with "_")."""

# The node `make test`, `make conformance` and the mutants judge with --reference.
REFERENCE_NODE = "nodes/scan_worker.py"

from conformance.planes.scan import deploy as _deploy

# The deployment constants of this contract (D30): --deploy NAME=VALUE.
DEPLOYMENT = _deploy.make_deployment()
