"""Tests of the crawler contract's own content: the tables, patterns and examples only
contract/crawler.md has.

The rules every contract document keeps (clause headings and IDs, Decisions, the audit's
columns and reasons, schemas, copies and examples) are conformance/tests/test_contracts.py's.
Here, what is the crawler's own:

- valid examples are real documents: canonical JSON values whose digests, sessions and
  restated fields agree where a schema cannot say so (the schema is chosen by the longest
  schema name the file name starts with: ``status-line-status-ok.json`` -> status-line);
- every object of a schema has an exact key set, but the crawl request's (D25);
- the patterns mean what the clauses say (timestamps, UUIDs, IP literals, base64);
- the code lists, the required headers, the limits, the clean-room claim and the
  schema_version strings of the schemas equal the contract's tables, parsed from the
  markdown, so the two cannot drift;
- the audit has a table for every document the node receives.

Run: python3 -m unittest conformance.tests.test_contract_crawler -v
"""

import base64
import datetime
import hashlib
import ipaddress
import json
import os
import re
import sys
import unittest
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.tests.contract_text import ContractText, read, subschemas, table_rows  # noqa: E402

CONTRACT_MD = os.path.join(ROOT, "contract", "crawler.md")

SCHEMAS = ("request", "capability", "bootstrap", "policy", "evidence", "input-header",
           "result", "failure", "status-line", "fail-body", "child-failure")

# "## The documents": each document heading and the schema that holds it.
DOCUMENT_SCHEMAS = {
    "Crawl request": "request",
    "Upload capability": "capability",
    "Bootstrap response": "bootstrap",
    "Egress policy": "policy",
    "Transport evidence": "evidence",
    "Normalisation input": "input-header",
    "Result": "result",
    "Failure bundle": "failure",
}

# Upstream codes the contract names only to say they are never used.
NEVER_USED_CODES = {"CRAWLER_MEMORY_BOUNDARY"}
# Names of upstream constants the contract quotes (D21), not codes.
UPSTREAM_CONSTANT_NAMES = {"CRAWLER_EGRESS_POLICY_ENV", "CRAWLER_RESULT_MEDIA_TYPE", "CRAWLER_REQUEST_SCHEMA_V3",
                           "CRAWLER_RESULT_SCHEMA_V3"}

# Canonical JSON's value rules (contract/crawler.md, Canonical JSON).
MAX_SAFE_INTEGER = 2 ** 53 - 1
MAX_JSON_DEPTH = 32

# The audit: "Where we differ from the upstream" (issue 20).
AUDIT_HEADING = "## Where we differ from the upstream"
# Every document the node receives has its table (argv, environment, every answer, the child, files).
AUDIT_TABLES = ["argv", "Environment variables", "The metadata server's answer", "The `:redeem` answer",
                "The crawl request (inside the bootstrap)", "The upload capability (inside the bootstrap)",
                "The `:fail` answer", "The source site's answers", "The child's output",
                "The store's answer to a PUT", "Files read"]

DOCUMENT_HEADING_RE = re.compile(r"^### ([A-Z][A-Za-z ]+) \(`([a-z0-9.-]+)`\)$")
CODE_RE = re.compile(r"`(CRAWLER_[A-Z_]+)`")


# ---------------------------------------------------------------- reading the contract

DOC = ContractText("crawler")
_read = read
_section, _table_rows = DOC.section, table_rows


def _report_table():
    """CRAWLER-REPORT-1's table: {place: [codes]} for stderr-only, :fail and bundle."""
    table = {}
    for place, codes in _table_rows(_section("### CRAWLER-REPORT-1 "))[1:]:
        table[place.strip("`")] = CODE_RE.findall(codes)
    return table


def _limits():
    """The 'Limits and constants' table: {name: integer value}."""
    limits = {}
    for name, value, _what in _table_rows(_section("## Limits and constants"))[1:]:
        limits[name.strip("`")] = int(value.split()[0])
    return limits


def _required_header_table():
    """The seven required headers: [(name, value or None when the value is prose)]."""
    rows = []
    for cells in _table_rows(_section("### Upload capability ")):
        if cells[0].isdigit():
            value = re.match(r"^`([^`]+)`", cells[2])
            rows.append((cells[1].strip("`"), value.group(1) if value else None))
    return rows


