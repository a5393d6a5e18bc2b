"""Tests of the harness's own crawler documents and of the scripted child.

Every crawler check compares a node with conformance/planes/crawler_docs.py, so a
mistake there turns into a wrong verdict on every node. These tests pin it to the
contract's text: canonical JSON and both parsers at their edges, the reference
normaliser (CRAWLER-NORM-1, NORM-2) against the csv module itself, the result's
exact key sets (CRAWLER-RESULT-2), and the fake child run end to end as the node
runs it (empty environment, cwd "/", stdin = header line + raw bytes).
"""

import base64
import csv
import hashlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.planes import crawler_child as child  # noqa: E402
from conformance.planes import crawler_docs as docs  # noqa: E402
from conformance.timeouts import SHORT_TIMEOUT_S  # noqa: E402

LIMITS = {"max_source_bytes": 1 << 20, "max_normalized_bytes": 1 << 20,
          "max_rows": 1000, "max_columns": 16}
SAFE = 2 ** 53 - 1


def nested(depth):
    return b"[" * depth + b"]" * depth


def normalize(data, data_format="csv", limits=None, chunk=None):
    """Normalise `data`, fed whole or in `chunk`-byte pieces."""
    normalizer = docs.Normalizer(data_format, dict(LIMITS, **(limits or {})))
    if chunk is None:
        normalizer.feed(data)
    else:
        for start in range(0, len(data), chunk):
            normalizer.feed(data[start:start + chunk])
    return normalizer.finish()


def rows_of(result):
    """The normalised content back as lists: header first."""
    return [json.loads(line) for line in result.content.decode("utf-8").splitlines()]


class CanonicalTest(unittest.TestCase):
    def test_sorted_compact_utf8(self):
        self.assertEqual(docs.canonical({"b": 1, "a": [True, None, "é"]}),
                         '{"a":[true,null,"é"],"b":1}'.encode("utf-8"))

    def test_integer_range(self):
        self.assertEqual(docs.canonical([SAFE, -SAFE]), b"[9007199254740991,-9007199254740991]")
        for value in (SAFE + 1, -SAFE - 1, 2 ** 64):
            with self.subTest(value=value), self.assertRaises(docs.JsonError):
                docs.canonical(value)

    def test_refused_values(self):
        for value in (1.0, float("nan"), float("inf"), {1: "a"}, {"a": {2.5}}, b"x",
                      "\ud800", {"\udc00": 1}):
            with self.subTest(value=value), self.assertRaises(docs.JsonError):
                docs.canonical(value)

    def test_depth(self):
        value = []
        for _ in range(32):
            value = [value]
        with self.assertRaises(docs.JsonError):
            docs.canonical(value)            # 33 levels
        self.assertEqual(docs.canonical(value[0]), nested(32))

    def test_digest(self):
        self.assertEqual(docs.digest({"a": 1}), hashlib.sha256(b'{"a":1}').hexdigest())
        self.assertEqual(docs.sha256_hex(b""), hashlib.sha256(b"").hexdigest())


class LenientParserTest(unittest.TestCase):
    def test_whitespace_and_order_are_free(self):
        self.assertEqual(docs.parse_lenient(b' {"b" : 1,\n "a":[ ]}\r\n'), {"a": [], "b": 1})

    def test_refusals(self):
        cases = {
            "duplicate key": b'{"a":1,"a":2}',
            "nested duplicate": b'{"x":{"a":1,"a":1}}',
            "float": b"1.0",
            "exponent": b"1e3",
            "NaN": b"NaN",
            "Infinity": b"[Infinity]",
            "-Infinity": b"-Infinity",
            "2^53": b"9007199254740992",
            "-2^53": b"-9007199254740992",
            "many digits": b"1" * 5000,
            "-0": b"-0",
            "BOM": b'\xef\xbb\xbf{"a":1}',
            "invalid UTF-8": b'"\xff"',
            "encoded surrogate": b'"\xed\xa0\x80"',
            "escaped lone surrogate": b'"\\ud800"',
            "escaped lone surrogate key": b'{"\\udfff":1}',
            "depth 33": nested(33),
            "empty": b"",
            "trailing garbage": b"{} x",
            "control character": b'"a\x01"',
            "text not bytes": '{"a":1}',
        }
        for name, data in cases.items():
            with self.subTest(name), self.assertRaises(docs.JsonError):
                docs.parse_lenient(data)

    def test_limits_are_inclusive(self):
        self.assertEqual(docs.parse_lenient(b"[9007199254740991,-9007199254740991]"),
                         [SAFE, -SAFE])
        value, depth = docs.parse_lenient(nested(32)), 0
        while value != []:
            value, depth = value[0], depth + 1
        self.assertEqual(depth, 31)                 # 32 arrays: the innermost is []
        self.assertEqual(docs.parse_lenient(b'"\\ud83d\\ude00"'), "\U0001F600")

    def test_deep_input_is_refused_fast_without_recursion_error(self):
        for data in (b"[" * 100000, b'{"a":' * 100000, nested(100000)):
            started = time.monotonic()
            with self.assertRaises(docs.JsonError):
                docs.parse_lenient(data)
            self.assertLess(time.monotonic() - started, 1.0)

    def test_brackets_inside_strings_do_not_count(self):
        text = '["%s", "\\"[[[", "]]]"]' % ("[" * 100)
        self.assertEqual(docs.parse_lenient(text.encode()), ["[" * 100, '"[[[', "]]]"])

    def test_never_raises_anything_else(self):
        rnd = random.Random(7)
        alphabet = b'[]{}",:\\0123456789.eE-+ tfnrualsux\xff\xc3\xa9'
        for _ in range(3000):
            data = bytes(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40)))
            try:
                docs.parse_lenient(data)
            except docs.JsonError:
                pass


