"""The session worker reads a peer's answer as the upstream's json.loads does, with D41's refusals.

Unit tests of the reference node's parse_answer(), imported as a module (importing it does
nothing, SESSION-NODE-3). The platform checks judge what a running worker does with such answers;
the nesting bound is here because an answer nested past it but within the interpreter's recursion
limit reads the same to json.loads as a shallow one, so no run tells the two apart.

Run: python3 -m unittest conformance.tests.test_session_answers -v
"""

import importlib.util
import os
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE_FILE = os.path.join(ROOT, "nodes", "session_worker.py")


def _load_node():
    spec = importlib.util.spec_from_file_location("session_worker_answers_under_test", NODE_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.worker_imports()  # what main() has bound before the worker reads an answer
    return module


node = _load_node()


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


if __name__ == "__main__":
    unittest.main()
