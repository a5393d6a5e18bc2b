"""Checks of the crawler contract (contract/crawler.md), one module per contract area."""

from conformance.checks.crawler import (  # noqa: F401  (registers the checks)
    argv, boot, cap, child, config, fail, fetch, identity, norm, report, result, secret, stop,
    stream, upload)