class FloatsTest(unittest.TestCase):
    """floats=True (the session contract's documents): finite fractions are values; the
    other value rules stay, and the crawler's own documents still have no float."""

    def test_finite_fractions_round_trip(self):
        value = {"avg": 2.5, "big": 1e300, "n": [0.1, -3.0]}
        data = docs.canonical(value, floats=True)
        self.assertEqual(data, b'{"avg":2.5,"big":1e+300,"n":[0.1,-3.0]}')
        self.assertEqual(docs.parse_lenient(data, floats=True), value)
        self.assertEqual(docs.digest(value, floats=True), hashlib.sha256(data).hexdigest())

    def test_what_stays_refused(self):
        for data in (b'1e999', b'-1e999', b'NaN', b'{"a":1.5,"a":2.5}', b'9007199254740992'):
            with self.subTest(data=data), self.assertRaises(docs.JsonError):
                docs.parse_lenient(data, floats=True)
        for value in (float("nan"), float("inf"), [float("-inf")]):
            with self.subTest(value=value), self.assertRaises(docs.JsonError):
                docs.canonical(value, floats=True)

    def test_without_the_option_a_float_is_refused(self):
        with self.assertRaises(docs.JsonError):
            docs.parse_lenient(b'1.5')
        with self.assertRaises(docs.JsonError):
            docs.canonical(1.5)


class CanonicalParserTest(unittest.TestCase):
    def test_accepts_canonical(self):
        value = {"a": [1, "é", None], "b": {"c": False}}
        self.assertEqual(docs.parse_canonical(docs.canonical(value)), value)

    def test_refuses_other_spellings(self):
        for data in (b'{"a":1} ', b'{"a":1}\n', b'{"b":1,"a":2}', b'{"a": 1}',
                     b'"\\u00e9"', b'"\\/"', b'"\\u0041"'):
            with self.subTest(data=data), self.assertRaises(docs.JsonError):
                docs.parse_canonical(data)


