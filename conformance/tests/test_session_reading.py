"""The session worker reads a source's rows once, in one decode, and keeps the verdict with the content's digest (D51).

Unit tests of the reference node's strict row reading, imported as a module (importing it does
nothing, SESSION-NODE-3). The node reads every row of a content before its first answer, so a
row anywhere that breaks its form fails every probe of it (SESSION-PEER-4); it reads our
crawler's JSON lines a MiB of lines per decode (array_row_count) and falls back to the row-by-row read
(content_table) for anything that one decode cannot vouch for. These tests hold the one decode
to the row-by-row read over contents made to fool it, and the kept verdict to the digest of the
bytes it was read from: bytes changed after a verdict are read again, never trusted. The
platform check probe.content-read judges the same through a running worker (its mutants break
each measure below).

Run: python3 -m unittest conformance.tests.test_session_reading -v
"""

import hashlib
import json
import unittest
import uuid

from conformance.planes.session.sources import build_bundle
from conformance.tests import reference_node



node = reference_node.load_node("session_worker", "reading", worker_imports=True)

HEADER = b'["k","v"]\n'


def _rows(count):
    return b"".join(b'["r%d",%d]\n' % (i, i) for i in range(count))


# (label, rows after the header): contents the row-by-row read takes, with their row count.
GOOD = [
    ("plain", _rows(30), 30),
    ("no final newline", _rows(3).rstrip(b"\n"), 3),
    ("no rows", b"", 0),
    ("CRLF", _rows(3).replace(b"\n", b"\r\n"), 3),
    ("blank lines", b"\n" + _rows(2) + b"\n\n" + _rows(1), 3),
    ("spaces around", b' ["a", 1] \n\t["b",2]\n', 2),
    ("every value kind", b'["s",-5]\n[null,true]\n[false,1.5e3]\n[9007199254740991,-9007199254740991]\n', 4),
    ("brackets and escapes in strings", b'["],[","\\n]"]\n["[\\"x\\"]","\\\\"]\n', 2),
    ("a surrogate pair", b'["\\ud83d\\ude00",1]\n', 1),
    ("unicode", '["Troms\u00f8","\u2026"]\n'.encode("utf-8"), 1),
]

# Contents the row-by-row read refuses (PROBE_PARSE_EMPTY), each with its bad part after 25 good rows.
BAD = [
    ("a row of another width", b'["x"]\n'),
    ("two rows on one line", b'["p",1],["q",2]\n'),
    ("one row over two lines, two on a third",
     b'["a",\n1]\n["p",1],["q",2]\n'),
    ("a string over two lines, two rows on a third",
     b'["a],[x",1]\n'.replace(b'],[', b']\n[') + b'["p",1],["q",2]\n'),
    ("a nested array", b'[["x"],1]\n'),
    ("an object", b'[{"x":1},1]\n'),
    ("a lone surrogate", b'["\\ud800",1]\n'),
    ("a lone low surrogate", b'["\\uDC00",1]\n'),
    ("minus zero", b'["z",-0]\n'),
    ("an integer past 2^53", b'["z",9007199254740992]\n'),
    ("seventeen digits", b'["z",12345678901234567]\n'),
    ("NaN", b'["z",NaN]\n'),
    ("a number out of range", b'["z",1e999]\n'),
    ("not JSON", b'["z",1\n'),
    ("trailing text", b'["z",1] x\n'),
    ("a BOM", b'\xef\xbb\xbf["z",1]\n'),
    ("invalid UTF-8", b'["\xff",1]\n'),
    ("a control character in a string", b'["a\x01",1]\n'),
    ("deep nesting", b"[" * 5000 + b"]" * 5000 + b"\n"),
]


def _digest(data):
    return hashlib.sha256(data).hexdigest()


def _slow(content):
    """The row-by-row read's verdict: (columns, count) or the failure's code."""
    try:
        columns, rows = node.content_table(content, "jsonl")
        return columns, sum(1 for _row in rows)
    except node.ProbeFailure as failure:
        return failure.code


def _shape(content):
    try:
        return node.content_shape(content, hashlib.sha256(content).hexdigest(), "jsonl")
    except node.ProbeFailure as failure:
        return failure.code


