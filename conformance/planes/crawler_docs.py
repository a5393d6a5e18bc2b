"""The crawler contract's documents, written again by the harness.

The harness judges a crawler node by comparing what the node did with what the
contract (contract/crawler.md) says it must do. To know the right answer it needs
its own implementation of every document the contract defines: canonical JSON and
the two parsers, the crawl request, the egress policy, the upload capability, the
normalisation input, the reference normaliser (CRAWLER-NORM-*) and the result it
leads to (CRAWLER-RESULT-*), the failure bundle and the status line.

Two ways of judging a stored result live here. `result_problems` is the
platform's: it reads the content's summary off the content itself
(CRAWLER-RESULT-10, `read_content`), so a result from any normaliser that keeps
the rules passes. The reference normaliser (`Normalizer`) gives the exact bytes
the reference node's example work must produce; only example-work checks
compare with it.

This file is deliberately independent of nodes/crawler_job.py and never imports
it: if both were the same code, a bug in it would agree with itself and every
check would pass. It is imported by the crawler plane, by its checks and by the
fake normaliser child (conformance/planes/crawler_child.py), which runs inside the
node's sandbox, so it must stay standard library only, start no thread and open
no socket.

    canonical(v) / parse_lenient(b) / parse_canonical(b)   "Canonical JSON"
    make_request / make_policy / make_capability           "The documents"
    input_header / Normalizer / build_result               CRAWLER-CHILD-5, NORM-*, RESULT-*
    read_content / result_problems                         CRAWLER-RESULT-* (any normaliser)
    failure_bundle / status_line                           CRAWLER-REPORT-2, REPORT-3

Where the contract leaves a choice open, the choice made here is written beside
the line (look for "Assumed:").
"""

import base64
import collections
import csv
import hashlib
import json
import math
import platform
import re
import time

# ---------------------------------------------------------------------------
# Constants (contract: "Limits and constants", "The documents")
# ---------------------------------------------------------------------------

REQUEST_SCHEMA = "mostlyright-crawler-request.v3"
RESULT_SCHEMA = "mostlyright-crawler-result.v3"
RECEIPT_SCHEMA = "hosted-public-https-acquisition-receipt.v3"
OBSERVATION_SCHEMA = "hosted-public-https-source-observation.v3"
FAILURE_SCHEMA = "mostlyright-crawler-failure.v1"
BOOTSTRAP_SCHEMA = "mostlyright-crawler-bootstrap.v1"
CAPABILITY_SCHEMA = "mostlyright-crawler-upload-capability.v1"
POLICY_SCHEMA = "mostlyright-egress-policy.v1"
EVIDENCE_SCHEMA = "mostlyright-transport-evidence.v1"
INPUT_SCHEMA = "mostlyright-normalization-input.v1"

RESULT_MEDIA_TYPE = "application/vnd.mostlyright.crawler-result+json"
NORMALIZED_MEDIA_TYPE = "application/x-ndjson"

ADAPTER_ID = "public.https"
ADAPTER_VERSION = "1.0.0"

MAX_METADATA_IDENTITY_TOKEN_BYTES = 16384
MAX_CRAWLER_REQUEST_BYTES = 65536
MAX_UPLOAD_CAPABILITY_BYTES = 32768
MAX_BOOTSTRAP_RESPONSE_BYTES = (MAX_CRAWLER_REQUEST_BYTES + MAX_UPLOAD_CAPABILITY_BYTES
                                + MAX_METADATA_IDENTITY_TOKEN_BYTES)          # 114688
MAX_CRAWLER_RESULT_BYTES = 8 * 1024 * 1024     # signed into x-goog-content-length-range
MAX_CHILD_STDERR_BYTES = 512
MAX_UPLOAD_RESPONSE_BYTES = 65536
MAX_JSON_DEPTH = 32
MAX_SAFE_INTEGER = 2 ** 53 - 1                 # canonical integers are within ±this

# Contract timeouts, in seconds; a node may lower each one, never raise it (CONFIG-6).
BOOTSTRAP_TIMEOUT_S = 10
FETCH_TIMEOUT_S = 300
CHILD_TIMEOUT_S = 1800
UPLOAD_TIMEOUT_S = 600
UPLOAD_RESERVE_S = 5
CLOCK_SKEW_S = 300
CANCEL_GRACE_S = 8

# "The seven required headers" and X-Goog-SignedHeaders (CRAWLER-CAP-6, CAP-7).
SIGNED_HEADERS = ("content-type;host;x-goog-content-length-range;x-goog-content-sha256;"
                  "x-goog-if-generation-match;x-goog-meta-mostlyright-crawler-session;"
                  "x-goog-meta-mostlyright-egress-policy;"
                  "x-goog-meta-mostlyright-request-digest")
RESULT_PREFIX = "crawler-quarantine/v2/"       # CRAWLER-CAP-5: /<bucket>/<prefix><64 hex>

# CRAWLER-CHILD-8: the only codes a failing child may name.
CHILD_FAILURE_CODES = frozenset({
    "CRAWLER_NORMALIZATION_FAILED",
    "CRAWLER_SOURCE_ENCODING_UNSUPPORTED",
    "CRAWLER_LIMIT_EXCEEDED",
})

# CRAWLER-CHILD-11: the codes the node's own child mode names; a deployed
# CHILD_CODES (D21) must keep them.
OWN_CHILD_CODES = CHILD_FAILURE_CODES

# CRAWLER-REPORT-1, row "bundle": the failure vocabulary.
FAILURE_VOCABULARY = frozenset({
    "CRAWLER_EGRESS_POLICY_MISMATCH", "CRAWLER_SOURCE_URL_INVALID", "CRAWLER_EGRESS_DENIED",
    "CRAWLER_SOURCE_REDIRECT_DENIED", "CRAWLER_SOURCE_HTTP_STATUS",
    "CRAWLER_SOURCE_ENCODING_UNSUPPORTED", "CRAWLER_SOURCE_TOO_LARGE",
    "CRAWLER_SOURCE_TIMEOUT", "CRAWLER_SOURCE_UNAVAILABLE", "CRAWLER_EXECUTABLE_UNAVAILABLE",
    "CRAWLER_SANDBOX_UNAVAILABLE", "CRAWLER_CHILD_FAILED", "CRAWLER_CHILD_INVALID",
    "CRAWLER_CHILD_TIMEOUT", "CRAWLER_NORMALIZATION_FAILED", "CRAWLER_LIMIT_EXCEEDED",
    "CRAWLER_UPLOAD_WINDOW_INSUFFICIENT", "CRAWLER_CANCELLED", "CRAWLER_JOB_FAILED",
})