def _backticked(text, starting):
    """The first `...` span of text that starts with starting."""
    for span in re.findall(r"`([^`]+)`", text):
        if span.startswith(starting):
            return span
    raise AssertionError("no `%s...` span in the clause" % starting)


# ---------------------------------------------------------------- schemas and examples

_schema, _examples, _example = DOC.schema, DOC.examples, DOC.example


def _valid_examples_of(schema):
    return [(n, _example("valid", n)) for n in _examples("valid") if _schema_name_for(n) == schema]


def _schema_name_for(filename):
    """The longest schema name filename starts with followed by '-' (None if none)."""
    for name in sorted(SCHEMAS, key=len, reverse=True):
        if filename.startswith(name + "-"):
            return name
    return None


def _pattern(schema_name, *path):
    """The pattern of a subschema reached by following path (keys) from the schema root."""
    node = _schema(schema_name)
    for key in path:
        node = node[key]
    return re.compile(node["pattern"])


# The crawl request's objects, which take members the contract does not define (D25):
# the request itself, its query and its limits, in the standalone schema and in its copies.
_REQUEST_ROOTS = {"request": "#", "bootstrap": "#/$defs/request", "input-header": "#/$defs/request"}


def _is_open_request_object(schema, where):
    root = _REQUEST_ROOTS.get(schema)
    return root is not None and where in (root, root + "/properties/query",
                                          root + "/properties/query/properties/limits")


def _enum(schema_name, *path):
    node = _schema(schema_name)
    for key in path:
        node = node[key]
    return node["enum"]


def canonical(value):
    """Canonical JSON bytes (contract/crawler.md, Canonical JSON)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8", "strict")


def digest(value):
    return hashlib.sha256(canonical(value)).hexdigest()


def _canonical_value_problems(value, where="#", depth=1):
    """Why value breaks canonical JSON's value rules ([] when it does not)."""
    if depth > MAX_JSON_DEPTH:
        return ["%s: nested deeper than %d" % (where, MAX_JSON_DEPTH)]
    if isinstance(value, float):
        return ["%s: a float" % where]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
        return ["%s: an integer out of range" % where]
    if isinstance(value, str):
        try:
            value.encode("utf-8", "strict")
        except UnicodeEncodeError:
            return ["%s: a lone surrogate" % where]
    problems = []
    if isinstance(value, list):
        for i, item in enumerate(value):
            problems += _canonical_value_problems(item, "%s/%d" % (where, i), depth + 1)
    if isinstance(value, dict):
        for key, item in value.items():
            problems += _canonical_value_problems(key, where, depth)
            problems += _canonical_value_problems(item, "%s/%s" % (where, key), depth + 1)
    return problems


# ---------------------------------------------------------------- tests

class ExamplesTest(unittest.TestCase):

    def test_valid_examples_are_canonical_json_values(self):
        for name in _examples("valid"):
            with self.subTest(example=name):
                self.assertEqual(_canonical_value_problems(_example("valid", name)), [])