class OneDecodeTest(unittest.TestCase):
    """array_row_count says "every row holds, N of them" only where the row-by-row read says so too."""

    def test_the_row_by_row_read_takes_these(self):
        for label, rows, count in GOOD:
            with self.subTest(label=label):
                self.assertEqual(_slow(HEADER + rows), (["k", "v"], count))
                self.assertEqual(_shape(HEADER + rows), (["k", "v"], count))

    def test_what_it_refuses_is_refused(self):
        for label, bad in BAD:
            content = HEADER + _rows(25) + bad + _rows(5)
            with self.subTest(label=label):
                self.assertEqual(_slow(content), "PROBE_PARSE_EMPTY")
                self.assertIsNone(node.array_row_count(content, len(HEADER), 2))
                self.assertEqual(_shape(content), "PROBE_PARSE_EMPTY")

    def test_the_common_form_is_read_in_one_decode(self):
        content = HEADER + b"".join(json.dumps(["r%d" % i, i, i % 2 == 0, None, 0.5], separators=(",", ":"))
                                    .encode() + b"\n" for i in range(2000))
        self.assertEqual(node.array_row_count(content, len(HEADER), 5), 2000)

    def test_a_decode_at_a_time_holds_the_same(self):
        # Decoded a MiB of lines at a time (the objects of 16 MiB would take ten times that);
        # here a few bytes at a time, so every row sits at a boundary somewhere.
        saved = node.ROW_DECODE_BYTES
        node.ROW_DECODE_BYTES = 7
        try:
            for label, rows, count in GOOD:
                with self.subTest(label=label):
                    self.assertIn(node.array_row_count(HEADER + rows, len(HEADER), 2), (None, count))
            self.assertEqual(node.array_row_count(HEADER + _rows(40), len(HEADER), 2), 40)
            for label, bad in BAD:
                with self.subTest(label=label):
                    self.assertIsNone(node.array_row_count(HEADER + _rows(25) + bad + _rows(5), len(HEADER), 2))
        finally:
            node.ROW_DECODE_BYTES = saved

    def test_one_decode_never_answers_where_rows_are_unusual(self):
        # It may pass a content to the row-by-row read; it never counts one differently.
        for label, rows, count in GOOD:
            with self.subTest(label=label):
                self.assertIn(node.array_row_count(HEADER + rows, len(HEADER), 2), (None, count))


class KeptVerdictTest(unittest.TestCase):
    """D51: a verdict is kept with the digest of the bytes it was read from, never by source or size."""

    def setUp(self):
        node._shape_memo.clear()
        node._decoded_bundle.clear()

    def test_content_changed_after_its_verdict_is_read_again(self):
        good = HEADER + _rows(30)
        bad = good.replace(b'["r27",27]', b'["r27",[]]')  # the same length, a row that breaks its form
        self.assertEqual(len(good), len(bad))
        self.assertEqual(_shape(good), (["k", "v"], 30))
        self.assertEqual(_shape(bad), "PROBE_PARSE_EMPTY")
        truncated = good[:len(good) - 6]  # the last row cut in half
        self.assertEqual(_shape(truncated), "PROBE_PARSE_EMPTY")
        self.assertEqual(_shape(good), (["k", "v"], 30))

    def test_a_bundle_changed_after_its_verdict_is_checked_again(self):
        source_id = str(uuid.uuid4())
        bundle = build_bundle(source_id, ["k", "v"], [["a", 1], ["b", 2]])
        acquisition = {"request_digest": bundle.request_digest, "egress_policy_attestation": bundle.attestation}
        content, digest, data_format = node.check_bundle(bundle.raw, _digest(bundle.raw), source_id, acquisition)
        self.assertEqual((content, digest, data_format),
                         (bundle.content, hashlib.sha256(bundle.content).hexdigest(), "jsonl"))
        at = bundle.raw.index(b'"normalized_content":"') + len(b'"normalized_content":"')
        flipped = b"B" if bundle.raw[at:at + 1] == b"A" else b"A"
        tampered = bundle.raw[:at] + flipped + bundle.raw[at + 1:]  # other content, its receipt unchanged
        with self.assertRaises(node.ProbeFailure) as caught:
            node.check_bundle(tampered, _digest(tampered), source_id, acquisition)
        self.assertEqual(caught.exception.code, "PROBE_SOURCE_RESULT_INVALID")
        self.assertEqual(node.check_bundle(bundle.raw, _digest(bundle.raw), source_id, acquisition)[1], digest)


if __name__ == "__main__":
    unittest.main()