# CRAWLER-REPORT-1, row ":fail" (and CRAWLER-FAIL-1).
FAIL_ROUTE_CODES = frozenset({
    "CRAWLER_BOOTSTRAP_REDEMPTION_FAILED",
    "CRAWLER_BOOTSTRAP_RESPONSE_INVALID",
    "CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE",
})

# CRAWLER-REPORT-1, row "stderr-only". CRAWLER_CANCELLED is here *and* in the
# vocabulary: stderr-only before the capability exists, a bundle after it.
STDERR_ONLY_CODES = frozenset({
    "CRAWLER_RESULTS_BUCKET_REQUIRED", "CRAWLER_PROCESS_HARDENING_UNAVAILABLE",
    "CRAWLER_JOB_ARGUMENT_INVALID", "CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID",
    "CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE", "CRAWLER_UPLOAD_CAPABILITY_INVALID",
    "CRAWLER_UPLOAD_CAPABILITY_EXPIRED", "CRAWLER_UPLOAD_FAILED", "CRAWLER_CANCELLED",
})

# "A code not in this table is never produced." (CRAWLER-REPORT-1)
ALL_CODES = FAILURE_VOCABULARY | FAIL_ROUTE_CODES | STDERR_ONLY_CODES

# CRAWLER-CHILD-2: the child's whole environment.
ATTESTATION_ENV = "MOSTLYRIGHT_CRAWLER_EGRESS_POLICY_ATTESTATION"
THREAD_PINS = {
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}
CHILD_ENV_NAMES = frozenset({ATTESTATION_ENV} | set(THREAD_PINS))

# ---------------------------------------------------------------------------
# Deployment constants (contract: D21): the upstream imports these without
# defining them.  The values above are the contract's; `--deploy NAME=VALUE`
# replaces them for a run (conformance/deployment.py) through _deploy(), which
# rebinds the module's names, so every user must read them as docs.NAME at
# call time.  The names are the reference node's constants' names.
# ---------------------------------------------------------------------------

_ENV_NAME_RE = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")
_MEDIA_TYPE_RE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}")
# A deployed result bound below this leaves no room for the results the checks
# make (their content is up to half of it, base64 grows it by a third).
MIN_DEPLOYED_RESULT_BYTES = 1 << 20
MAX_DEPLOYED_RESULT_BYTES = 1 << 31


def _parse_result_bytes(text):
    if not re.fullmatch(r"[1-9][0-9]{0,10}", text):
        raise ValueError("a whole number of bytes, written in digits")
    value = int(text)
    if not MIN_DEPLOYED_RESULT_BYTES <= value <= MAX_DEPLOYED_RESULT_BYTES:
        raise ValueError("must be %d..%d" % (MIN_DEPLOYED_RESULT_BYTES, MAX_DEPLOYED_RESULT_BYTES))
    return value


def _parse_media_type(text):
    if not _MEDIA_TYPE_RE.fullmatch(text):
        raise ValueError("a lowercase type/subtype without parameters, e.g. application/vnd.example.result+json")
    return text


def _parse_env_name(text):
    if not _ENV_NAME_RE.fullmatch(text) or text in THREAD_PINS:
        raise ValueError("an upper-case variable name that is not one of the thread pins (%s)"
                         % ", ".join(sorted(THREAD_PINS)))
    return text


def _parse_child_codes(text):
    codes = frozenset(code.strip() for code in text.split(",") if code.strip())
    unknown = sorted(codes - FAILURE_VOCABULARY)
    if unknown:
        raise ValueError("codes of the failure vocabulary only (not in it: %s)" % ", ".join(unknown))
    missing = sorted(OWN_CHILD_CODES - codes)
    if missing:
        raise ValueError("the node's own child mode names %s (CRAWLER-CHILD-11): a deployment adds codes, "
                         "it cannot drop these" % ", ".join(missing))
    return codes


# The schema strings the upstream imports (CRAWLER_REQUEST_SCHEMA_V3,
# CRAWLER_RESULT_SCHEMA_V3, HostedCrawlerFailure's): lowercase names with
# dots, dashes and digits, as the seed's own ("hosted-public-https-...v3").
_SCHEMA_NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,127}")
# A deployed request bound below this leaves no room for the requests the
# checks make (their longest URL and filename); above the upper one the
# child's input header bound (the node's MAX_INPUT_HEADER_BYTES) grows past
# what a pipe-fed header line should be.
MIN_DEPLOYED_REQUEST_BYTES = 16 * 1024
MAX_DEPLOYED_REQUEST_BYTES = 16 * 1024 * 1024


def _parse_schema_name(text):
    if not _SCHEMA_NAME_RE.fullmatch(text):
        raise ValueError("a lowercase name of letters, digits, '.', '_' and '-', e.g. example-crawler-request.v4")
    return text


def _parse_request_bytes(text):
    if not re.fullmatch(r"[1-9][0-9]{0,9}", text):
        raise ValueError("a whole number of bytes, written in digits")
    value = int(text)
    if not MIN_DEPLOYED_REQUEST_BYTES <= value <= MAX_DEPLOYED_REQUEST_BYTES:
        raise ValueError("must be %d..%d" % (MIN_DEPLOYED_REQUEST_BYTES, MAX_DEPLOYED_REQUEST_BYTES))
    return value


def _deploy(values):
    global MAX_CRAWLER_RESULT_BYTES, RESULT_MEDIA_TYPE, ATTESTATION_ENV, CHILD_FAILURE_CODES, CHILD_ENV_NAMES
    global REQUEST_SCHEMA, RESULT_SCHEMA, FAILURE_SCHEMA, MAX_CRAWLER_REQUEST_BYTES, MAX_BOOTSTRAP_RESPONSE_BYTES
    MAX_CRAWLER_RESULT_BYTES = values["MAX_CRAWLER_RESULT_BYTES"]
    RESULT_MEDIA_TYPE = values["RESULT_MEDIA_TYPE"]
    ATTESTATION_ENV = values["CHILD_ATTESTATION_ENV"]
    CHILD_FAILURE_CODES = frozenset(values["CHILD_CODES"])
    CHILD_ENV_NAMES = frozenset({ATTESTATION_ENV} | set(THREAD_PINS))
    REQUEST_SCHEMA = values["REQUEST_SCHEMA"]
    RESULT_SCHEMA = values["RESULT_SCHEMA"]
    FAILURE_SCHEMA = values["FAILURE_SCHEMA"]
    MAX_CRAWLER_REQUEST_BYTES = values["MAX_CRAWLER_REQUEST_BYTES"]
    # The upstream's own sum (its MAX_BOOTSTRAP_RESPONSE_BYTES): the request, the capability, 16 KiB.
    MAX_BOOTSTRAP_RESPONSE_BYTES = (MAX_CRAWLER_REQUEST_BYTES + MAX_UPLOAD_CAPABILITY_BYTES
                                    + MAX_METADATA_IDENTITY_TOKEN_BYTES)


