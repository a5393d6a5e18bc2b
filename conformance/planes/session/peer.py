"""Peer variety for the session plane: what the upstream's real control plane and crawler may send.

The session worker stands in for the upstream `hosted_session_worker.py` against the upstream's own
Studio and crawler, which nobody here has seen.  Where the upstream reads a document leniently
(`.get()`, `str()`, `float()`, `uuid.UUID()`, members it never looks at), a real peer may write it
differently from our fakes; conformance/dialect.py rewrites documents that way, and these helpers
apply the rewrites to the session plane's documents, each within what the upstream accepts (area
PEER of contract/session.md):

    ctx.plane(lease_patch=lease_paths("concrete"))          # allowed_callback_paths, attempt filled in
    ctx.plane(lease_patch=lease_forms())                    # schema 3.1.0, integer intervals, ...
    ctx.plane(claim_patch=claim_members())                  # members nobody defined, in answer and probe
    plane.add_source(rows=..., patch=acquisition_members()) # acquisition documents likewise
    plane.add_source(rows=..., bundle_patch=upstream_csv(columns, rows))   # the upstream crawler's CSV

The upstream refuses a lease whose top-level key set is not its fifteen keys and a probe request off
its vocabulary, so neither gains a member here; everything else may.
"""

import base64
import datetime
import hashlib
import json

from conformance import dialect
from conformance.planes.session import deploy

__all__ = ["LEASE_PATH_FORMS", "lease_paths", "lease_forms", "claim_members", "claim_forms", "acquisition_members",
           "acquisition_numbers", "upstream_csv", "upstream_v1", "object_lines", "bundle_members", "csv_bytes",
           "refusal_body", "BIG_INTEGER"]

# An integer no 64-bit type holds: a peer's member the node does not use may carry one (json.loads does).
BIG_INTEGER = 2 ** 70
# What an unknown member carries: every JSON type, a fraction and a big integer among them.
UNKNOWN_VALUE = {"flag": True, "items": [1, 2.5, "three", None], "note": "ignore me", "big": BIG_INTEGER}
# allowed_callback_paths as a control plane may write them (SESSION-PEER-2): the templates with the
# attempt id filled in; the bare producer prefix; the attempt's own path, covering what lies below it.
LEASE_PATH_FORMS = ("concrete", "prefix", "attempt")


def lease_paths(form):
    """A lease_patch whose allowed_callback_paths take one of LEASE_PATH_FORMS."""
    if form not in LEASE_PATH_FORMS:
        raise ValueError("form must be one of %s" % ", ".join(LEASE_PATH_FORMS))

    def patch(lease):
        attempt = lease["attempt_id"]
        if form == "concrete":
            lease["allowed_callback_paths"] = [template.replace("{attempt_id}", attempt)
                                               for _method, template, _status in deploy.templates().values()]
        elif form == "prefix":
            lease["allowed_callback_paths"] = [deploy.CALLBACK_PREFIX]
        else:  # the start template's path up to the attempt id, with it: /internal/v3/producer/attempts/<id>
            start = deploy.START_PATH_TEMPLATE
            lease["allowed_callback_paths"] = [start[:start.index("{attempt_id}")] + attempt]
        return lease
    return patch


def lease_forms(claim_poll_s=None):
    """A lease_patch in forms the upstream's parse_session_lease takes and our fakes never write: a
    schema_version it never looks at, a callback base with trailing slashes (it strips them all), the
    allowlist naming one source twice (its frozenset keeps one), members nobody defined in the context
    (it reads four), and whole-second intervals (its own form: positive integers) unless claim_poll_s."""
    def patch(lease):
        lease["schema_version"] = "3.1.0"
        lease["callback_base_url"] = lease["callback_base_url"] + "//"
        context = dialect.unknown_members(lease["context"], value=UNKNOWN_VALUE)
        context["source_ids"] = list(lease["context"]["source_ids"]) + list(lease["context"]["source_ids"][:1])
        lease["context"] = context
        lease["heartbeat_interval_seconds"] = 1
        lease["claim_poll_interval_seconds"] = claim_poll_s if claim_poll_s is not None else 1
        lease["idle_timeout_seconds"] = 600
        return lease
    return patch


def _probe_members(answer):
    """The answer with a member nobody defined at its top and in its probe (never in the request:
    the vocabulary refuses an unknown request key, as the upstream's session_probes may)."""
    probe = answer.get("probe")
    answer = dialect.unknown_members(dict((k, v) for k, v in answer.items() if k != "probe"), top_only=True,
                                     value=UNKNOWN_VALUE)
    if isinstance(probe, dict):
        request = probe.get("request")
        probe = dialect.unknown_members(dict((k, v) for k, v in probe.items() if k != "request"), top_only=True,
                                        value=UNKNOWN_VALUE)
        probe["request"] = request
        answer["probe"] = probe
    elif "probe" in answer or probe is not None:
        answer["probe"] = probe
    return answer


def claim_members():
    """A claim_patch: every answer carries members nobody defined, at its top and in its probe."""
    return _probe_members


def claim_forms(interval_text):
    """A claim_patch in the forms the upstream's claim loop reads: session_state null (str() of it is
    no closing state: live), claimed 1 (truthy), the interval as text its float() reads; the probe's
    id in upper case (uuid.UUID() reads it; the report's path carries its canonical text)."""
    def patch(answer):
        if answer.get("session_state") == "live":
            answer["session_state"] = None
        answer["claim_poll_interval_seconds"] = interval_text
        if answer.get("claimed") is True:
            answer["claimed"] = 1
        return answer
    return patch


