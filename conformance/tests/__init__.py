"""The harness's own unit tests (unittest, standard library only).

    python3 -m unittest discover -s conformance/tests -t . -p 'test_*.py'

Tests that need a PID namespace or a writable memory cgroup are skipped, with
the reason, where the machine does not allow them. The end-to-end tests use
the _selftest contract (conformance/checks/_selftest/, its document and node
under conformance/tests/data/) and, for the long-lived facilities (timeline,
crash points and restarts, scaled time, idle cost), the _worker contract
(conformance/checks/_worker/, tests/data/toy_worker.py).
"""