class ValidExamplesAreConsistentTest(unittest.TestCase):
    """The equalities a schema cannot express hold in the valid examples, so each stays a
    document a conforming party could really send."""

    def _capability_binds(self, capability, request_digest, attestation):
        headers = [h["value"] for h in capability["required_headers"]]
        self.assertEqual(headers[4], capability["crawler_session_id"])  # CRAWLER-CAP-7
        self.assertEqual(headers[5], request_digest)
        self.assertEqual(capability["request_digest"], request_digest)  # CRAWLER-CAP-2
        if attestation is not None:
            self.assertEqual(headers[6], attestation)

    def test_capabilities_bind_their_own_session_and_digest(self):
        for name, capability in _valid_examples_of("capability"):
            with self.subTest(example=name):
                self._capability_binds(capability, capability["request_digest"], None)

    def test_bootstraps_bind_the_capability_to_the_request(self):
        for name, boot in _valid_examples_of("bootstrap"):
            with self.subTest(example=name):
                request, capability = boot["request"], boot["upload_capability"]
                self.assertLessEqual(len(canonical(request)),
                                     _limits()["MAX_CRAWLER_REQUEST_BYTES"])  # CRAWLER-BOOT-5
                self._capability_binds(capability, digest(request),
                                       request["egress_policy_attestation"])
                self.assertEqual(capability["crawler_session_id"], boot["crawler_session_id"])

    def test_evidence_size_matches_the_final_content_length(self):
        for name, evidence in _valid_examples_of("evidence"):
            with self.subTest(example=name):
                length = evidence["hops"][-1]["content_length"]
                if length is not None:
                    self.assertEqual(evidence["raw_size_bytes"], length)

    def test_input_headers_restate_their_request(self):
        for name, header in _valid_examples_of("input-header"):
            with self.subTest(example=name):
                self.assertEqual(header["request_digest"], digest(header["request"]))
                self.assertEqual(header["retrieval"]["source_url"],
                                 header["request"]["query"]["url"])

    def test_results_agree_with_themselves(self):
        identity = ("request_digest", "source_id", "adapter_id", "adapter_version")
        shared = ("source_id", "request_digest", "raw_content_sha256",
                  "normalized_content_sha256", "row_count", "row_digest", "http_status_code",
                  "etag_digest", "last_modified_digest")
        for name, result in _valid_examples_of("result"):
            with self.subTest(example=name):
                receipt, observation = result["acquisition_receipt"], result["observation"]
                for key in identity:  # CRAWLER-RESULT-3
                    self.assertEqual(receipt[key], result[key], key)
                for key in shared:  # CRAWLER-RESULT-3, -4, -5, -7
                    self.assertEqual(observation[key], receipt[key], key)
                self.assertEqual(observation["observed_at"], receipt["acquired_at"])
                content = base64.b64decode(result["normalized_content"], validate=True)
                self.assertEqual(receipt["normalized_content_sha256"],
                                 hashlib.sha256(content).hexdigest())
                self.assertEqual(receipt["normalized_size_bytes"], len(content))
                self.assertEqual(receipt["parsed_schema_digest"], digest(
                    {"column_names": receipt["column_names"],
                     "data_format": receipt["normalized_data_format"]}))
                # CRAWLER-RESULT-10: the header line and the summary are read off the content.
                self.assertTrue(content.endswith(b"\n"))
                header, _, row_lines = content.partition(b"\n")
                self.assertEqual(header, canonical(receipt["column_names"]))
                self.assertEqual(receipt["row_count"], row_lines.count(b"\n"))
                self.assertEqual(receipt["row_digest"], hashlib.sha256(row_lines).hexdigest())
                for line in row_lines.split(b"\n")[:-1]:
                    row = json.loads(line.decode("utf-8"))
                    self.assertEqual(canonical(row), line)
                    self.assertEqual(len(row), len(receipt["column_names"]))
                    self.assertFalse(any(isinstance(value, (list, dict)) for value in row))


class SchemasTest(unittest.TestCase):

    def test_every_object_has_an_exact_key_set(self):
        # A subschema that declares an object lists every key, requires every key and allows
        # no other: the contract gives exact key sets at every level, but for the crawl
        # request's (D25), which is open: it requires what the node reads, allows more, and
        # lists reader_pin as an optional null (D22).
        for schema in SCHEMAS:
            for where, sub in subschemas(_schema(schema)):
                if sub.get("type") != "object":
                    continue
                with self.subTest(schema=schema, at=where):
                    if _is_open_request_object(schema, where):
                        self.assertIs(sub.get("additionalProperties"), True)
                        self.assertEqual(sorted(set(sub.get("properties", {})) - set(sub.get("required", []))),
                                         ["reader_pin"] if where.endswith("/query") else [])
                        continue
                    self.assertIs(sub.get("additionalProperties"), False)
                    self.assertEqual(sorted(sub.get("required", [])),
                                     sorted(sub.get("properties", {})))