def deployment_values():
    """The values in force, by setting name (what a scripted child is given)."""
    return {"MAX_CRAWLER_RESULT_BYTES": MAX_CRAWLER_RESULT_BYTES, "RESULT_MEDIA_TYPE": RESULT_MEDIA_TYPE,
            "CHILD_ATTESTATION_ENV": ATTESTATION_ENV, "CHILD_CODES": sorted(CHILD_FAILURE_CODES),
            "REQUEST_SCHEMA": REQUEST_SCHEMA, "RESULT_SCHEMA": RESULT_SCHEMA, "FAILURE_SCHEMA": FAILURE_SCHEMA,
            "MAX_CRAWLER_REQUEST_BYTES": MAX_CRAWLER_REQUEST_BYTES}


def deploy_values(values):
    """Install values as deployment_values() gives them (in a scripted child's process)."""
    _deploy(dict(values))


def make_deployment():
    from conformance.deployment import Deployment, Setting
    return Deployment([
        Setting("MAX_CRAWLER_RESULT_BYTES", MAX_CRAWLER_RESULT_BYTES, _parse_result_bytes,
                help="the result bound: capability max_result_bytes, x-goog-content-length-range, the "
                     "child's stdout"),
        Setting("RESULT_MEDIA_TYPE", RESULT_MEDIA_TYPE, _parse_media_type,
                help="the Content-Type of every PUT (required header 1)"),
        Setting("CHILD_ATTESTATION_ENV", ATTESTATION_ENV, _parse_env_name,
                help="the variable that gives the child the egress attestation"),
        Setting("CHILD_CODES", CHILD_FAILURE_CODES, _parse_child_codes, show=lambda codes: ",".join(sorted(codes)),
                help="the codes a failing child may name (comma-separated)"),
        Setting("REQUEST_SCHEMA", REQUEST_SCHEMA, _parse_schema_name,
                help="the crawl request's schema_version (the broker's CRAWLER_REQUEST_SCHEMA_V3)"),
        Setting("RESULT_SCHEMA", RESULT_SCHEMA, _parse_schema_name,
                help="the result's schema_version (the platform's CRAWLER_RESULT_SCHEMA_V3)"),
        Setting("FAILURE_SCHEMA", FAILURE_SCHEMA, _parse_schema_name,
                help="the failure bundle's schema_version"),
        Setting("MAX_CRAWLER_REQUEST_BYTES", MAX_CRAWLER_REQUEST_BYTES, _parse_request_bytes,
                help="the crawl request's bound; the :redeem answer's is this + 48 KiB"),
    ], _deploy)

USER_AGENT = "mostlyright-crawler/1"           # CRAWLER-FETCH-4

# CRAWLER-RESULT-2: the exact key sets.
RESULT_KEYS = frozenset({
    "schema_version", "request_digest", "source_id", "adapter_id", "adapter_version",
    "acquisition_receipt", "observation", "normalized_content", "next_watermark",
})
RECEIPT_KEYS = frozenset({
    "schema_version", "source_id", "adapter_id", "adapter_version", "request_digest",
    "source_url", "final_url", "fetched_media_type",
    "normalized_media_type", "normalized_data_format", "normalized_filename",
    "acquired_at", "raw_content_sha256", "raw_size_bytes",
    "normalized_content_sha256", "normalized_size_bytes",
    "row_count", "column_names", "parsed_schema_digest",
    "family_id", "family_version", "decode_options_digest",
    "decode_flags", "resource_caps", "reader_budgets",
    "transport_evidence_digest", "egress_policy_attestation", "clean_room",
    "row_digest", "http_status_code", "etag_digest", "last_modified_digest",
})
OBSERVATION_KEYS = frozenset({
    "schema_version", "source_id", "request_digest", "observed_at",
    "raw_content_sha256", "normalized_content_sha256", "row_count",
    "row_digest", "http_status_code", "etag_digest", "last_modified_digest",
})
CAPABILITY_KEYS = frozenset({
    "schema_version", "crawler_session_id", "request_digest", "method", "upload_url",
    "required_headers", "max_result_bytes", "expires_at", "redirect_policy", "single_use",
})
RETRIEVAL_KEYS = frozenset({
    "source_url", "final_url", "media_type", "raw_content_sha256", "raw_size_bytes",
    "transport_evidence_digest", "http_status_code", "etag", "last_modified",
})

# ---------------------------------------------------------------------------
# Canonical JSON (contract: "Canonical JSON")
# ---------------------------------------------------------------------------


class JsonError(ValueError):
    """Any input the canonical encoder or either parser refuses. The parsers
    raise nothing else, whatever the input, so a check that parses a node's
    output can tell "the node wrote garbage" from "the harness broke"."""


def _check_value(value, depth, floats=False):
    """Walk `value` and refuse what canonical JSON cannot hold; `depth` is the
    number of containers around it. Bounded by MAX_JSON_DEPTH, so the recursion
    is too. floats: finite floats are allowed (the session contract's probe
    results, D37 there); the crawler's documents have none."""
    if value is None or value is True or value is False or isinstance(value, str):
        return
    if floats and isinstance(value, float):
        if not math.isfinite(value):
            raise JsonError("NaN and Infinity are not allowed")
        return
    if isinstance(value, int):
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise JsonError("integer out of range")
        return
    if isinstance(value, dict):
        if depth >= MAX_JSON_DEPTH:
            raise JsonError("nesting deeper than %d" % MAX_JSON_DEPTH)
        for key, item in value.items():
            if not isinstance(key, str):
                raise JsonError("object key is not a string")
            _check_value(item, depth + 1, floats)
        return
    if isinstance(value, (list, tuple)):
        if depth >= MAX_JSON_DEPTH:
            raise JsonError("nesting deeper than %d" % MAX_JSON_DEPTH)
        for item in value:
            _check_value(item, depth + 1, floats)
        return
    raise JsonError("not a canonical JSON value: %s" % type(value).__name__)