class DocumentsTest(unittest.TestCase):
    def setUp(self):
        self.policy = docs.make_policy(["source.test"], [443])
        self.request = docs.make_request("https://source.test/data.csv",
                                         docs.digest(self.policy))
        self.session = "6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab"

    def test_request_shape(self):
        request = self.request
        self.assertEqual(request["schema_version"], "mostlyright-crawler-request.v3")
        self.assertEqual(set(request), {"schema_version", "source_id", "adapter_id",
                                        "adapter_version", "requested_at",
                                        "egress_policy_attestation", "query"})
        self.assertEqual(set(request["query"]), {"url", "data_format", "filename", "limits"})
        self.assertEqual(request["query"]["limits"],
                         {"max_source_bytes": 64 * 1024 * 1024, "max_normalized_bytes": 4194304,
                          "max_rows": 1000000, "max_columns": 64})
        self.assertLessEqual(len(docs.canonical(request)), docs.MAX_CRAWLER_REQUEST_BYTES)

    def test_policy_shape(self):
        self.assertEqual(self.policy, {"schema_version": "mostlyright-egress-policy.v1",
                                       "allowed_hosts": ["source.test"], "allowed_ports": [443],
                                       "allowed_addresses": [], "max_redirects": 5})

    def test_capability(self):
        capability = docs.make_capability(self.session, self.request, "https://x/y",
                                          "2026-11-30T09:00:00Z")
        self.assertEqual(set(capability), docs.CAPABILITY_KEYS)
        self.assertEqual(len(capability), 10)
        self.assertEqual([h["name"] for h in capability["required_headers"]], [
            "Content-Type", "x-goog-content-length-range", "x-goog-content-sha256",
            "x-goog-if-generation-match", "x-goog-meta-mostlyright-crawler-session",
            "x-goog-meta-mostlyright-request-digest", "x-goog-meta-mostlyright-egress-policy"])
        headers = dict(docs.required_headers(self.session, self.request))
        self.assertEqual(headers["x-goog-content-length-range"], "1,8388608")
        self.assertEqual(headers["x-goog-meta-mostlyright-request-digest"],
                         docs.digest(self.request))
        self.assertEqual(capability["request_digest"], docs.digest(self.request))
        self.assertIs(capability["single_use"], True)
        # The signed list is the seven headers plus host, lowercased and sorted.
        names = sorted([name.lower() for name in headers] + ["host"])
        self.assertEqual(docs.SIGNED_HEADERS, ";".join(names))

    def test_constants(self):
        self.assertEqual(docs.MAX_BOOTSTRAP_RESPONSE_BYTES, 114688)
        self.assertEqual(docs.MAX_CRAWLER_RESULT_BYTES, 8388608)
        self.assertEqual(len(docs.FAILURE_VOCABULARY), 19)
        self.assertEqual(len(docs.FAIL_ROUTE_CODES), 3)
        self.assertTrue(docs.CHILD_FAILURE_CODES <= docs.FAILURE_VOCABULARY)
        others = docs.FAILURE_VOCABULARY | docs.STDERR_ONLY_CODES
        self.assertFalse(docs.FAIL_ROUTE_CODES & others)
        self.assertEqual(docs.STDERR_ONLY_CODES & docs.FAILURE_VOCABULARY, {"CRAWLER_CANCELLED"})
        self.assertEqual(len(docs.ALL_CODES), 19 + 3 + 8)
        self.assertEqual(len(docs.CHILD_ENV_NAMES), 6)
        self.assertIn(docs.ATTESTATION_ENV, docs.CHILD_ENV_NAMES)
        self.assertEqual(set(docs.THREAD_PINS) | {docs.ATTESTATION_ENV}, docs.CHILD_ENV_NAMES)

    def test_utc_text_and_clean_room(self):
        self.assertEqual(docs.utc_text(0), "1970-01-01T00:00:00Z")
        self.assertEqual(docs.utc_text(1796025600.7), "2026-11-30T08:00:00Z")
        self.assertEqual(docs.canonical(docs.clean_room("x86_64")),
                         b'{"host_platform":"linux-amd64","no_new_privs":true,'
                         b'"parser_network_syscalls":"denied","parser_process_creation":"denied"}')
        self.assertEqual(docs.clean_room("aarch64")["host_platform"], "linux-arm64")
        with self.assertRaises(ValueError):
            docs.clean_room("riscv64")

    def test_bundle_status_line_header(self):
        bundle = docs.failure_bundle(self.request, "CRAWLER_CHILD_FAILED")
        self.assertEqual(bundle, {"schema_version": "mostlyright-crawler-failure.v1",
                                  "request_digest": docs.digest(self.request),
                                  "source_id": "conformance-source", "adapter_id": "public.https",
                                  "adapter_version": "1.0.0",
                                  "failure_code": "CRAWLER_CHILD_FAILED"})
        self.assertEqual(docs.status_line("CRAWLER_CANCELLED", "failed"),
                         b'{"code":"CRAWLER_CANCELLED","status":"failed"}\n')
        header = docs.input_header(self.request, {"x": 1}, docs.clean_room("x86_64"))
        self.assertEqual(header["request_digest"], docs.digest(self.request))
        self.assertEqual(header["schema_version"], "mostlyright-normalization-input.v1")

    def test_media_type_and_retrieval(self):
        self.assertEqual(docs.media_type(" Text/CSV ; charset=utf-8"), "text/csv")
        self.assertIsNone(docs.media_type(None))
        evidence = docs.make_evidence(
            [docs.make_hop("https://a.test/x", status=302, location="https://b.test/y"),
             docs.make_hop("https://b.test/y", content_type="text/csv", etag='"e"')],
            docs.sha256_hex(b"raw"), 3)
        retrieval = docs.make_retrieval("https://a.test/x", evidence)
        self.assertEqual(set(retrieval), docs.RETRIEVAL_KEYS)
        self.assertEqual(retrieval["final_url"], "https://b.test/y")
        self.assertEqual(retrieval["media_type"], "text/csv")
        self.assertEqual(retrieval["transport_evidence_digest"], docs.digest(evidence))