class PatternsTest(unittest.TestCase):
    """Each pattern means what its clause says, checked against the clause's own pattern or
    against the standard library's reading of the same thing."""

    def test_timestamp_is_the_contracts_pattern_plus_a_real_date(self):
        contract = re.compile(_backticked(_section("## Canonical JSON"), "^[0-9]{4}"))
        schema = _pattern("capability", "$defs", "timestamp")

        def reference(text):
            if not contract.fullmatch(text):  # "matches" read as the whole string
                return False
            try:
                datetime.date(int(text[0:4]), int(text[5:7]), int(text[8:10]))
            except ValueError:
                return False
            return True

        samples = []
        for year in ("0000", "0001", "0004", "0100", "0400", "1900", "2000", "2023", "2024",
                     "2100", "9999"):
            for month in range(0, 14):
                for day in range(0, 33):
                    samples.append("%s-%02d-%02dT12:00:00Z" % (year, month, day))
        samples += ["2024-05-01T23:59:59.999999Z", "2024-05-01T24:00:00Z",
                    "2024-05-01T12:60:00Z", "2024-05-01T12:00:60Z", "2024-05-01T12:00:00.Z",
                    "2024-05-01T12:00:00.1234567Z", "2024-05-01T12:00:00z",
                    "2024-05-01 12:00:00Z", "2024-05-01T12:00:00+00:00",
                    "2024-05-01T12:00:00Z\n", "\u0662024-05-01T12:00:00Z", "2024-5-01T12:00:00Z"]
        for text in samples:
            with self.subTest(timestamp=text):
                self.assertEqual(bool(schema.search(text)), reference(text))

    def test_uuid_is_the_canonical_text_form(self):
        schema = _pattern("capability", "$defs", "uuid")
        value = "3f2b6c1e-8d4a-4f7b-9c2e-5a1d7e9b0c43"
        samples = [value, value.upper(), value.replace("-", ""), "{%s}" % value,
                   "urn:uuid:" + value, value + "\n", value[:-1],
                   "00000000-0000-0000-0000-000000000000"]
        for text in samples:
            with self.subTest(uuid=text):
                try:
                    canonical_form = str(uuid.UUID(text)) == text
                except ValueError:
                    canonical_form = False
                self.assertEqual(bool(schema.search(text)), canonical_form)

    def test_hex64_is_cap_2s_pattern_anchored(self):
        contract = _backticked(_section("### CRAWLER-CAP-2 "), "^[0-9a-f]")
        schema = _schema("capability")["$defs"]["hex64"]["pattern"]
        self.assertEqual(schema, contract[:-1] + "\\Z")

    def test_upload_url_carries_config_1s_bucket_pattern(self):
        bucket = _backticked(_section("### CRAWLER-CONFIG-1 "), "^[a-z0-9]")
        url = _schema("capability")["properties"]["upload_url"]["pattern"]
        self.assertIn("/" + bucket[1:-1] + "/crawler-quarantine/v2/[0-9a-f]{64}\\?", url)

    def test_ip_agrees_with_ipaddress(self):
        schema = _pattern("policy", "$defs", "ip")
        samples = ["0.0.0.0", "10.20.30.40", "255.255.255.255", "256.1.1.1", "1.2.3",
                   "1.2.3.4.5", "01.2.3.4", "1.2.3.04", " 1.2.3.4", "1.2.3.4\n", "::", "::1",
                   "1::", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "1::2:3:4:5:6:7",
                   "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8",
                   "1:2:3:4:5:6::8", "1::8", "FE80::1", "fe80::1:2", "1:::2", "1::2::3", "12345::",
                   "::ffff:1.2.3.4", "::1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5::1.2.3.4",
                   "1:2:3:4:5:6:7:1.2.3.4", "1::2:3:4:5:1.2.3.4", "1::2:3:4:5:6:1.2.3.4",
                   "::ffff:1.2.3.256", "::ffff:01.2.3.4", "1.2.3.4::", "g::1", "::0:0:0:0:0:0:0",
                   "0:0:0:0:0:0:0:0", "2606:2800:220:1:248:1893:25c8:1946", "localhost", ""]
        for text in samples:
            with self.subTest(ip=text):
                try:
                    ipaddress.ip_address(text)
                    literal = True
                except ValueError:
                    literal = False
                self.assertEqual(bool(schema.search(text)), literal)

    def test_dns_name_refuses_ip_literals(self):
        schema = _pattern("policy", "$defs", "dns_name")
        for text in ("example.org", "a", "xn--bcher-kva.example", "a-b.c1", "1a.example",
                     "x" * 63 + ".org", "123.example"):
            with self.subTest(name=text):
                self.assertTrue(schema.search(text))
        for text in ("1.2.3.4", "2130706433", "0x7f000001", "1.2.3.0x4", "example.org.",
                     "-a.org", "a-.org", "a..org", "Example.org", "x" * 64 + ".org",
                     ("a" * 63 + ".") * 4 + "org", "a_b.org", "[::1]", "a.org\n"):
            with self.subTest(name=text):
                self.assertFalse(schema.search(text))

    def test_base64_accepts_exactly_what_re_encodes_identically(self):
        schema = _pattern("result", "properties", "normalized_content")
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        samples = ["", "QUJD", "QUI=", "QQ==", "QUJD\n", "QUJ", "QR==", "QUJ=", "Q===", "-_-_"]
        samples += ["Q%s==" % c for c in alphabet] + ["QU%s=" % c for c in alphabet]
        for text in samples:
            with self.subTest(base64=text):
                try:
                    same = base64.b64encode(base64.b64decode(text, validate=True)).decode() == text
                except ValueError:
                    same = False
                self.assertEqual(bool(schema.search(text)), same)


