"""Unit tests of the reference session worker where no platform run can reach.

The node is imported as a module (importing it does nothing, SESSION-NODE-3), or started with one
function replaced. parse_answer() reads a peer's answer as the upstream's json.loads does, with
D41's refusals: an answer nested past the bound but within the interpreter's recursion limit reads
the same to json.loads as a shallow one, so no run tells the two apart. A defect before a Service
starts serving ends in the Service's own final line (SESSION-EXIT-3), and nothing outside the
process can make its first steps fail.

Run: python3 -m unittest conformance.tests.test_session_node -v
"""

import os
import subprocess
import sys
import unittest

from conformance.tests import reference_node

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE_FILE = os.path.join(ROOT, "nodes", "session_worker.py")

node = reference_node.load_node("session_worker", "node", worker_imports=True)


def nested(depth, key=b'"x"'):
    """An object with one member nested `depth` levels deep in all: {"a": [[...]]}."""
    return b'{"a":' + b"[" * (depth - 1) + key + b"]" * (depth - 1) + b"}"


class ParseAnswerTest(unittest.TestCase):
    def test_nesting_up_to_the_bound_is_read(self):
        value = node.parse_answer(nested(node.MAX_JSON_DEPTH))
        self.assertEqual(set(value), {"a"})

    def test_nesting_past_the_bound_is_refused(self):
        for depth in (node.MAX_JSON_DEPTH + 1, 100, 100000):
            with self.subTest(depth=depth):
                with self.assertRaises(node.JsonError):
                    node.parse_answer(nested(depth))

    def test_brackets_inside_strings_do_not_count(self):
        deep_text = b'"' + b"[" * (node.MAX_JSON_DEPTH * 2) + b'"'
        self.assertEqual(node.parse_answer(nested(2, deep_text)), {"a": ["[" * (node.MAX_JSON_DEPTH * 2)]})

    def test_what_the_upstream_reads_is_read(self):
        # D41: a BOM dropped, whitespace free, numbers of any form, members nobody defined kept
        self.assertEqual(node.parse_answer(b'\xef\xbb\xbf { "n": 5.0, "big": 1180591620717411303424 } '),
                         {"n": 5.0, "big": 2 ** 70})

    def test_what_d41_refuses_is_refused(self):
        for data in (b'{"a":1,"a":2}', b'{"a":NaN}', b'{"a":-Infinity}', b'{"a":1} x', b'\xff',
                     b'{"a":' + b"9" * (node.MAX_ANSWER_INTEGER_DIGITS + 1) + b"}"):
            with self.subTest(data=data[:40]):
                with self.assertRaises(node.JsonError):
                    node.parse_answer(data)


# A Service-mode start whose first step fails as a defect would: the node file run as __main__ with
# start_process() replaced, and the final line it writes.
DEFECT_AT_START = """
import runpy, sys
node = runpy.run_path(sys.argv[1], run_name="session_worker_defect")
def broken():
    raise RuntimeError("a defect in the first step")
node["main"].__globals__["start_process"] = broken
sys.exit(node["main"](sys.argv[2:]))  # the node's own arguments
"""


class DefectTest(unittest.TestCase):
    ENV = {"STUDIO_API_ORIGIN": "https://studio.example"}

    def run_node(self, *args):
        return subprocess.run([sys.executable, "-c", DEFECT_AT_START, NODE_FILE] + list(args), env=self.ENV,
                              cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=60)

    def test_a_defect_before_the_service_serves_ends_in_the_service_line(self):
        done = self.run_node()  # no argument: Service mode
        self.assertEqual(done.returncode, node.EXIT_FAILED, done.stderr)
        self.assertEqual(done.stdout, b"")  # a Service prints no summary
        self.assertEqual(done.stderr, b"%s: the Service failed\n" % node.SESSION_WORKER_FAILED.encode())

    def test_a_defect_before_a_job_runs_ends_in_a_failed_summary(self):
        done = self.run_node("--session-dispatch-id", "0b6f3bb4-8f9a-4c7e-9d59-3c1d2f0e5a61",
                             "--session-dispatch-exchange-url", "https://studio.example/exchange",
                             "--session-dispatch-audience", "https://studio.example")
        self.assertEqual(done.returncode, node.EXIT_FAILED, done.stderr)
        summary = node.json.loads(done.stdout)
        self.assertEqual(summary["failure_code"], node.SESSION_WORKER_FAILED)


if __name__ == "__main__":
    unittest.main()