def canonical(value, floats=False):
    """The canonical bytes of `value`: sorted keys, no whitespace, UTF-8 kept
    (not escaped), strictly encoded so a lone surrogate is an error. floats:
    finite floats allowed, written as Python writes them."""
    _check_value(value, 0, floats)
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise JsonError("lone surrogate in a string") from None


# Outside strings, only brackets matter for depth; a string token is skipped whole
# (unrolled loop, so a long string costs one match). An unterminated string runs
# to the end of the text and json.loads refuses it afterwards.
_DEPTH_TOKEN_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[{]|[\]}]', re.DOTALL)
# A \uD800-\uDFFF escape may leave a lone surrogate in a parsed string.
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")
_INT_DIGITS_MAX = len(str(MAX_SAFE_INTEGER))


def _prescan_depth(text):
    """Refuse nesting deeper than MAX_JSON_DEPTH before json.loads sees the
    text: its C scanner recurses, and 100000 brackets would end in
    RecursionError (the contract wants our own error, whatever the input)."""
    depth = 0
    for match in _DEPTH_TOKEN_RE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise JsonError("nesting deeper than %d" % MAX_JSON_DEPTH)
        elif token in "]}":
            depth -= 1


def _pairs(pairs):
    result = {}
    for key, value in pairs:
        if key in result:
            raise JsonError("duplicate key")
        result[key] = value
    return result


def _parse_int(digits):
    # Checked on the text first: int() of thousands of digits is slow, and
    # beyond sys.get_int_max_str_digits() it raises a ValueError of its own.
    if digits == "-0":
        raise JsonError("-0 is not a canonical integer")
    if len(digits.lstrip("-")) > _INT_DIGITS_MAX:
        raise JsonError("integer out of range")
    value = int(digits)
    if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        raise JsonError("integer out of range")
    return value


def _refuse_float(_text):
    raise JsonError("floats are not allowed")


def _refuse_constant(_text):
    raise JsonError("NaN and Infinity are not allowed")


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):  # 1e999
        raise JsonError("a number out of range")
    return value


def _check_strings(value):
    """Refuse a lone surrogate left by a \\uD8xx escape. Assumed: a value that
    cannot be encoded canonically does not meet the value rules, so the lenient
    parser refuses it too (the contract lists it only for the encoder)."""
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, dict):
        for key, item in value.items():
            key.encode("utf-8")
            _check_strings(item)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item)


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_float=_refuse_float,
                            parse_int=_parse_int, parse_constant=_refuse_constant)
_FLOAT_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_float=_finite_float,
                                  parse_int=_parse_int, parse_constant=_refuse_constant)


def _loads_text(text, floats=False):
    # Fewer brackets than the limit cannot nest deeper than it: skip the scan.
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH:
        _prescan_depth(text)
    value = (_FLOAT_DECODER if floats else _DECODER).decode(text)
    if _SURROGATE_ESCAPE_RE.search(text):
        _check_strings(value)
    return value


def _decode_utf8(data):
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise JsonError("JSON input must be bytes")
    data = bytes(data)
    if data.startswith(b"\xef\xbb\xbf"):
        raise JsonError("a BOM is not allowed")
    return data.decode("utf-8")


def parse_lenient(data, floats=False):
    """The contract's lenient parser: whitespace and key order are free, the
    value rules are not. Every failure, whatever the input, is JsonError.
    floats: finite numbers with a fraction or an exponent are values too."""
    try:
        return _loads_text(_decode_utf8(data), floats)
    except JsonError:
        raise
    except Exception as exc:    # ValueError, UnicodeError, RecursionError, MemoryError...
        raise JsonError("invalid JSON: %s" % type(exc).__name__) from None


def parse_canonical(data):
    """The canonical parser: lenient, and the bytes are exactly the canonical
    encoding of what they hold (CRAWLER-RESULT-1)."""
    value = parse_lenient(data)
    if canonical(value) != bytes(data):
        raise JsonError("not the canonical encoding")
    return value


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def digest(value, floats=False):
    """A document's digest: the SHA-256 of its canonical bytes."""
    return sha256_hex(canonical(value, floats))


# ---------------------------------------------------------------------------
# The documents
# ---------------------------------------------------------------------------