class ContractTablesTest(unittest.TestCase):
    """The schemas' lists and constants equal the contract's tables, parsed from the text."""

    def test_report_1_has_its_three_places(self):
        self.assertEqual(sorted(_report_table()), [":fail", "bundle", "stderr-only"])

    def test_status_line_codes_are_every_code_of_report_1(self):
        every = set()
        for codes in _report_table().values():
            every.update(codes)
        self.assertEqual(sorted(_enum("status-line", "properties", "code")), sorted(every))

    def test_reported_status_line_codes_are_the_bundle_vocabulary(self):
        reported = _schema("status-line")["then"]["properties"]["code"]["enum"]
        self.assertEqual(sorted(reported), sorted(_report_table()["bundle"]))

    def test_bundle_codes_are_the_bundle_vocabulary(self):
        self.assertEqual(sorted(_enum("failure", "properties", "failure_code")),
                         sorted(_report_table()["bundle"]))

    def test_fail_body_codes_are_the_fail_row_and_fail_1s(self):
        schema = sorted(_enum("fail-body", "properties", "failure_code"))
        self.assertEqual(schema, sorted(_report_table()[":fail"]))
        first_sentence = re.search(r"Only (.+?) are reported on", _section("### CRAWLER-FAIL-1 "),
                                   re.S).group(1)
        self.assertEqual(schema, sorted(CODE_RE.findall(first_sentence)))

    def test_child_failure_codes_are_child_8s_and_in_the_bundle_vocabulary(self):
        listed = re.search(r"child failure codes: (.+?)\. Then", _section("### CRAWLER-CHILD-8 "),
                           re.S).group(1)
        schema = sorted(_enum("child-failure", "properties", "code"))
        self.assertEqual(schema, sorted(CODE_RE.findall(listed)))
        self.assertLessEqual(set(schema), set(_report_table()["bundle"]))

    def test_every_code_the_text_names_is_in_report_1(self):
        every = set()
        for codes in _report_table().values():
            every.update(codes)
        named = set(re.findall(r"(?<![A-Z_])CRAWLER_[A-Z0-9_]+", _read(CONTRACT_MD)))
        self.assertEqual(sorted(named - every - NEVER_USED_CODES - UPSTREAM_CONSTANT_NAMES), [])

    def test_every_document_has_a_schema_with_its_schema_version(self):
        headings = {}
        for line in _section("## The documents").splitlines():
            m = DOCUMENT_HEADING_RE.match(line)
            if m:
                headings[m.group(1)] = m.group(2)
        self.assertEqual(sorted(headings), sorted(DOCUMENT_SCHEMAS))
        for title, version in headings.items():
            with self.subTest(document=title):
                schema = _schema(DOCUMENT_SCHEMAS[title])
                self.assertEqual(schema["properties"]["schema_version"]["const"], version)

    def test_every_schema_version_string_appears_in_the_documents_section(self):
        documents = _section("## The documents")
        for schema in SCHEMAS:
            for where, sub in subschemas(_schema(schema)):
                version = sub.get("properties", {}).get("schema_version", {}).get("const")
                if version is not None:
                    with self.subTest(schema=schema, at=where):
                        self.assertIn('"%s"' % version, documents.replace("`", '"'))

    def test_required_headers_are_the_table(self):
        table = _required_header_table()
        items = _schema("capability")["properties"]["required_headers"]["items"]
        self.assertEqual(len(table), 7)
        self.assertEqual(len(items), len(table))
        for (name, value), item in zip(table, items):
            with self.subTest(header=name):
                self.assertEqual(item["properties"]["name"]["const"], name)
                if value is not None:
                    self.assertEqual(item["properties"]["value"].get("const"), value)
                else:
                    self.assertIn("$ref", item["properties"]["value"])

    def test_signed_headers_are_the_required_headers_and_host(self):
        signed = re.search(r"`X-Goog-SignedHeaders` is exactly\s+`([^`]+)`",
                           _section("### Upload capability ")).group(1)
        names = sorted([name.lower() for name, _v in _required_header_table()] + ["host"])
        self.assertEqual(signed, ";".join(names))

    def test_limits_agree_with_the_schemas(self):
        limits = _limits()
        result_bytes = limits["MAX_CRAWLER_RESULT_BYTES"]
        capability = _schema("capability")["properties"]
        self.assertEqual(capability["max_result_bytes"]["const"], result_bytes)
        length_range = capability["required_headers"]["items"][1]["properties"]["value"]
        self.assertEqual(length_range["const"], "1,%d" % result_bytes)
        limits_schema = _schema("request")["properties"]["query"]["properties"]["limits"]
        self.assertEqual(limits_schema["properties"]["max_normalized_bytes"]["maximum"],
                         result_bytes)
        parts = ("MAX_CRAWLER_REQUEST_BYTES", "MAX_UPLOAD_CAPABILITY_BYTES",
                 "MAX_METADATA_IDENTITY_TOKEN_BYTES")
        self.assertEqual(limits["MAX_BOOTSTRAP_RESPONSE_BYTES"], sum(limits[p] for p in parts))

    def test_clean_room_claim_is_result_8s(self):
        text = _section("### CRAWLER-RESULT-8 ")
        claim = json.loads(_backticked(text, '{"host_platform"'))
        schema = _schema("result")["$defs"]["clean_room"]
        self.assertEqual(sorted(schema["properties"]), sorted(claim))
        self.assertEqual(sorted(schema["properties"]["host_platform"]["enum"]),
                         sorted(set(re.findall(r"linux-[a-z0-9]+", text))))
        for key, value in claim.items():
            if key != "host_platform":
                with self.subTest(key=key):
                    self.assertEqual(schema["properties"][key]["const"], value)