class NormalizerCase(unittest.TestCase):
    def assertCode(self, code, data, data_format="csv", limits=None, chunk=None):
        with self.assertRaises(docs.NormalizationError) as caught:
            normalize(data, data_format, limits, chunk)
        self.assertEqual(caught.exception.code, code)


class CsvNormalizerTest(NormalizerCase):

    def test_simple(self):
        result = normalize(b"name,n\r\nada,1\r\n\"b, c\",2\n")
        self.assertEqual(result.content, b'["name","n"]\n["ada","1"]\n["b, c","2"]\n')
        self.assertEqual(result.row_count, 2)
        self.assertEqual(result.column_names, ["name", "n"])
        self.assertEqual(result.row_digest,
                         hashlib.sha256(b'["ada","1"]\n["b, c","2"]\n').hexdigest())
        self.assertEqual(result.parsed_schema_digest,
                         docs.digest({"column_names": ["name", "n"], "data_format": "csv"}))

    def test_quoted_newlines_and_quotes_in_any_chunking(self):
        data = 'a,b\n"line 1\r\nline 2","say ""hi"""\n"x\ry",é\r'.encode("utf-8")
        expected = [["a", "b"], ["line 1\r\nline 2", 'say "hi"'], ["x\ry", "é"]]
        for chunk in (None, 1, 2, 3, 7):
            with self.subTest(chunk=chunk):
                self.assertEqual(rows_of(normalize(data, chunk=chunk)), expected)

    def test_last_line_without_ending_and_header_only(self):
        self.assertEqual(rows_of(normalize(b"a\n1")), [["a"], ["1"]])
        result = normalize(b"a,b\n")
        self.assertEqual(result.row_count, 0)
        self.assertEqual(result.row_digest, hashlib.sha256(b"").hexdigest())

    def test_unterminated_quote_at_end_is_what_csv_reads(self):
        self.assertEqual(rows_of(normalize(b'a,b\n1,"2\n3')), [["a", "b"], ["1", "2\n3"]])

    def test_agrees_with_the_csv_module(self):
        rnd = random.Random(4180)
        alphabet = ["a", ",", '"', "\r", "\n", "é", " "]
        for _ in range(2000):
            text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 25)))
            records = list(csv.reader(io.StringIO(text, newline="")))
            data = text.encode("utf-8")
            with self.subTest(text=text):
                try:
                    got = rows_of(normalize(data, chunk=rnd.randint(1, 4)))
                except docs.NormalizationError:
                    width = len(records[0]) if records else 0
                    self.assertTrue(not records or width == 0 or "" in records[0]
                                    or len(set(records[0])) != width
                                    or any(len(r) != width for r in records))
                    continue
                self.assertEqual(got, records)

    def test_refused_shapes(self):
        cases = {
            "ragged row": b"a,b\n1\n",
            "long row": b"a,b\n1,2,3\n",
            "empty header name": b"a,,c\n1,2,3\n",
            "duplicate header": b"a,a\n1,2\n",
            "blank line is a record of no fields": b"a,b\n\n1,2\n",
            "blank first line": b"\na\n",
            "empty source": b"",
            "field beyond csv.field_size_limit": b"a\n" + b"x" * (csv.field_size_limit() + 1),
        }
        for name, data in cases.items():
            with self.subTest(name):
                self.assertCode("CRAWLER_NORMALIZATION_FAILED", data,
                                limits={"max_normalized_bytes": 1 << 22})

    def test_encoding(self):
        for name, data, chunk in (("BOM", b"\xef\xbb\xbfa\n1\n", None),
                                  ("BOM split", b"\xef\xbb\xbfa\n1\n", 1),
                                  ("invalid", b"a\n\xff\n", None),
                                  ("truncated at end", b"a\n\xc3", None),
                                  ("encoded surrogate", b"a\n\xed\xa0\x80\n", 2)):
            with self.subTest(name):
                self.assertCode("CRAWLER_SOURCE_ENCODING_UNSUPPORTED", data, chunk=chunk)
        # A U+FEFF after the start is text, not a BOM.
        self.assertEqual(rows_of(normalize("a\n\ufeff\n".encode()))[1], ["\ufeff"])

    def test_limits(self):
        self.assertEqual(normalize(b"a\n1\n2\n", limits={"max_rows": 2}).row_count, 2)
        self.assertCode("CRAWLER_LIMIT_EXCEEDED", b"a\n1\n2\n3\n", limits={"max_rows": 2})
        self.assertCode("CRAWLER_LIMIT_EXCEEDED", b"a\n1\n", limits={"max_rows": 0})
        self.assertEqual(normalize(b"a,b\n", limits={"max_columns": 2}).column_names, ["a", "b"])
        self.assertCode("CRAWLER_LIMIT_EXCEEDED", b"a,b,c\n", limits={"max_columns": 2})
        exact = len(b'["a"]\n["1"]\n')
        self.assertEqual(len(normalize(b"a\n1\n",
                                       limits={"max_normalized_bytes": exact}).content), exact)
        self.assertCode("CRAWLER_LIMIT_EXCEEDED", b"a\n1\n",
                        limits={"max_normalized_bytes": exact - 1})

    def test_error_is_sticky(self):
        normalizer = docs.Normalizer("csv", LIMITS)
        with self.assertRaises(docs.NormalizationError):
            normalizer.feed(b"a,a\n")
        with self.assertRaises(docs.NormalizationError):
            normalizer.feed(b"1,2\n")
        with self.assertRaises(docs.NormalizationError):
            normalizer.finish()


