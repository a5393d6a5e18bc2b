"""Tests of the crawler contract's own documents: contract/crawler.md, its schemas and examples.

The harness quotes clause text by ID and judges the node's documents against the contract;
all of that rests on the contract, its schemas and its examples agreeing. These tests hold
them so:

- every valid example validates against its schema and every invalid one fails it for
  exactly one reason (the schema is chosen by the longest schema name the file name starts
  with: ``status-line-status-ok.json`` -> status-line);
- valid examples are real documents: canonical JSON values whose digests, sessions and
  restated fields agree where a schema cannot say so;
- the schemas use only the keyword subset ``conformance.schema`` implements, close every
  object, resolve every ``$ref`` and keep their copies of one another equal;
- the patterns mean what the clauses say (timestamps, UUIDs, IP literals, base64);
- the code lists, the required headers, the limits, the clean-room claim and the
  schema_version strings of the schemas equal the contract's tables, parsed from the
  markdown, so the two cannot drift;
- every clause heading has the exact form ``### CRAWLER-AREA-n (LEVEL) Title``, IDs are
  unique, every clause of REQUIRED_CLAUSES is present at its level, and every clause or
  decision cited in the text exists.

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

from conformance.schema import unsupported, validate  # noqa: E402
from conformance.tests.contract_text import ContractText, read, table_rows  # noqa: E402

CONTRACT_MD = os.path.join(ROOT, "contract", "crawler.md")

SCHEMAS = ("request", "capability", "bootstrap", "policy", "evidence", "input-header",
           "result", "failure", "status-line", "fail-body", "child-failure")
MIN_VALID_EXAMPLES = 2
MIN_INVALID_EXAMPLES = 3
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
NOT_EXPRESSIBLE = "Not expressible here:"

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

# conformance.schema resolves $ref only within one file, so a composite schema carries
# copies: (schema, its $defs entry) -> the standalone schema it must equal.
COPIES = {
    ("bootstrap", "request"): "request",
    ("bootstrap", "upload_capability"): "capability",
    ("input-header", "request"): "request",
}

# Upstream codes the contract names only to say they are never used.
NEVER_USED_CODES = {"CRAWLER_MEMORY_BOUNDARY"}
# Names of upstream constants the contract quotes (D21), not codes.
UPSTREAM_CONSTANT_NAMES = {"CRAWLER_EGRESS_POLICY_ENV", "CRAWLER_RESULT_MEDIA_TYPE", "CRAWLER_REQUEST_SCHEMA_V3",
                           "CRAWLER_RESULT_SCHEMA_V3"}

# Canonical JSON's value rules (contract/crawler.md, Canonical JSON).
MAX_SAFE_INTEGER = 2 ** 53 - 1
MAX_JSON_DEPTH = 32

# The audit: "Where we differ from the upstream" (issue 20), just before the decisions.
AUDIT_HEADING = "## Where we differ from the upstream"
AUDIT_COLUMNS = ["document: member or aspect", "the upstream accepts (seed line)", "our node accepts",
                 "stricter because"]
# Every document the node receives has its table (argv, environment, every answer, the child, files).
AUDIT_TABLES = ["argv", "Environment variables", "The metadata server's answer", "The `:redeem` answer",
                "The crawl request (inside the bootstrap)", "The upload capability (inside the bootstrap)",
                "The `:fail` answer", "The source site's answers", "The child's output",
                "The store's answer to a PUT", "Files read"]
# The safety reasons a stricter row may give (ARCHITECTURE.md, "Accept what the upstream accepts").
SAFETY_REASONS = ("a secret could leak", "a path could escape", "a bound does not hold", "a digest does not hold",
                  "a binding does not hold", "a fence does not hold")
SEED_LINES = 1281  # /work/shared/seeds/000_ce324dca92f3d0b8.txt, as the audit's intro says
SEED_REF_RE = re.compile(r"seed 000:([0-9][0-9, -]*[0-9]|[0-9])")

CLAUSE_HEADING_RE = re.compile(r"^### CRAWLER-[A-Z]+-[1-9][0-9]* \((MUST|SHOULD|MAY)\) \S.*")
CLAUSE_PARTS_RE = re.compile(r"^### (CRAWLER-[A-Z]+-[0-9]+) \((MUST|SHOULD|MAY)\) ")
DECISION_HEADING_RE = re.compile(r"^### (D\d+) \S.*")
DOCUMENT_HEADING_RE = re.compile(r"^### ([A-Z][A-Za-z ]+) \(`([a-z0-9.-]+)`\)$")
CLAUSE_ID_RE = re.compile(r"CRAWLER-[A-Z]+-\d+")
CODE_RE = re.compile(r"`(CRAWLER_[A-Z_]+)`")

# Every clause of the contract at its level. A clause is retired, never silently removed
# from this list; one added to the contract is appended here (a test says so).
REQUIRED_CLAUSES = {
    "CRAWLER-ARGV-1": "MUST", "CRAWLER-ARGV-2": "MUST", "CRAWLER-ARGV-3": "SHOULD",
    "CRAWLER-CONFIG-1": "MUST", "CRAWLER-CONFIG-2": "MUST", "CRAWLER-CONFIG-3": "MUST",
    "CRAWLER-CONFIG-4": "MUST", "CRAWLER-CONFIG-5": "MUST", "CRAWLER-CONFIG-6": "MUST",
    "CRAWLER-CONFIG-7": "MUST", "CRAWLER-CONFIG-8": "MUST",
    "CRAWLER-IDENTITY-1": "MUST", "CRAWLER-IDENTITY-2": "MUST", "CRAWLER-IDENTITY-3": "MUST",
    "CRAWLER-IDENTITY-4": "MUST",
    "CRAWLER-BOOT-1": "MUST", "CRAWLER-BOOT-2": "MUST", "CRAWLER-BOOT-3": "MUST",
    "CRAWLER-BOOT-4": "MUST", "CRAWLER-BOOT-5": "MUST",
    "CRAWLER-CAP-1": "MUST", "CRAWLER-CAP-2": "MUST", "CRAWLER-CAP-3": "MUST",
    "CRAWLER-CAP-4": "MUST", "CRAWLER-CAP-5": "MUST", "CRAWLER-CAP-6": "MUST",
    "CRAWLER-CAP-7": "MUST", "CRAWLER-CAP-8": "MUST", "CRAWLER-CAP-9": "MUST",
    "CRAWLER-FAIL-1": "MUST", "CRAWLER-FAIL-2": "MUST",
    "CRAWLER-FETCH-1": "MUST", "CRAWLER-FETCH-2": "MUST", "CRAWLER-FETCH-3": "MUST",
    "CRAWLER-FETCH-4": "MUST", "CRAWLER-FETCH-5": "MUST", "CRAWLER-FETCH-6": "MUST",
    "CRAWLER-FETCH-7": "MUST", "CRAWLER-FETCH-8": "MUST",
    "CRAWLER-CHILD-1": "MUST", "CRAWLER-CHILD-2": "MUST", "CRAWLER-CHILD-3": "MUST",
    "CRAWLER-CHILD-4": "MUST", "CRAWLER-CHILD-5": "MUST", "CRAWLER-CHILD-6": "MUST",
    "CRAWLER-CHILD-7": "MUST", "CRAWLER-CHILD-8": "MUST", "CRAWLER-CHILD-9": "MUST",
    "CRAWLER-CHILD-10": "MUST", "CRAWLER-CHILD-11": "MUST",
    "CRAWLER-NORM-1": "MUST", "CRAWLER-NORM-2": "MUST", "CRAWLER-NORM-3": "MUST",
    "CRAWLER-RESULT-1": "MUST", "CRAWLER-RESULT-2": "MUST", "CRAWLER-RESULT-3": "MUST",
    "CRAWLER-RESULT-4": "MUST", "CRAWLER-RESULT-5": "MUST", "CRAWLER-RESULT-6": "MUST",
    "CRAWLER-RESULT-7": "MUST", "CRAWLER-RESULT-8": "MUST", "CRAWLER-RESULT-9": "MUST",
    "CRAWLER-RESULT-10": "MUST",
    "CRAWLER-UPLOAD-1": "MUST", "CRAWLER-UPLOAD-2": "MUST", "CRAWLER-UPLOAD-3": "MUST",
    "CRAWLER-UPLOAD-4": "MUST", "CRAWLER-UPLOAD-5": "MUST", "CRAWLER-UPLOAD-6": "MUST",
    "CRAWLER-REPORT-1": "MUST", "CRAWLER-REPORT-2": "MUST", "CRAWLER-REPORT-3": "MUST",
    "CRAWLER-REPORT-4": "MUST", "CRAWLER-REPORT-5": "MUST", "CRAWLER-REPORT-6": "MUST",
    "CRAWLER-STOP-1": "MUST", "CRAWLER-STOP-2": "MUST", "CRAWLER-STOP-3": "MUST",
    "CRAWLER-STOP-4": "MUST", "CRAWLER-STOP-5": "MUST",
    "CRAWLER-STREAM-1": "MUST", "CRAWLER-STREAM-2": "MUST", "CRAWLER-STREAM-3": "MUST",
    "CRAWLER-SECRET-1": "MUST", "CRAWLER-SECRET-2": "MUST", "CRAWLER-SECRET-3": "SHOULD",
    "CRAWLER-NODE-1": "MUST", "CRAWLER-NODE-2": "SHOULD", "CRAWLER-NODE-3": "MUST",
    "CRAWLER-PEER-1": "MUST", "CRAWLER-PEER-2": "MUST",
}


# ---------------------------------------------------------------- reading the contract

DOC = ContractText("crawler")
_read = read
_contract_lines, _section, _table_rows = DOC.lines, DOC.section, table_rows


def _clauses():
    """(id, level) of every clause heading, in document order."""
    return DOC.clauses(CLAUSE_PARTS_RE)


def _decisions():
    """{decision id: body text, heading included} for the '## Decisions' section, in order."""
    return DOC.decisions(DECISION_HEADING_RE, keep_heading=True)


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


def _subschemas(node, where="#"):
    """Yield (pointer, subschema) for node and every subschema below it."""
    if not isinstance(node, dict):
        return
    yield where, node
    for key, value in node.items():
        if key in ("properties", "$defs", "definitions", "patternProperties"):
            for name, sub in value.items():
                yield from _subschemas(sub, "%s/%s/%s" % (where, key, name))
        elif key in ("items", "additionalProperties", "not", "if", "then", "else",
                     "propertyNames"):
            if isinstance(value, list):
                for i, sub in enumerate(value):
                    yield from _subschemas(sub, "%s/%s/%d" % (where, key, i))
            else:
                yield from _subschemas(value, "%s/%s" % (where, key))
        elif key in ("anyOf", "oneOf", "allOf"):
            for i, sub in enumerate(value):
                yield from _subschemas(sub, "%s/%s/%d" % (where, key, i))


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


def _without_annotations(schema):
    return {k: v for k, v in schema.items()
            if k not in ("$schema", "$id", "title", "description", "$defs")}


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

    def test_every_example_names_a_known_schema(self):
        for kind in ("valid", "invalid"):
            for name in _examples(kind):
                with self.subTest(example=kind + "/" + name):
                    self.assertIn(_schema_name_for(name), SCHEMAS)

    def test_valid_examples_validate(self):
        for name in _examples("valid"):
            with self.subTest(example=name):
                errors = validate(_example("valid", name), _schema(_schema_name_for(name)))
                self.assertEqual(errors, [], "valid/%s should validate" % name)

    def test_invalid_examples_fail_for_exactly_one_reason(self):
        # One error per example: each breaks exactly the one rule its name says.
        for name in _examples("invalid"):
            with self.subTest(example=name):
                errors = validate(_example("invalid", name), _schema(_schema_name_for(name)))
                self.assertEqual(len(errors), 1, "invalid/%s should fail its schema once, "
                                 "not %r" % (name, errors))

    def test_each_schema_has_enough_examples(self):
        for schema in SCHEMAS:
            with self.subTest(schema=schema):
                valid = [n for n in _examples("valid") if _schema_name_for(n) == schema]
                invalid = [n for n in _examples("invalid") if _schema_name_for(n) == schema]
                self.assertGreaterEqual(len(valid), MIN_VALID_EXAMPLES)
                self.assertGreaterEqual(len(invalid), MIN_INVALID_EXAMPLES)

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

    def test_schemas_use_only_the_supported_subset(self):
        for schema in SCHEMAS:
            with self.subTest(schema=schema):
                self.assertEqual(unsupported(_schema(schema)), [])

    def test_no_schema_leans_on_an_ignored_annotation(self):
        # conformance.schema ignores "format": a schema using it would look stricter than it is.
        for schema in SCHEMAS:
            for where, sub in _subschemas(_schema(schema)):
                with self.subTest(schema=schema, at=where):
                    self.assertNotIn("format", sub)
                    self.assertNotIn("definitions", sub)  # draft 2020-12 spells it $defs

    def test_schemas_say_what_they_are_and_what_they_cannot_express(self):
        for schema in SCHEMAS:
            with self.subTest(schema=schema):
                doc = _schema(schema)
                self.assertEqual(doc.get("$schema"), DRAFT_2020_12)
                self.assertTrue(doc.get("title"))
                self.assertIn(NOT_EXPRESSIBLE, doc.get("description", ""))

    def test_refs_resolve_and_every_def_is_used(self):
        for schema in SCHEMAS:
            doc = _schema(schema)
            defs = doc.get("$defs", {})
            refs = {sub["$ref"] for _w, sub in _subschemas(doc) if "$ref" in sub}
            for ref in refs:
                with self.subTest(schema=schema, ref=ref):
                    self.assertTrue(ref.startswith("#/$defs/"))
                    self.assertIn(ref[len("#/$defs/"):], defs)
            for name in defs:
                with self.subTest(schema=schema, unused=name):
                    self.assertIn("#/$defs/" + name, refs)

    def test_every_object_has_an_exact_key_set(self):
        # A subschema that declares an object lists every key, requires every key and allows
        # no other: the contract gives exact key sets at every level, but for the crawl
        # request's (D25), which is open: it requires what the node reads, allows more, and
        # lists reader_pin as an optional null (D22).
        for schema in SCHEMAS:
            for where, sub in _subschemas(_schema(schema)):
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

    def test_copies_equal_their_standalone_schema(self):
        for (schema, name), standalone in COPIES.items():
            with self.subTest(schema=schema, copy=name):
                doc, original = _schema(schema), _schema(standalone)
                self.assertEqual(doc["$defs"][name], _without_annotations(original))
                for def_name, definition in original.get("$defs", {}).items():
                    self.assertEqual(doc["$defs"].get(def_name), definition, def_name)

    def test_a_def_name_means_the_same_everywhere(self):
        seen = {}
        for schema in SCHEMAS:
            for name, definition in _schema(schema).get("$defs", {}).items():
                with self.subTest(schema=schema, definition=name):
                    first = seen.setdefault(name, (schema, definition))
                    self.assertEqual(definition, first[1], "differs from %s's" % first[0])


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
            for where, sub in _subschemas(_schema(schema)):
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


class ClausesTest(unittest.TestCase):

    def test_clause_headings_have_the_exact_form(self):
        for line in _contract_lines():
            if re.match(r"^#+\s*CRAWLER-", line):
                with self.subTest(heading=line):
                    self.assertRegex(line, CLAUSE_HEADING_RE)

    def test_every_level_three_heading_is_a_clause_a_decision_a_document_or_an_audit_table(self):
        documents = set(_section("## The documents").splitlines())
        audit = set(_section(AUDIT_HEADING).splitlines())
        for line in _contract_lines():
            if line.startswith("### "):
                with self.subTest(heading=line):
                    self.assertTrue(CLAUSE_HEADING_RE.match(line)
                                    or DECISION_HEADING_RE.match(line)
                                    or (DOCUMENT_HEADING_RE.match(line) and line in documents)
                                    or line in audit,
                                    line)

    def test_clause_ids_are_unique(self):
        ids = [cid for cid, _ in _clauses()]
        duplicates = sorted({cid for cid in ids if ids.count(cid) > 1})
        self.assertEqual(duplicates, [])

    def test_every_required_clause_is_present_at_its_level(self):
        present = dict(_clauses())
        for cid, level in REQUIRED_CLAUSES.items():
            with self.subTest(clause=cid):
                self.assertIn(cid, present)
                self.assertEqual(present[cid], level)

    def test_every_clause_is_listed_in_required_clauses(self):
        # A clause added to the contract is appended to REQUIRED_CLAUSES, so its removal
        # later cannot go unnoticed.
        self.assertEqual(sorted(cid for cid, _ in _clauses() if cid not in REQUIRED_CLAUSES), [])

    def test_clause_ids_cited_in_the_text_exist(self):
        present = {cid for cid, _ in _clauses()}
        # "CRAWLER-CONFIG-*" and "CRAWLER-CAP-1 to 9" are prose, not IDs.
        for cid in sorted(set(CLAUSE_ID_RE.findall(_read(CONTRACT_MD)))):
            with self.subTest(cited=cid):
                self.assertIn(cid, present)

    def test_short_clause_references_exist(self):
        # Inside the text "CONFIG-1", "CAP-1..3" and "STOP-3" stand for CRAWLER-... IDs.
        present = {cid for cid, _ in _clauses()}
        areas = sorted({cid.split("-")[1] for cid in present})
        short = re.compile(r"(?<![A-Za-z0-9_-])(%s)-(\d+)" % "|".join(areas))
        for area, number in sorted(set(short.findall(_read(CONTRACT_MD)))):
            with self.subTest(cited="%s-%s" % (area, number)):
                self.assertIn("CRAWLER-%s-%s" % (area, number), present)


class DecisionsTest(unittest.TestCase):

    def test_there_are_decisions_numbered_in_order(self):
        decisions = list(_decisions())
        self.assertTrue(decisions)
        self.assertEqual(decisions, ["D%d" % i for i in range(1, len(decisions) + 1)])

    def test_each_decision_is_pinned_by_existing_clauses(self):
        # The crawler decisions say "Pinned by CRAWLER-..." inline: any clause ID in the
        # decision's text counts, and every one of them must exist.
        present = {cid for cid, _ in _clauses()}
        for did, body in _decisions().items():
            with self.subTest(decision=did):
                cited = CLAUSE_ID_RE.findall(body)
                self.assertTrue(cited, "%s names no clause" % did)
                for cid in cited:
                    self.assertTrue(cid in present, "%s names unknown %s" % (did, cid))

    def test_decisions_cited_in_the_text_exist(self):
        decisions = _decisions()
        text = _read(CONTRACT_MD).split("\n## Decisions\n", 1)[0]
        # A citation looks like "(D6)" or "(D11, D20)".
        for did in sorted(set(re.findall(r"(?<=[(, ])D\d+(?=[),])", text))):
            with self.subTest(cited=did):
                self.assertTrue(did in decisions, "%s is cited but not decided" % did)


class AuditTest(unittest.TestCase):
    """The audit of issue 20: one table per received document, each stricter row with its reason."""

    def _tables(self):
        """{table heading: [rows as cell lists, header first]}."""
        tables, current = {}, None
        for line in _section(AUDIT_HEADING).splitlines():
            if line.startswith("### "):
                current = line[4:]
                tables[current] = []
            elif current is not None and line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
                tables[current].append([cell.strip() for cell in line.strip("|").split("|")])
        return tables

    def test_the_audit_comes_just_before_the_decisions(self):
        headings = [line for line in _contract_lines() if line.startswith("## ")]
        self.assertIn(AUDIT_HEADING, headings)
        self.assertEqual(headings[headings.index(AUDIT_HEADING) + 1], "## Decisions")
        self.assertIn("000_ce324dca92f3d0b8.txt", _section(AUDIT_HEADING))
        self.assertIn("%d lines" % SEED_LINES, _section(AUDIT_HEADING))

    def test_every_received_document_has_its_table_with_the_four_columns(self):
        tables = self._tables()
        self.assertEqual(list(tables), AUDIT_TABLES)
        for title, rows in tables.items():
            with self.subTest(table=title):
                self.assertEqual(rows[0], AUDIT_COLUMNS)
                self.assertTrue(rows[1:], "no rows")
                for row in rows[1:]:
                    self.assertEqual(len(row), 4, row)

    def test_every_stricter_row_names_its_safety_reason_and_a_decision(self):
        decisions = _decisions()
        for title, rows in self._tables().items():
            for row in rows[1:]:
                last = row[3]
                with self.subTest(table=title, row=row[0]):
                    if last == "-" or last.startswith("- ("):
                        continue
                    self.assertTrue(any(reason in last for reason in SAFETY_REASONS), last)
                    cited = re.findall(r"\b(D\d+)\b", last)
                    self.assertTrue(cited, "no Decision named: %s" % last)
                    for did in cited:
                        self.assertIn(did, decisions)
                        self.assertIn("stricter than the upstream", " ".join(decisions[did].split()).lower(),
                                      "%s does not say why it is stricter than the upstream" % did)

    def test_seed_references_are_lines_of_the_seed(self):
        text = _read(CONTRACT_MD)
        refs = SEED_REF_RE.findall(text)
        self.assertTrue(refs)
        for ref in refs:
            for number in re.findall(r"[0-9]+", ref):
                with self.subTest(ref=ref):
                    self.assertTrue(1 <= int(number) <= SEED_LINES, ref)

    def test_every_defined_here_says_what_it_stands_in_for(self):
        text = _read(CONTRACT_MD).split("\n## How to read this document\n", 1)[1].split("\n## ", 1)[1]
        for match in re.finditer(r"\*\*Defined here\*\*", text):
            following = text[match.end():match.end() + 400]
            with self.subTest(at=text[match.start():match.start() + 80]):
                self.assertRegex(following, r"^(?:[:.]?\*?\*?)?[:.]? ?[^\n]*?(?:\n[^\n]*?){0,3}"
                                            r"(?:not in\s+the\s+seed|no counterpart)")

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