class AuditTest(unittest.TestCase):
    """The audit of issue 20: one table per received document (test_contracts holds its columns,
    its rows and their reasons)."""

    def test_every_received_document_has_its_table(self):
        rows = {}  # table title: its table's lines
        for line in _section(AUDIT_HEADING).splitlines():
            if line.startswith("### "):
                title = line[4:]
                rows[title] = []
            elif rows and line.startswith("|"):
                rows[title].append(line)
        self.assertEqual(list(rows), AUDIT_TABLES)
        for title, lines in rows.items():
            with self.subTest(table=title):
                self.assertGreaterEqual(len(lines), 3, "a header, its rule and a row")

    def test_the_open_request_objects_are_the_ones_the_audit_names(self):
        # D25: the request, its query and its limits take unknown members; every other object
        # (the bootstrap, the capability, the result) keeps its exact key set (SchemasTest).
        request = _schema("request")
        self.assertIsNot(request.get("additionalProperties"), False)
        self.assertIsNot(request["properties"]["query"].get("additionalProperties"), False)
        self.assertIsNot(request["properties"]["query"]["properties"]["limits"].get("additionalProperties"), False)
        self.assertEqual(request["properties"]["query"]["properties"]["reader_pin"], {"type": "null"})


if __name__ == "__main__":
    unittest.main()