class JsonLinesNormalizerTest(NormalizerCase):
    def test_simple(self):
        data = b'{"b":"x","a":1}\r\n\n{"a":-2,"b":null}\n\r\n{"b":true,"a":0}'
        for chunk in (None, 1, 5):
            with self.subTest(chunk=chunk):
                result = normalize(data, "jsonl", chunk=chunk)
                self.assertEqual(result.content,
                                 b'["a","b"]\n[1,"x"]\n[-2,null]\n[0,true]\n')
                self.assertEqual(result.column_names, ["a", "b"])
                self.assertEqual(result.row_count, 3)
                self.assertEqual(result.parsed_schema_digest,
                                 docs.digest({"column_names": ["a", "b"],
                                              "data_format": "jsonl"}))

    def test_refused_lines(self):
        cases = {
            "key set differs": b'{"a":1}\n{"b":1}\n',
            "extra key": b'{"a":1}\n{"a":1,"b":2}\n',
            "float value": b'{"a":1.5}\n',
            "nested object": b'{"a":{"b":1}}\n',
            "array value": b'{"a":[1]}\n',
            "not an object": b"[1]\n",
            "duplicate key": b'{"a":1,"a":2}\n',
            "integer out of range": b'{"a":9007199254740992}\n',
            "empty object": b"{}\n",
            "empty key": b'{"":1}\n',
            "whitespace-only line": b'{"a":1}\n \n',
            # One \r is removed; the other is not whitespace around a value here.
            "line of two carriage returns": b'{"a":1}\n\r\r\n',
            "lone surrogate escape": b'{"a":"\\ud800"}\n',
            "no objects": b"\n\r\n",
        }
        for name, data in cases.items():
            with self.subTest(name):
                self.assertCode("CRAWLER_NORMALIZATION_FAILED", data, "jsonl")

    def test_encoding_and_limits(self):
        self.assertCode("CRAWLER_SOURCE_ENCODING_UNSUPPORTED", b'\xef\xbb\xbf{"a":1}\n', "jsonl")
        self.assertCode("CRAWLER_SOURCE_ENCODING_UNSUPPORTED", b'{"a":"\xe9"}\n', "jsonl")
        self.assertCode("CRAWLER_LIMIT_EXCEEDED", b'{"a":1}\n{"a":2}\n', "jsonl",
                        limits={"max_rows": 1})
        self.assertCode("CRAWLER_LIMIT_EXCEEDED", b'{"a":1,"b":2}\n', "jsonl",
                        limits={"max_columns": 1})