def acquisition_members():
    """A set_source patch: every acquisition document carries members nobody defined, at its top and
    in result_download, and names its crawler session in upper case."""
    def patch(doc):
        download = doc.get("result_download")
        doc = dialect.unknown_members(dict((k, v) for k, v in doc.items() if k != "result_download"),
                                      top_only=True, value=UNKNOWN_VALUE)
        if isinstance(download, dict):
            doc["result_download"] = dialect.unknown_members(download, top_only=True, value=UNKNOWN_VALUE)
        doc["crawler_session_id"] = doc["crawler_session_id"].upper()
        if isinstance(doc.get("result_download"), dict):
            doc["result_download"]["crawler_session_id"] = doc["crawler_session_id"]
        return doc
    return patch


def acquisition_numbers(instant_form):
    """A set_source patch: producer_fence written as a float (the upstream compares with !=, so 7.0
    is 7), and the descriptor's expires_at as text of another ISO 8601 form (dialect.INSTANT_FORMS)."""
    def patch(doc):
        doc = dialect.floats(doc, {"producer_fence"})
        download = doc.get("result_download")
        if isinstance(download, dict) and isinstance(download.get("expires_at"), str):
            moment = datetime.datetime.strptime(download["expires_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                tzinfo=datetime.timezone.utc)
            download["expires_at"] = dialect.instant(moment, instant_form)
        return doc
    return patch


def csv_bytes(columns, rows):
    """CSV text of a header row and the rows (RFC 4180 quoting, CRLF endings), as a crawler fetched it."""
    def field(value):
        text = "" if value is None else str(value)
        return '"%s"' % text.replace('"', '""') if any(c in text for c in ',"\r\n') else text
    return "".join(",".join(field(v) for v in line) + "\r\n" for line in [columns] + list(rows)).encode("utf-8")


def _reset_content(doc, content):
    digest = hashlib.sha256(content).hexdigest()
    doc["normalized_content"] = base64.b64encode(content).decode("ascii")
    doc["acquisition_receipt"].update(normalized_content_sha256=digest, normalized_size_bytes=len(content))
    doc["observation"]["normalized_content_sha256"] = digest


def upstream_csv(columns, rows):
    """A bundle_patch: the result as the upstream crawler stores a CSV source read by a Reader: the
    CSV text itself as the normalized content, the fetched media type, the Reader fields filled
    (seed 000's _validate_public_https_result with a reader_pin), the row summary the Reader's own.
    Returns (patch, content)."""
    content = csv_bytes(columns, rows)

    def patch(doc):
        _reset_content(doc, content)
        doc["acquisition_receipt"].update(
            fetched_media_type="text/csv", normalized_media_type="text/csv", normalized_data_format="csv",
            normalized_filename="source.csv", row_count=len(rows), column_names=list(columns),
            family_id="delimited-text", family_version="2.1.0",
            decode_options_digest=hashlib.sha256(b'{"delimiter":",","encoding":"utf-8"}').hexdigest(),
            decode_flags=["header_row", "crlf"], resource_caps={"max_rows": 100000},
            reader_budgets={"max_input_bytes": 16777216, "max_output_bytes": 16777216, "max_rows": 100000,
                            "max_columns": 4096, "max_cell_bytes": 1048576})
        doc["observation"]["row_count"] = len(rows)
        return doc
    return patch, content


def upstream_v1(content=None):
    """A bundle_patch: a v1 result (the upstream crawler's for a request that is not v3): its schema
    strings and its smaller key sets, without the cadence evidence."""
    def patch(doc):
        doc["schema_version"] = deploy.CRAWLER_RESULT_SCHEMAS[-1]
        receipt, observation = doc["acquisition_receipt"], doc["observation"]
        receipt["schema_version"] = "hosted-public-https-acquisition-receipt.v1"
        observation["schema_version"] = "hosted-public-https-source-observation.v1"
        for key in ("row_digest", "http_status_code", "etag_digest", "last_modified_digest"):
            receipt.pop(key, None)
            observation.pop(key, None)
        if content is not None:
            _reset_content(doc, content)
        return doc
    return patch


def object_lines(columns, rows):
    """JSON lines of one object per row (a member per non-null cell), as a JSON-lines source is fetched;
    returns (bundle_patch, content) for a jsonl result whose normalized content is those lines."""
    lines = []
    for row in rows:
        record = dict((name, value) for name, value in zip(columns, row) if value is not None)
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    content = "".join(lines).encode("utf-8")

    def patch(doc):
        _reset_content(doc, content)
        doc["acquisition_receipt"].update(fetched_media_type="application/x-ndjson",
                                          normalized_media_type="application/x-ndjson",
                                          normalized_data_format="jsonl")
        return doc
    return patch, content


# A crawler result is canonical JSON without fractions (CRAWLER-RESULT-1): what a member nobody
# defined may carry there.
BUNDLE_UNKNOWN_VALUE = {"flag": True, "items": [1, "three", None], "note": "ignore me"}


def bundle_members():
    """A bundle_patch: a member nobody defined in the result, its receipt, its observation and the
    receipt's clean-room claim (the bundle stays canonical: the store holds its canonical bytes)."""
    def patch(doc):
        return dialect.unknown_members(doc, value=BUNDLE_UNKNOWN_VALUE)
    return patch


def refusal_body(code, detail="refused by the conformance control plane"):
    """A refusal's body as a producer may write it: the code, prose, and members nobody defined, a
    fraction and a big integer among them (the upstream reads the code only)."""
    return json.dumps(dialect.unknown_members({"code": code, "detail": detail, "retry_after_s": 1.5,
                                               "request_serial": BIG_INTEGER}, value=UNKNOWN_VALUE),
                      sort_keys=True, separators=(",", ":")).encode("utf-8")