def utc_text(epoch_s):
    """The canonical UTC timestamp of the contract, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_s))


def make_policy(hosts, ports, addresses=(), max_redirects=5):
    """An egress policy document; its digest is the attestation. Not
    validated: a check may build an invalid one on purpose (CRAWLER-CONFIG-5)."""
    return {
        "schema_version": POLICY_SCHEMA,
        "allowed_hosts": list(hosts),
        "allowed_ports": list(ports),
        "allowed_addresses": list(addresses),
        "max_redirects": max_redirects,
    }


def default_limits():
    """Limits that let any small source through; the normalised bound leaves
    room for base64 and the receipt inside MAX_CRAWLER_RESULT_BYTES."""
    return {
        "max_source_bytes": 64 * 1024 * 1024,
        "max_normalized_bytes": MAX_CRAWLER_RESULT_BYTES // 2,
        "max_rows": 1000000,
        "max_columns": 64,
    }


def make_request(url, attestation, source_id="conformance-source", data_format="csv",
                 filename="data.csv", limits=None, requested_at="2026-11-30T08:00:00Z"):
    """A crawl request document (public.https 1.0.0, no reader_pin)."""
    return {
        "schema_version": REQUEST_SCHEMA,
        "source_id": source_id,
        "adapter_id": ADAPTER_ID,
        "adapter_version": ADAPTER_VERSION,
        "requested_at": requested_at,
        "egress_policy_attestation": attestation,
        "query": {
            "url": url,
            "data_format": data_format,
            "filename": filename,
            "limits": dict(default_limits() if limits is None else limits),
        },
    }


def required_headers(session_id, request):
    """The seven headers of the capability, in contract order (CRAWLER-CAP-7)."""
    return [
        ("Content-Type", RESULT_MEDIA_TYPE),
        ("x-goog-content-length-range", "1,%d" % MAX_CRAWLER_RESULT_BYTES),
        ("x-goog-content-sha256", "UNSIGNED-PAYLOAD"),
        ("x-goog-if-generation-match", "0"),
        ("x-goog-meta-mostlyright-crawler-session", session_id),
        ("x-goog-meta-mostlyright-request-digest", digest(request)),
        ("x-goog-meta-mostlyright-egress-policy", request["egress_policy_attestation"]),
    ]


def make_capability(session_id, request, upload_url, expires_at):
    """An upload capability with the ten keys (CRAWLER-CAP-1)."""
    return {
        "schema_version": CAPABILITY_SCHEMA,
        "crawler_session_id": session_id,
        "request_digest": digest(request),
        "method": "PUT",
        "upload_url": upload_url,
        "required_headers": [{"name": name, "value": value}
                             for name, value in required_headers(session_id, request)],
        "max_result_bytes": MAX_CRAWLER_RESULT_BYTES,
        "expires_at": expires_at,
        "redirect_policy": "deny",
        "single_use": True,
    }


def make_bootstrap(session_id, request, capability):
    """The :redeem answer (CRAWLER-BOOT-4)."""
    return {
        "schema_version": BOOTSTRAP_SCHEMA,
        "crawler_session_id": session_id,
        "request": request,
        "upload_capability": capability,
    }


def media_type(content_type):
    """The contract's media type of a Content-Type value: parameters removed,
    stripped, lowercased; None when the header was absent."""
    if content_type is None:
        return None
    return content_type.split(";", 1)[0].strip().lower()


def make_hop(url, status=200, location=None, content_type=None, content_length=None,
             etag=None, last_modified=None, peer_address="127.0.0.1", tls_version="TLSv1.3"):
    """One hop of the transport evidence."""
    return {"url": url, "status": status, "location": location,
            "content_type": content_type, "content_length": content_length,
            "etag": etag, "last_modified": last_modified,
            "peer_address": peer_address, "tls_version": tls_version}


def make_evidence(hops, raw_content_sha256, raw_size_bytes):
    """The transport evidence document (CRAWLER-FETCH-8)."""
    return {"schema_version": EVIDENCE_SCHEMA, "hops": list(hops),
            "raw_content_sha256": raw_content_sha256, "raw_size_bytes": raw_size_bytes}


def make_retrieval(source_url, evidence):
    """The `retrieval` object of the normalisation input, derived from the
    evidence as CRAWLER-RESULT-4 derives what the result must restate."""
    last = evidence["hops"][-1]
    return {
        "source_url": source_url,
        "final_url": last["url"],
        "media_type": media_type(last["content_type"]),
        "raw_content_sha256": evidence["raw_content_sha256"],
        "raw_size_bytes": evidence["raw_size_bytes"],
        "transport_evidence_digest": digest(evidence),
        "http_status_code": last["status"],
        "etag": last["etag"],
        "last_modified": last["last_modified"],
    }


_PLATFORMS = {"x86_64": "linux-amd64", "amd64": "linux-amd64",
              "aarch64": "linux-arm64", "arm64": "linux-arm64"}


def clean_room(machine=None):
    """The clean-room claim of CRAWLER-RESULT-8 for this machine. Any other
    architecture has no sandbox (CRAWLER-CHILD-4), hence no claim: ValueError."""
    machine = platform.machine() if machine is None else machine
    try:
        host_platform = _PLATFORMS[machine.lower()]
    except KeyError:
        raise ValueError("no clean-room claim for machine %r" % machine) from None
    return {
        "host_platform": host_platform,
        "no_new_privs": True,
        "parser_network_syscalls": "denied",
        "parser_process_creation": "denied",
    }


def input_header(request, retrieval, clean_room):
    """The header line of the normalisation input (CRAWLER-CHILD-5); the child
    reads canonical(header) + b"\\n" and then the raw bytes."""
    return {
        "schema_version": INPUT_SCHEMA,
        "request": request,
        "request_digest": digest(request),
        "retrieval": retrieval,
        "clean_room": clean_room,
    }


def failure_bundle(request, code):
    """The failure bundle PUT through the capability (CRAWLER-REPORT-2)."""
    return {
        "schema_version": FAILURE_SCHEMA,
        "request_digest": digest(request),
        "source_id": request["source_id"],
        "adapter_id": request["adapter_id"],
        "adapter_version": request["adapter_version"],
        "failure_code": code,
    }


def status_line(code, status):
    """The one stderr line of a run that did not succeed (CRAWLER-REPORT-3),
    and of a failing child (CRAWLER-CHILD-8)."""
    return canonical({"code": code, "status": status}) + b"\n"


# ---------------------------------------------------------------------------
# The reference normaliser (CRAWLER-NORM-1, NORM-2, NORM-3)
# ---------------------------------------------------------------------------

NORMALIZATION_FAILED = "CRAWLER_NORMALIZATION_FAILED"
ENCODING_UNSUPPORTED = "CRAWLER_SOURCE_ENCODING_UNSUPPORTED"
LIMIT_EXCEEDED = "CRAWLER_LIMIT_EXCEEDED"


class NormalizationError(Exception):
    """The normaliser refused the source; `code` is the child failure code it
    would write on stderr (one of CHILD_FAILURE_CODES)."""

    def __init__(self, code, detail=""):
        super().__init__("%s: %s" % (code, detail) if detail else code)
        self.code = code


Normalized = collections.namedtuple(
    "Normalized", "content row_count column_names row_digest parsed_schema_digest")

# A csv.reader is handed text split as a file opened with newline="" splits it
# (the csv module's documented requirement): at \r\n, \r or \n, endings kept.
# Assumed: that is what "as Python's csv module reads it" (CRAWLER-NORM-1) means,
# so a bare \r ends a record, and a blank line is a record of no fields (which
# the field-count rule then refuses).
_CSV_LINE_END_RE = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
# Rows are lists of str/int/bool/None already checked, so the fast encoder is
# enough to give their canonical form (lists have no keys to sort).
_ROW_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)

# The csv module's reader states that matter for "does this line end the record":
# a line ending inside a quoted field belongs to the field.
_START_FIELD, _IN_FIELD, _IN_QUOTED, _QUOTE_IN_QUOTED = range(4)


def _csv_state_after(state, body):
    """The excel dialect's reader state after `body` (a line without its
    ending), mirroring Modules/_csv.c with doublequote on, no escapechar and
    strict off. Only the quote handling matters: a record is complete at a line
    end unless the state is _IN_QUOTED there."""
    for char in body:
        if state == _START_FIELD:
            if char == '"':
                state = _IN_QUOTED
            elif char != ",":
                state = _IN_FIELD
        elif state == _IN_FIELD:
            if char == ",":
                state = _START_FIELD
        elif state == _IN_QUOTED:
            if char == '"':
                state = _QUOTE_IN_QUOTED
        else:                                   # _QUOTE_IN_QUOTED
            if char == '"':
                state = _IN_QUOTED              # "" is one quote
            elif char == ",":
                state = _START_FIELD
            else:
                state = _IN_FIELD               # strict off: text after the quote
    return state


class _CsvRecords:
    """Turns decoded lines into csv records as `csv.reader` would read the
    whole text, while holding only the lines of the current record.

    One csv.reader reads from a queue; it is asked for a record only once the
    queue holds a complete one (judged by `_csv_state_after`), so it never runs
    dry mid-record. At the end of input the reader gets the rest as it would at
    the end of a file (an unterminated quoted field ends the last record, as
    the csv module does with strict off)."""

    def __init__(self):
        self._lines = collections.deque()
        self._eof = False
        self._state = _START_FIELD
        self._reader = csv.reader(self._source())

    def _source(self):
        while self._lines or not self._eof:
            yield self._lines.popleft()     # IndexError here would be a bug: see push()

    def push(self, line):
        """Queue one line (ending included); return the record it completes,
        or None."""
        self._lines.append(line)
        body = line.rstrip("\r\n")
        if self._state != _IN_QUOTED and '"' not in body:
            # Fast path: an ordinary line of its own, or the end of a record
            # whose last quoted field closed on an earlier line.
            self._state = _START_FIELD
            return next(self._reader)
        state = _csv_state_after(self._state, body)
        if state == _IN_QUOTED:
            # The line ending belongs to the quoted field; without an ending
            # (the last line of the input) close() lets the reader finish it.
            self._state = _IN_QUOTED
            return None
        self._state = _START_FIELD
        return next(self._reader)

    def close(self):
        """The records left at the end of input (at most one)."""
        self._eof = True
        return list(self._reader)


class Normalizer:
    """The reference normaliser, fed the raw source in chunks.

    Holds at most one partial line (or one unfinished csv record) plus the
    normalised content, never the raw source (CRAWLER-NORM-3).

    Assumed (the contract gives no precedence): faults are reported in stream
    order, line by line; the first line that is not UTF-8, or the first record
    that breaks NORM-1 or NORM-2, decides the code. Within a record NORM-1
    comes first (names, field count), then NORM-2 (columns, rows, size). After
    a NormalizationError every call raises it again."""

    def __init__(self, data_format, limits):
        if data_format not in ("csv", "jsonl"):
            raise NormalizationError(NORMALIZATION_FAILED, "unknown data_format")
        self.data_format = data_format
        self.max_rows = limits["max_rows"]
        self.max_columns = limits["max_columns"]
        self.max_normalized_bytes = limits["max_normalized_bytes"]
        self._tail = []                 # bytes of the unfinished line
        self._first_line = True
        self._columns = None
        self._content = bytearray()
        self._rows = 0
        self._row_hash = hashlib.sha256()
        self._records = _CsvRecords() if data_format == "csv" else None
        self._error = None
        self._result = None

    # -- input ------------------------------------------------------------

    def feed(self, chunk):
        """Normalise what `chunk` completes; raise NormalizationError at the
        first fault."""
        self._guard(self._feed, bytes(chunk))

    def finish(self):
        """End of input: the last line, then the Normalized result."""
        if self._result is None:
            self._guard(self._finish)
        return self._result

    def _guard(self, step, *args):
        if self._error is not None:
            raise self._error
        if self._result is not None:
            raise ValueError("Normalizer already finished")
        try:
            step(*args)
        except NormalizationError as exc:
            self._error = exc
            raise

    def _feed(self, chunk):
        if not chunk:
            return
        if b"\n" not in chunk and (self._records is None or b"\r" not in chunk):
            self._tail.append(chunk)
            return
        data = b"".join(self._tail) + chunk if self._tail else chunk
        self._tail = []
        start = self._split(data, final=False)
        if start < len(data):
            self._tail.append(data[start:])

    def _finish(self):
        data = b"".join(self._tail)
        self._tail = []
        start = self._split(data, final=True)
        if start < len(data):
            self._line(data[start:])            # the last line, without an ending
        if self._records is not None:
            try:
                records = self._records.close()
            except csv.Error:
                raise NormalizationError(NORMALIZATION_FAILED, "csv") from None
            for record in records:
                self._record(record)
        if self._columns is None:
            # Assumed: no header record (CSV) or no object (JSON lines) means no
            # columns, which NORM-1 ("1 or more") and RESULT-7 refuse.
            raise NormalizationError(NORMALIZATION_FAILED, "no columns")
        columns = list(self._columns)
        self._result = Normalized(
            content=bytes(self._content),
            row_count=self._rows,
            column_names=columns,
            row_digest=self._row_hash.hexdigest(),
            parsed_schema_digest=digest({"column_names": columns,
                                         "data_format": self.data_format}),
        )

    def _split(self, data, final):
        """Hand every complete line of `data` to _line; return where the
        unfinished rest starts."""
        start = 0
        if self._records is None:
            # CRAWLER-NORM-1: JSON lines end at \n (a \r before it is dropped later).
            end = data.find(b"\n")
            while end >= 0:
                self._line(data[start:end + 1])
                start = end + 1
                end = data.find(b"\n", start)
            return start
        for match in _CSV_LINE_END_RE.finditer(data):
            if not final and match.end() == len(data) and match.group() == b"\r":
                break                           # a \n may follow in the next chunk
            self._line(data[start:match.end()])
            start = match.end()
        return start

    def _line(self, raw):
        # CRAWLER-NORM-1: UTF-8, no BOM. A line holds whole characters (\r and
        # \n never occur inside a UTF-8 sequence), so it decodes on its own.
        if self._first_line:
            self._first_line = False
            if raw.startswith(_BOM):
                raise NormalizationError(ENCODING_UNSUPPORTED, "BOM")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise NormalizationError(ENCODING_UNSUPPORTED, "invalid UTF-8") from None
        if self._records is not None:
            try:
                record = self._records.push(text)
            except csv.Error:
                raise NormalizationError(NORMALIZATION_FAILED, "csv") from None
            if record is not None:
                self._record(record)
        else:
            self._json_line(text)

    def _json_line(self, text):
        # CRAWLER-NORM-1: drop the \n and one \r; an empty line is skipped.
        if text.endswith("\n"):
            text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
        if not text:
            return
        try:
            obj = _loads_text(text)
        except Exception:
            raise NormalizationError(NORMALIZATION_FAILED, "not JSON") from None
        if not isinstance(obj, dict):
            raise NormalizationError(NORMALIZATION_FAILED, "not an object")
        if self._columns is None:
            # CRAWLER-NORM-1: the columns are the first object's keys, sorted.
            # Assumed: an empty key is refused as in CSV (RESULT-7 wants
            # non-empty column names).
            self._header(sorted(obj))
        if len(obj) != len(self._columns) or any(name not in obj for name in self._columns):
            raise NormalizationError(NORMALIZATION_FAILED, "key set differs")
        row = [obj[name] for name in self._columns]
        for value in row:
            if isinstance(value, (dict, list)):
                raise NormalizationError(NORMALIZATION_FAILED, "nested value")
        self._row(row)

    def _record(self, fields):
        if self._columns is None:
            self._header(fields)
            return
        # CRAWLER-NORM-1: every later record has exactly as many fields.
        if len(fields) != len(self._columns):
            raise NormalizationError(NORMALIZATION_FAILED, "field count")
        self._row(fields)

    def _header(self, names):
        # CRAWLER-NORM-1: 1 or more columns, each non-empty, no repeats; then
        # CRAWLER-NORM-2: no more than max_columns.
        if not names or any(name == "" for name in names) or len(set(names)) != len(names):
            raise NormalizationError(NORMALIZATION_FAILED, "column names")
        if len(names) > self.max_columns:
            raise NormalizationError(LIMIT_EXCEEDED, "max_columns")
        self._columns = tuple(names)
        self._append(_ROW_ENCODER.encode(list(names)).encode("utf-8") + b"\n")

    def _row(self, values):
        # CRAWLER-NORM-2: more than max_rows rows is a limit, not a parse fault.
        self._rows += 1
        if self._rows > self.max_rows:
            raise NormalizationError(LIMIT_EXCEEDED, "max_rows")
        line = _ROW_ENCODER.encode(values).encode("utf-8") + b"\n"
        self._append(line)
        self._row_hash.update(line)             # CRAWLER-NORM-2: row lines only

    def _append(self, line):
        self._content += line
        if len(self._content) > self.max_normalized_bytes:
            raise NormalizationError(LIMIT_EXCEEDED, "max_normalized_bytes")


def normalize_bytes(data, data_format, limits):
    """Normalise a whole source held in memory (tests and expected values)."""
    normalizer = Normalizer(data_format, limits)
    normalizer.feed(data)
    return normalizer.finish()


# ---------------------------------------------------------------------------
# The result (contract: "Result", CRAWLER-RESULT-*)
# ---------------------------------------------------------------------------


def _optional_digest(text):
    # CRAWLER-RESULT-4: SHA-256 of the header value as UTF-8, null when absent.
    return None if text is None else sha256_hex(text.encode("utf-8"))


def build_result(header, normalized):
    """The result document a correct child writes for this input: everything
    the node knows is restated from the header, everything only the child can
    know comes from `normalized`."""
    request = header["request"]
    query = request["query"]
    retrieval = header["retrieval"]
    content = normalized.content
    content_sha256 = sha256_hex(content)
    etag_digest = _optional_digest(retrieval["etag"])
    last_modified_digest = _optional_digest(retrieval["last_modified"])
    receipt = {
        "schema_version": RECEIPT_SCHEMA,
        "source_id": request["source_id"],
        "adapter_id": request["adapter_id"],
        "adapter_version": request["adapter_version"],
        "request_digest": header["request_digest"],
        "source_url": retrieval["source_url"],
        "final_url": retrieval["final_url"],
        "fetched_media_type": retrieval["media_type"],
        "normalized_media_type": NORMALIZED_MEDIA_TYPE,
        "normalized_data_format": query["data_format"],
        "normalized_filename": query["filename"],
        "acquired_at": request["requested_at"],             # CRAWLER-RESULT-6
        "raw_content_sha256": retrieval["raw_content_sha256"],
        "raw_size_bytes": retrieval["raw_size_bytes"],
        "normalized_content_sha256": content_sha256,
        "normalized_size_bytes": len(content),
        "row_count": normalized.row_count,
        "column_names": list(normalized.column_names),
        "parsed_schema_digest": normalized.parsed_schema_digest,
        # CRAWLER-RESULT-9: the upstream's Reader fields, fixed.
        "family_id": None,
        "family_version": None,
        "decode_options_digest": None,
        "decode_flags": [],
        "resource_caps": None,
        "reader_budgets": None,
        "transport_evidence_digest": retrieval["transport_evidence_digest"],
        "egress_policy_attestation": request["egress_policy_attestation"],
        "clean_room": header["clean_room"],                 # CRAWLER-RESULT-8
        "row_digest": normalized.row_digest,
        "http_status_code": retrieval["http_status_code"],
        "etag_digest": etag_digest,
        "last_modified_digest": last_modified_digest,
    }
    observation = {
        "schema_version": OBSERVATION_SCHEMA,
        "source_id": request["source_id"],
        "request_digest": header["request_digest"],
        "observed_at": request["requested_at"],             # CRAWLER-RESULT-6
        "raw_content_sha256": retrieval["raw_content_sha256"],
        "normalized_content_sha256": content_sha256,
        "row_count": normalized.row_count,
        "row_digest": normalized.row_digest,
        "http_status_code": retrieval["http_status_code"],
        "etag_digest": etag_digest,
        "last_modified_digest": last_modified_digest,
    }
    return {
        "schema_version": RESULT_SCHEMA,
        "request_digest": header["request_digest"],
        "source_id": request["source_id"],
        "adapter_id": request["adapter_id"],
        "adapter_version": request["adapter_version"],
        "acquisition_receipt": receipt,
        "observation": observation,
        # CRAWLER-RESULT-5: standard alphabet, padded, no newlines.
        "normalized_content": base64.b64encode(content).decode("ascii"),
        "next_watermark": None,                              # CRAWLER-RESULT-9
    }


# ---------------------------------------------------------------------------
# What any result must be (CRAWLER-RESULT-*), whatever its normaliser did
# ---------------------------------------------------------------------------


class ContentError(ValueError):
    """A normalised content that is not the JSON lines of CRAWLER-RESULT-10;
    the message names the first line that breaks it."""


def content_of(result):
    """The decoded normalized_content of a result document, or None when it
    is not standard padded base64 without newlines (CRAWLER-RESULT-5: only
    decodability is judged here; re-encoding is compared field by field)."""
    encoded = result.get("normalized_content") if isinstance(result, dict) else None
    if not isinstance(encoded, str):
        return None
    try:
        return base64.b64decode(encoded.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):    # binascii.Error is a ValueError
        return None


def read_content(content, data_format):
    """The Normalized that a normalised content stands for (CRAWLER-RESULT-10):
    the header line's column names, the number of row lines, the SHA-256 of the
    row lines and the schema digest, all read off the bytes themselves; raise
    ContentError when the bytes are not a header line and row lines, each the
    canonical JSON array the clause defines and each ending in \\n.

    This is all the platform can know of a normaliser's output: it judges the
    shape and the bindings, never the values (those are the normaliser's work)."""
    content = bytes(content)
    if not content.endswith(b"\n"):
        raise ContentError("the content is empty or its last line does not end in \\n")
    lines = content[:-1].split(b"\n")
    try:
        names = parse_canonical(lines[0])
    except JsonError:
        raise ContentError("the header line is not canonical JSON") from None
    if not (isinstance(names, list) and names and all(isinstance(name, str) and name for name in names)):
        raise ContentError("the header line is not an array of 1 or more non-empty strings")
    for number, line in enumerate(lines[1:], 2):
        try:
            row = parse_canonical(line)
        except JsonError:
            raise ContentError("line %d is not canonical JSON" % number) from None
        if not isinstance(row, list) or len(row) != len(names):
            raise ContentError("line %d is not an array of %d values (one per column)" % (number, len(names)))
        if any(isinstance(value, (list, dict)) for value in row):
            raise ContentError("line %d holds an array or object; a row holds strings, integers, booleans "
                               "or null" % number)
    return Normalized(
        content=content,
        row_count=len(lines) - 1,
        column_names=names,
        row_digest=sha256_hex(content[len(lines[0]) + 1:]),
        parsed_schema_digest=digest({"column_names": names, "data_format": data_format}),
    )


# Fields of a result that follow from its content (CRAWLER-RESULT-5, -10):
# (path, from the bytes alone) -- the bytes' own fields can be compared as long
# as the content decodes; the summary only when the content is well-formed.
_R, _O = "acquisition_receipt", "observation"
_CONTENT_FIELDS = (
    (("normalized_content",), True), ((_R, "normalized_content_sha256"), True),
    ((_R, "normalized_size_bytes"), True), ((_O, "normalized_content_sha256"), True),
    ((_R, "row_count"), False), ((_R, "column_names"), False), ((_R, "row_digest"), False),
    ((_R, "parsed_schema_digest"), False), ((_O, "row_count"), False), ((_O, "row_digest"), False),
)


def _lookup(document, path):
    for key in path:
        if not isinstance(document, dict) or key not in document:
            return False, None
        document = document[key]
    return True, document


def _assign(document, path, value):
    for key in path[:-1]:
        document = document[key]
    document[path[-1]] = value


def short(value, limit=120):
    """A value for a problem sentence, cut to `limit` characters."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=repr)
    return text if len(text) <= limit else text[:limit] + "..."


def diff(path, want, got, out):
    """Append (path, want, got) for every leaf where got differs from want."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            sub = "%s.%s" % (path, key) if path else key
            if key not in got:
                out.append((sub, want[key], "(missing)"))
            elif key not in want:
                out.append((sub, "(no such key)", got[key]))
            else:
                diff(sub, want[key], got[key], out)
        return
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (a, b) in enumerate(zip(want, got)):
            diff("%s[%d]" % (path, i), a, b, out)
        return
    if type(want) is not type(got) or want != got:
        out.append((path, want, got))


def parse_result(raw):
    """(document, problems): the result parsed, with a problem when its bytes
    are JSON but not canonical (CRAWLER-RESULT-1); (None, [problem]) when they
    are not JSON at all."""
    try:
        return parse_canonical(raw), []
    except JsonError as exc:
        try:
            return parse_lenient(raw), ["the result is not canonical JSON (CRAWLER-RESULT-1)"]
        except JsonError:
            return None, ["the result is not JSON: %s" % exc]


def result_problems(raw, header, evidence_exact=True, evidence=None):
    """Problems (sentences) with `raw` as the result for the normalisation
    input `header`, judged by what the platform can know: canonical bytes,
    exact keys, everything the node knows restated from the header (identity,
    what was fetched, the request's fields, the time, the clean room, no
    Reader), the content decodable, within the limits, of the shape of
    CRAWLER-RESULT-10, and its hash, size and summary read off it. Never the
    values of the rows: any normaliser may choose them.

    With evidence_exact False (a fault changed what the harness can rebuild)
    transport_evidence_digest is judged by its shape only; `evidence`, when
    given, is quoted in a mismatch to help the reader."""
    actual, problems = parse_result(bytes(raw))
    if actual is None:
        return problems
    if not isinstance(actual, dict):
        return problems + ["the result is not a JSON object (CRAWLER-RESULT-2)"]
    query = header["request"]["query"]
    limits = query["limits"]
    content = content_of(actual)
    normalized = None
    if content is None:
        problems.append("normalized_content: not standard padded base64 (CRAWLER-RESULT-5)")
    else:
        if len(content) > limits["max_normalized_bytes"]:
            problems.append("normalized_content: %d bytes decoded, above max_normalized_bytes %d "
                            "(CRAWLER-RESULT-5)" % (len(content), limits["max_normalized_bytes"]))
        try:
            normalized = read_content(content, query["data_format"])
        except ContentError as exc:
            problems.append("normalized_content: %s (CRAWLER-RESULT-10)" % exc)
    if normalized is not None:
        if normalized.row_count > limits["max_rows"]:
            problems.append("the content has %d rows, above max_rows %d (CRAWLER-RESULT-7)"
                            % (normalized.row_count, limits["max_rows"]))
        if len(normalized.column_names) > limits["max_columns"]:
            problems.append("the content has %d columns, above max_columns %d (CRAWLER-RESULT-7)"
                            % (len(normalized.column_names), limits["max_columns"]))
    stand_in = normalized or Normalized(content=content or b"", row_count=0, column_names=[], row_digest="",
                                        parsed_schema_digest="")
    expected = build_result(header, stand_in)
    for path, from_bytes in _CONTENT_FIELDS:
        # What cannot be recomputed is not compared twice: its problem is listed above.
        if normalized is None and (content is None or not from_bytes):
            present, value = _lookup(actual, path)
            if present:
                _assign(expected, path, value)
    diffs = []
    diff("", expected, actual, diffs)
    for path, want, got in diffs:
        if path.endswith("transport_evidence_digest") and not evidence_exact:
            if not (isinstance(got, str) and re.match(r"^[0-9a-f]{64}\Z", got)):
                problems.append("%s: expected 64 lowercase hex, got %s" % (path, short(got)))
            continue
        if path.endswith("transport_evidence_digest") and evidence is not None:
            problems.append("%s: expected %s (the harness's evidence: %s), got %s" % (
                path, want, short(json.dumps(evidence, sort_keys=True), 600), short(got)))
            continue
        problems.append("%s: expected %s, got %s" % (path or "(top)", short(want), short(got)))
    return problems