class BuildResultTest(unittest.TestCase):
    def setUp(self):
        policy = docs.make_policy(["source.test"], [443])
        self.request = docs.make_request("https://source.test/a.csv", docs.digest(policy))
        self.raw = b"a,b\n1,2\n"
        evidence = docs.make_evidence(
            [docs.make_hop("https://source.test/a.csv", content_type="text/csv; charset=utf-8",
                           etag='W/"é1"', last_modified=None)],
            docs.sha256_hex(self.raw), len(self.raw))
        retrieval = docs.make_retrieval("https://source.test/a.csv", evidence)
        self.header = docs.input_header(self.request, retrieval, docs.clean_room("x86_64"))
        self.normalized = docs.normalize_bytes(self.raw, "csv", self.request["query"]["limits"])
        self.result = docs.build_result(self.header, self.normalized)

    def test_exact_key_sets(self):
        receipt = self.result["acquisition_receipt"]
        observation = self.result["observation"]
        self.assertEqual(set(self.result), docs.RESULT_KEYS)
        self.assertEqual(len(receipt), 32)
        self.assertEqual(set(receipt), docs.RECEIPT_KEYS)
        self.assertEqual(len(observation), 11)
        self.assertEqual(set(observation), docs.OBSERVATION_KEYS)
        self.assertEqual(receipt["schema_version"], "hosted-public-https-acquisition-receipt.v3")
        self.assertEqual(observation["schema_version"],
                         "hosted-public-https-source-observation.v3")
        self.assertEqual(self.result["schema_version"], "mostlyright-crawler-result.v3")

    def test_values(self):
        receipt = self.result["acquisition_receipt"]
        observation = self.result["observation"]
        content = base64.b64decode(self.result["normalized_content"], validate=True)
        self.assertEqual(content, self.normalized.content)
        self.assertEqual(base64.b64encode(content).decode(), self.result["normalized_content"])
        self.assertEqual(receipt["normalized_content_sha256"], docs.sha256_hex(content))
        self.assertEqual(receipt["normalized_size_bytes"], len(content))
        self.assertEqual(receipt["raw_content_sha256"], docs.sha256_hex(self.raw))
        self.assertEqual(receipt["raw_size_bytes"], len(self.raw))
        self.assertEqual(receipt["fetched_media_type"], "text/csv")
        self.assertEqual(receipt["etag_digest"], docs.sha256_hex('W/"é1"'.encode("utf-8")))
        self.assertIsNone(receipt["last_modified_digest"])
        self.assertEqual(receipt["acquired_at"], self.request["requested_at"])
        self.assertEqual(observation["observed_at"], self.request["requested_at"])
        self.assertEqual(receipt["request_digest"], docs.digest(self.request))
        self.assertEqual(receipt["clean_room"], docs.clean_room("x86_64"))
        self.assertEqual([receipt[k] for k in ("family_id", "family_version",
                                               "decode_options_digest", "resource_caps",
                                               "reader_budgets")], [None] * 5)
        self.assertEqual(receipt["decode_flags"], [])
        self.assertIsNone(self.result["next_watermark"])
        for key in docs.OBSERVATION_KEYS - {"schema_version", "observed_at"}:
            self.assertEqual(observation[key], receipt[key], key)
        encoded = docs.canonical(self.result)
        self.assertEqual(docs.parse_canonical(encoded), self.result)
        self.assertLessEqual(len(encoded), docs.MAX_CRAWLER_RESULT_BYTES)


