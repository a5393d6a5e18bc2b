"""Checks of the crawler contract (contract/crawler.md), one module per contract area."""

# The node `make test`, `make conformance` and the mutants judge with --reference.
REFERENCE_NODE = "nodes/crawler_job.py"

from conformance.checks.crawler import (  # noqa: F401  (registers the checks)
    argv, boot, cap, child, config, fail, fetch, identity, norm, peer, report, result, secret, stop,
    stream, upload)
from conformance.planes import crawler_docs as _docs

# The deployment constants of this contract (D21): --deploy NAME=VALUE.
DEPLOYMENT = _docs.make_deployment()
