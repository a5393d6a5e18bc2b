"""The scan and session workers make one TLS context per process, whichever threads ask first.

A kept connection's TLS session resumes only under the context that made it (scan D37,
session D53): two slots or threads that made a context each on their first exchange would make
every later handshake of one of them a full one. Unit tests of the reference nodes' tls_context(),
imported as modules (importing a node does nothing); ssl.create_default_context is slowed so
that the threads meet inside it.

Run: python3 -m unittest conformance.tests.test_scan_session_tls -v
"""

import ssl
import threading
import time
import unittest

from conformance.tests import reference_node

THREADS = 8


def _load(name):
    return reference_node.load_node(name, "tls")


class OneContextTest(unittest.TestCase):

    def contexts_made(self, module, holder):
        """(contexts made, distinct contexts returned) when THREADS threads ask at once."""
        made, returned, start = [], [], threading.Barrier(THREADS)
        real = ssl.create_default_context

        def slow():
            made.append(1)
            time.sleep(0.05)
            return real()

        def ask():
            start.wait()
            returned.append(module.tls_context())
        module.ssl = type("SlowSsl", (), {"create_default_context": staticmethod(slow)})
        self.addCleanup(setattr, module, "ssl", ssl)
        setattr(holder, "tls", None)
        threads = [threading.Thread(target=ask) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        return len(made), len(set(id(context) for context in returned))

    def test_scan_worker(self):
        scan = _load("scan_worker")
        self.assertEqual(self.contexts_made(scan, scan.FLOW), (1, 1))

    def test_session_worker(self):
        session = _load("session_worker")
        session.worker_imports()
        self.assertEqual(self.contexts_made(session, session.PROCESS), (1, 1))


if __name__ == "__main__":
    unittest.main()