class ResultProblemsTest(unittest.TestCase):
    """result_problems judges any normaliser's result by what the platform can
    know (CRAWLER-RESULT-*), never by the reference's rows."""

    def setUp(self):
        BuildResultTest.setUp(self)

    def other(self, header, rows):
        """The result of another normaliser: its own rows, its summary read off them."""
        content = b"".join(docs.canonical(line) + b"\n" for line in [header] + rows)
        return docs.build_result(self.header, docs.read_content(content, "csv"))

    def test_read_content_reads_the_summary_off_the_bytes(self):
        normalized = docs.read_content(self.normalized.content, "csv")
        self.assertEqual(normalized, self.normalized)
        empty = docs.read_content(b'["a"]\n', "jsonl")
        self.assertEqual((empty.row_count, empty.row_digest), (0, hashlib.sha256(b"").hexdigest()))

    def test_read_content_refuses_other_shapes(self):
        for content in (b"", b'["a"]', b'["a"]\n\n', b'["a"]\n[1,2]\n', b'["a"]\n[[1]]\n', b'["a"]\n[ 1]\n',
                        b'["a"]\n[1.5]\n', b'[]\n', b'[""]\n', b'{"a":1}\n', b'["a"]\n{"a":1}\n'):
            with self.subTest(content=content):
                with self.assertRaises(docs.ContentError):
                    docs.read_content(content, "csv")

    def test_the_honest_result_and_another_normalisers_pass(self):
        self.assertEqual(docs.result_problems(docs.canonical(self.result), self.header), [])
        lowered = self.other(["a", "b"], [["x", None]])
        self.assertEqual(docs.result_problems(docs.canonical(lowered), self.header), [])

    def test_a_summary_that_is_not_its_contents_is_found(self):
        for field, value in (("row_count", 2), ("row_digest", "0" * 64), ("column_names", ["a", "c"]),
                             ("parsed_schema_digest", docs.digest({"column_names": ["a", "b"],
                                                                   "data_format": "jsonl"}))):
            with self.subTest(field=field):
                lie = json.loads(json.dumps(self.result))
                lie["acquisition_receipt"][field] = value
                problems = docs.result_problems(docs.canonical(lie), self.header)
                self.assertEqual(len(problems), 1, problems)
                self.assertIn("acquisition_receipt.%s" % field, problems[0])

    def test_a_malformed_content_is_named_once(self):
        lie = json.loads(json.dumps(self.result))
        content = b'["a","b"]\n["1"]\n'
        lie["normalized_content"] = base64.b64encode(content).decode("ascii")
        lie["acquisition_receipt"]["normalized_content_sha256"] = docs.sha256_hex(content)
        lie["observation"]["normalized_content_sha256"] = docs.sha256_hex(content)
        lie["acquisition_receipt"]["normalized_size_bytes"] = len(content)
        problems = docs.result_problems(docs.canonical(lie), self.header)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("CRAWLER-RESULT-10", problems[0])

    def test_limits_and_fetch_fields(self):
        self.request["query"]["limits"].update(max_rows=0, max_columns=1)
        problems = docs.result_problems(docs.canonical(self.result), self.header)
        self.assertEqual(len(problems), 2, problems)
        lie = json.loads(json.dumps(self.result))
        lie["acquisition_receipt"]["raw_size_bytes"] += 1
        self.request["query"]["limits"].update(max_rows=10, max_columns=10)
        problems = docs.result_problems(docs.canonical(lie), self.header)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("raw_size_bytes", problems[0])


class FakeChildTest(unittest.TestCase):
    """The child as the node runs it: no environment, cwd "/", fds 0-2 only."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="crawler-child-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        policy = docs.make_policy(["source.test"], [443])
        self.request = docs.make_request("https://source.test/a.jsonl", docs.digest(policy),
                                         data_format="jsonl", filename="a.jsonl")
        self.raw = '{"k":"é","n":1}\n{"k":"z","n":2}\n'.encode("utf-8")
        evidence = docs.make_evidence([docs.make_hop("https://source.test/a.jsonl")],
                                      docs.sha256_hex(self.raw), len(self.raw))
        retrieval = docs.make_retrieval("https://source.test/a.jsonl", evidence)
        self.header = docs.input_header(self.request, retrieval, docs.clean_room("x86_64"))
        self.stdin = docs.canonical(self.header) + b"\n" + self.raw

    def run_child(self, behaviour, stdin=None):
        path = child.write_child(os.path.join(self.tmp, "child"), behaviour)
        return subprocess.run([path, "--input-fd", "0", "--result-fd", "1"],
                              input=self.stdin if stdin is None else stdin,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={}, cwd="/",
                              start_new_session=True, timeout=SHORT_TIMEOUT_S)

    def test_script_shape(self):
        path = child.write_child(os.path.join(self.tmp, "c"), child.reference_behaviour())
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o755)
        with open(path) as handle:
            self.assertEqual(handle.readline(), "#!%s -IS\n" % sys.executable)
        with self.assertRaises(ValueError):
            child.write_child(path, {"mode": "nonsense"})

    def test_normal_mode_writes_the_canonical_result(self):
        proc = self.run_child(child.reference_behaviour())
        self.assertEqual((proc.returncode, proc.stderr), (0, b""))
        expected = docs.build_result(self.header, docs.normalize_bytes(
            self.raw, "jsonl", self.request["query"]["limits"]))
        self.assertEqual(docs.parse_canonical(proc.stdout), expected)
        self.assertEqual(proc.stdout, docs.canonical(expected))

    def test_normal_mode_patch_and_encoding(self):
        proc = self.run_child({"patch": [[["acquisition_receipt", "raw_size_bytes"], 1],
                                         [["next_watermark"], "__delete__"]],
                               "add": [[["extra"], True]], "encoding": "newline",
                               "stderr": "warn", "exit": 3})
        self.assertEqual((proc.returncode, proc.stderr), (3, b"warn"))
        self.assertTrue(proc.stdout.endswith(b"}\n"))
        with self.assertRaises(docs.JsonError):
            docs.parse_canonical(proc.stdout)
        result = docs.parse_lenient(proc.stdout)
        self.assertEqual(result["acquisition_receipt"]["raw_size_bytes"], 1)
        self.assertNotIn("next_watermark", result)
        self.assertIs(result["extra"], True)

    def test_normal_mode_reports_a_refused_source(self):
        stdin = docs.canonical(self.header) + b"\n" + b'{"a":1.5}\n'
        proc = self.run_child(child.reference_behaviour(), stdin=stdin)
        self.assertEqual((proc.returncode, proc.stdout), (1, b""))
        self.assertEqual(proc.stderr, docs.status_line("CRAWLER_NORMALIZATION_FAILED", "failed"))

    def test_fail_and_raw_modes(self):
        proc = self.run_child({"mode": "fail", "stderr": "\udcff{\"code\":1}\n", "exit": 7})
        self.assertEqual((proc.returncode, proc.stdout, proc.stderr),
                         (7, b"", b'\xff{"code":1}\n'))
        proc = self.run_child({"mode": "raw", "stdout": "\xff\x00x", "read_stdin": False})
        self.assertEqual((proc.returncode, proc.stdout, proc.stderr), (0, b"\xff\x00x", b""))

    def test_encodings_other_than_canonical_are_not_canonical(self):
        document = {"b": [1, {"y": "é", "x": None}], "a": "z"}
        self.assertEqual(child.encode(document), docs.canonical(document))
        for encoding in ("pretty", "unsorted", "newline", "ascii"):
            with self.subTest(encoding):
                data = child.encode(document, encoding)
                self.assertEqual(docs.parse_lenient(data), document)
                with self.assertRaises(docs.JsonError):
                    docs.parse_canonical(data)
        # Patched values the encoder must still write, for the node to refuse.
        self.assertEqual(child.encode({"a": 1.5, "b": "\ud800"}), b'{"a":1.5,"b":"\xed\xa0\x80"}')

    def test_segv_mode(self):
        proc = self.run_child({"mode": "segv", "read_stdin": False})
        self.assertEqual(proc.returncode, -11)

    def test_record(self):
        record_path = os.path.join(self.tmp, "record.json")
        proc = self.run_child({"record": record_path})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(record_path) as handle:
            record = json.load(handle)
        self.assertEqual(record["argv"][1:], ["--input-fd", "0", "--result-fd", "1"])
        self.assertEqual(record["argv"][0], os.path.join(self.tmp, "child"))
        self.assertEqual(record["env"], {})           # no LC_CTYPE from locale coercion
        self.assertEqual(record["fds"], [0, 1, 2])
        self.assertEqual(record["cwd"], "/")
        self.assertEqual(set(record["status"]), {"Seccomp", "NoNewPrivs"})
        self.assertEqual(record["sid"], record["pid"])     # run with start_new_session
        self.assertEqual(record["pgid"], record["pid"])
        self.assertEqual(record["ppid"], os.getpid())
        self.assertEqual(set(record["probes"]), {"socket", "fork", "thread"})
        self.assertEqual(record["stdin_sha256"], docs.sha256_hex(self.stdin))
        self.assertEqual(record["stdin_size"], len(self.stdin))
        self.assertEqual(record["header"], self.header)
        self.assertIs(record["header_canonical"], True)
        self.assertEqual(record["raw_sha256"], docs.sha256_hex(self.raw))
        self.assertEqual(record["raw_size"], len(self.raw))
        self.assertEqual(record["normalization"], "ok")
        self.assertFalse(os.path.exists(record_path + ".tmp"))

    def test_source_written_after_the_header_alone(self):
        """The node may write the header on its own and the source later: a read that ends at the
        header's newline is not the end of the input (a flake of crawler result.content)."""
        given = child._Input()
        read_fd, write_fd = os.pipe()
        self.addCleanup(os.close, read_fd)
        header_line, source = self.stdin.split(b"\n", 1)

        def writer():
            os.write(write_fd, header_line + b"\n")
            time.sleep(0.2)  # the child has read the header alone by now
            os.write(write_fd, source)
            os.close(write_fd)

        thread = threading.Thread(target=writer)
        thread.start()
        given.read(read_fd)
        thread.join()
        self.assertEqual(given.fields()["normalization"], "ok")
        self.assertEqual(given.raw_size, len(self.raw))


if __name__ == "__main__":
    unittest.main()
