#!/usr/bin/env python3
"""A first version of the crawler job, written the way most first versions are.

THIS FILE IS THE COUNTER-EXAMPLE. Do not copy it; copy nodes/crawler_job.py.

It follows the upstream program closely (argparse, urllib for the metadata server, the
broker and the source, `subprocess.run` for the normaliser, http.client for the PUT) and
speaks the crawler contract's wire format right enough that a small healthy run succeeds:
the identity request, the :redeem POST, the normalisation input, the result document with
its transport evidence, and the create-only PUT with the seven headers. Judge it with:

    python3 -m conformance crawler examples/naive_crawler_job.py
    python3 -m conformance crawler nodes/crawler_job.py

What it gets wrong, each marked `# NAIVE:` where it happens:

 1. argparse: abbreviations and a repeated option accepted, unknown tokens echoed; uuid.UUID()
    accepts any spelling; sys.argv not scrubbed (CRAWLER-ARGV-1, -2, -3).
 2. Configuration read as it is needed, unvalidated: bucket only non-empty, bases, execution,
    endpoints and policy unchecked, timeouts any float() (even above the constants), a missing
    variable a KeyError (CRAWLER-CONFIG-1 to -7).
 3. urllib's default opener: proxy variables honoured; redirects followed on the metadata
    and source requests, and a 301/302/303 answering :redeem or :fail replayed as a GET that
    carries the bearer token to the new host (CRAWLER-CONFIG-8, -IDENTITY-3, -BOOT-2,
    -FAIL-2, -FETCH-5, -SECRET-2).
 4. Never sets itself not dumpable; the token and bootstrap are str, never wiped
    (CRAWLER-SECRET-1, -3).
 5. Every answer read whole with resp.read(), no bound; the token only strip()ped, not
    checked as a compact JWS (CRAWLER-IDENTITY-3, -4, BOOT-3, UPLOAD-3).
 6. json.loads for everything: duplicate keys, floats, NaN and any depth accepted; the
    request not validated; an empty :redeem body is RESPONSE_INVALID (CRAWLER-BOOT-2, -4, -5).
 7. The :redeem token is reused for :fail (CRAWLER-IDENTITY-2, -FAIL-1).
 8. Capability checked loosely: keys present, host right, no query inventory, expiry once
    (with datetime.fromisoformat, which on Python 3.9 refuses the 1-digit fraction 3.11
    accepts), headers sent as given, session not compared (CRAWLER-CAP-1 to -9, -UPLOAD-5).
 9. "Canonical" JSON is json.dumps(sort_keys, separators) with ensure_ascii left on: a
    non-ASCII request gets another digest and non-ASCII results are re-encoded
    (Canonical JSON, CRAWLER-CHILD-5, -RESULT-1, -UPLOAD-2).
10. Fetch: only the host is checked; no attestation, port, scheme or address check; urllib's
    headers; redirects followed blindly; one hop recorded; Content-Encoding and
    Content-Length ignored; the body read whole (CRAWLER-FETCH-1 to -8, -STREAM-1).
11. Per-socket timeouts only: a server that drips is never cut off (D9, CRAWLER-FETCH-7,
    -IDENTITY-3, -BOOT-2, -UPLOAD-6).
12. The child: a pin used as given, the node file run without -I -S, the whole environment
    inherited, no sandbox yet a clean-room claim, no session or parent-death signal, stdin
    and output buffered whole, no window cap, stderr ignored on exit 0, any code it claims
    trusted, a timeout is JOB_FAILED (CRAWLER-CHILD-1 to -10, -RESULT-8).
13. The result checked on two fields, then re-serialised before the PUT
    (CRAWLER-RESULT-1 to -9, -UPLOAD-2).
14. The PUT: http.client's request() adds Accept-Encoding; any 2xx is stored; a refused result
    PUT is followed by a failure bundle (CRAWLER-UPLOAD-1, -3, -4, D12).
15. No signal handler: SIGTERM is ignored as PID 1, SIGINT is a traceback, never 143
    (CRAWLER-STOP-1 to -5).
16. Failures: exit 1 for everything (a stored bundle included); an unforeseen error prints
    its text and the URL in use, the signed URL included, with no bundle
    (CRAWLER-REPORT-1 to -6, -SECRET-2).
17. The normaliser (child mode): blank CSV lines skipped, a BOM kept, JSON lines parsed by
    json.loads with the first object's key order, only max_rows checked
    (CRAWLER-NORM-1, -2, -3).
"""

import argparse
import base64
import csv
import datetime
import hashlib
import http.client
import io
import json
import os
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid

BOOTSTRAP_SCHEMA = "mostlyright-crawler-bootstrap.v1"
RESULT_SCHEMA = "mostlyright-crawler-result.v3"
RECEIPT_SCHEMA = "hosted-public-https-acquisition-receipt.v3"
OBSERVATION_SCHEMA = "hosted-public-https-source-observation.v3"
FAILURE_SCHEMA = "mostlyright-crawler-failure.v1"
EVIDENCE_SCHEMA = "mostlyright-transport-evidence.v1"
INPUT_SCHEMA = "mostlyright-normalization-input.v1"
IDENTITY_PATH = "/computeMetadata/v1/instance/service-accounts/default/identity"
CAPABILITY_KEYS = ("schema_version", "crawler_session_id", "request_digest", "method", "upload_url",
                   "required_headers", "max_result_bytes", "expires_at", "redirect_policy", "single_use")
# NAIVE: claimed, never installed (and wrong on aarch64).
CLEAN_ROOM = {"host_platform": "linux-amd64", "no_new_privs": True,
              "parser_network_syscalls": "denied", "parser_process_creation": "denied"}

current_url = None  # the URL in use, for the error message


class JobError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def dumps(value):
    # NAIVE: ensure_ascii left on (non-ASCII becomes \uXXXX, not the canonical encoding); no
    # allow_nan=False, no integer range, no surrogate check.
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def digest(value):
    return hashlib.sha256(dumps(value).encode("utf-8")).hexdigest()


def timeout(name, default):
    # NAIVE: any float() text ("1e3", "inf", "nan"), and nothing stops it raising the constant.
    # NAIVE: a per-socket-operation timeout, not a deadline for the whole exchange (D9).
    return float(os.environ.get("MOSTLYRIGHT_CRAWLER_%s_TIMEOUT_S" % name, default))


def http_get(url, headers, seconds):
    global current_url
    current_url = url
    # NAIVE: urllib's default opener: proxy variables honoured, redirects followed.
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=seconds) as resp:
        return resp.read()  # NAIVE: no bound on the answer


class Job(object):

    def __init__(self, session_id):
        self.session_id = session_id
        self.request = None
        self.request_digest = None
        self.capability = None
        self.storage = None
        self.upload_timeout = None

    # -- bootstrap ---------------------------------------------------------
    def identity_token(self, audience):
        host = os.environ.get("GCE_METADATA_HOST", "169.254.169.254")  # NAIVE: shape not checked
        query = urllib.parse.urlencode({"audience": audience, "format": "full"})
        try:
            raw = http_get("http://%s%s?%s" % (host, IDENTITY_PATH, query), {"Metadata-Flavor": "Google"},
                           timeout("BOOTSTRAP", 10))
        except urllib.error.HTTPError:
            raise JobError("CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE")
        # NAIVE: a str (never wiped), stripped, not checked as a compact JWS.
        return raw.decode("utf-8").strip()

    def redeem(self, url_base, token):
        global current_url
        url = "%s/%s:redeem" % (url_base, self.session_id)
        current_url = url
        request = urllib.request.Request(url, method="POST", headers={
            "Accept": "application/json",
            "Authorization": "Bearer " + token,
            "X-Mostlyright-Cloud-Run-Execution": os.environ["CLOUD_RUN_EXECUTION"],  # NAIVE: not validated
        })
        try:
            # NAIVE: a 301/302/303 is followed as a GET, Authorization included (307/308 are
            # refused by urllib itself); the answer is read whole.
            with urllib.request.urlopen(request, timeout=timeout("BOOTSTRAP", 10)) as resp:
                return resp.read()
        except urllib.error.HTTPError:
            self.report_fail(url_base, token, "CRAWLER_BOOTSTRAP_REDEMPTION_FAILED")
            raise JobError("CRAWLER_BOOTSTRAP_REDEMPTION_FAILED")

    def report_fail(self, url_base, token, code):
        """Best effort: tell the broker which bootstrap failure ended the run."""
        # NAIVE: the :redeem token is reused; no fresh token for the :fail audience.
        request = urllib.request.Request("%s/%s:fail" % (url_base, self.session_id), method="POST",
                                         data=dumps({"failure_code": code}).encode("utf-8"), headers={
                                             "Accept": "application/json",
                                             "Authorization": "Bearer " + token,
                                             "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout("BOOTSTRAP", 10)) as resp:
                resp.read()
        except Exception:
            pass

    def bootstrap(self):
        url_base = os.environ["MOSTLYRIGHT_CRAWLER_BOOTSTRAP_URL_BASE"]  # NAIVE: not validated
        audience_base = os.environ["MOSTLYRIGHT_CRAWLER_BOOTSTRAP_AUDIENCE_BASE"]
        token = self.identity_token("%s/%s:redeem" % (audience_base, self.session_id))
        raw = self.redeem(url_base, token)
        try:
            # NAIVE: json.loads: duplicates, floats, NaN accepted; deep nesting is a RecursionError.
            boot = json.loads(raw)
        except ValueError:
            # NAIVE: an empty body lands here too (it is a failed redemption).
            self.report_fail(url_base, token, "CRAWLER_BOOTSTRAP_RESPONSE_INVALID")
            raise JobError("CRAWLER_BOOTSTRAP_RESPONSE_INVALID")
        # NAIVE: schema and session only: extra keys accepted, the request document not validated.
        if boot.get("schema_version") != BOOTSTRAP_SCHEMA or boot.get("crawler_session_id") != self.session_id:
            self.report_fail(url_base, token, "CRAWLER_BOOTSTRAP_RESPONSE_INVALID")
            raise JobError("CRAWLER_BOOTSTRAP_RESPONSE_INVALID")
        return boot["request"], boot["upload_capability"]

    def check_capability(self, capability):
        # NAIVE: keys present (extra ones fine), constants, types and forms unchecked.
        if any(key not in capability for key in CAPABILITY_KEYS):
            raise JobError("CRAWLER_UPLOAD_CAPABILITY_INVALID")
        # NAIVE: the host only: no port, bucket, prefix or character checks; the query's six
        # fields are never looked at; the session is not compared with argv.
        url = urllib.parse.urlsplit(capability["upload_url"])
        if url.scheme != "https" or url.hostname != urllib.parse.urlsplit(self.storage).hostname:
            raise JobError("CRAWLER_UPLOAD_CAPABILITY_INVALID")
        # NAIVE: expiry checked once, here; X-Goog-Date and X-Goog-Expires ignored; on Python 3.9
        # fromisoformat raises ValueError for a fraction of other than 3 or 6 digits.
        expires = datetime.datetime.fromisoformat(capability["expires_at"].replace("Z", "+00:00"))
        if expires <= datetime.datetime.now(datetime.timezone.utc):
            raise JobError("CRAWLER_UPLOAD_CAPABILITY_EXPIRED")

    # -- fetch -------------------------------------------------------------
    def fetch(self, policy):
        url = self.request["query"]["url"]
        # NAIVE: the attestation is never compared with the policy; the host is the only rule
        # (no scheme, port or IP-literal check); a private address is fine.
        if urllib.parse.urlsplit(url).hostname not in policy["allowed_hosts"]:
            raise JobError("CRAWLER_SOURCE_URL_INVALID")
        global current_url
        current_url = url
        try:
            # NAIVE: urllib's default headers (Python-urllib User-Agent); redirects followed
            # wherever they point; proxies honoured; per-socket timeout only.
            with urllib.request.urlopen(url, timeout=timeout("FETCH", 300)) as resp:
                # NAIVE: reaches into urllib's socket for the evidence (a proxy's address when
                # one is used).
                sock = resp.fp.raw._sock
                peer, tls_version = sock.getpeername()[0], sock.version()
                headers = resp.headers
                # NAIVE: Content-Encoding and Content-Length are not looked at; the whole
                # source is read into memory, with no max_source_bytes.
                raw = resp.read()
                status, final_url = resp.status, resp.geturl()
        except urllib.error.HTTPError:
            raise JobError("CRAWLER_SOURCE_HTTP_STATUS")
        except socket.timeout:
            raise JobError("CRAWLER_SOURCE_TIMEOUT")
        except urllib.error.URLError as exc:
            raise JobError("CRAWLER_SOURCE_TIMEOUT" if isinstance(exc.reason, socket.timeout)
                           else "CRAWLER_SOURCE_UNAVAILABLE")
        length = headers.get("Content-Length")
        # NAIVE: one hop, the last: the redirects urllib followed leave no evidence.
        hop = {"url": final_url, "status": status, "location": None,
               "content_type": headers.get("Content-Type"),
               "content_length": int(length) if length else None,
               "etag": headers.get("ETag"), "last_modified": headers.get("Last-Modified"),
               "peer_address": peer, "tls_version": tls_version}
        raw_sha = hashlib.sha256(raw).hexdigest()
        evidence = {"schema_version": EVIDENCE_SCHEMA, "hops": [hop],
                    "raw_content_sha256": raw_sha, "raw_size_bytes": len(raw)}
        content_type = hop["content_type"]
        retrieval = {
            "source_url": url, "final_url": final_url,
            "media_type": content_type.split(";")[0].strip().lower() if content_type else None,
            "raw_content_sha256": raw_sha, "raw_size_bytes": len(raw),
            "transport_evidence_digest": digest(evidence), "http_status_code": status,
            "etag": hop["etag"], "last_modified": hop["last_modified"],
        }
        return raw, retrieval

    # -- child -------------------------------------------------------------
    def normalise(self, raw, retrieval):
        header = {"schema_version": INPUT_SCHEMA, "request": self.request,
                  "request_digest": self.request_digest, "retrieval": retrieval, "clean_room": CLEAN_ROOM}
        pin = os.environ.get("MOSTLYRIGHT_CRAWLER_CHILD")
        # NAIVE: a pin used as given (relative, missing, not executable); the node file without
        # -I -S, so PYTHON* variables and the user site reach the child.
        program = [pin] if pin else [sys.executable, os.path.abspath(__file__)]
        try:
            # NAIVE: no sandbox (no seccomp, no no_new_privs, RLIMIT_CORE kept), the whole
            # environment inherited, no session of its own, no parent-death signal; stdin
            # built whole in memory; stdout and stderr buffered without a bound; the
            # timeout not capped by the upload window.
            proc = subprocess.run(program + ["--input-fd", "0", "--result-fd", "1"],
                                  input=dumps(header).encode("utf-8") + b"\n" + raw,
                                  capture_output=True, env=os.environ, timeout=timeout("CHILD", 1800))
        except subprocess.TimeoutExpired:
            raise JobError("CRAWLER_JOB_FAILED")  # NAIVE: as upstream, not CRAWLER_CHILD_TIMEOUT
        except OSError:
            raise JobError("CRAWLER_EXECUTABLE_UNAVAILABLE")
        if proc.returncode != 0:
            try:
                # NAIVE: whatever code the child names is trusted, whatever else it wrote.
                code = json.loads(proc.stderr.strip())["code"]
            except Exception:
                code = "CRAWLER_CHILD_FAILED"
            raise JobError(code)
        # NAIVE: stderr ignored when the child exits 0.
        try:
            result = json.loads(proc.stdout)
            # NAIVE: two fields checked; the rest of the child's account is believed.
            ok = (result["request_digest"] == self.request_digest
                  and result["acquisition_receipt"]["raw_content_sha256"] == retrieval["raw_content_sha256"])
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            raise JobError("CRAWLER_CHILD_INVALID")
        # NAIVE: re-serialised: the uploaded bytes are ours, not the child's.
        return dumps(result).encode("utf-8")

    # -- upload ------------------------------------------------------------
    def put(self, body):
        global current_url
        # NAIVE: no window check before presenting the URL.
        current_url = self.capability["upload_url"]
        split = urllib.parse.urlsplit(current_url)
        origin = urllib.parse.urlsplit(self.storage)
        conn = http.client.HTTPSConnection(origin.hostname, origin.port or 443, timeout=self.upload_timeout,
                                           context=ssl.create_default_context())
        try:
            # NAIVE: request() adds Accept-Encoding: identity; headers sent as the capability lists them.
            headers = dict((h["name"], h["value"]) for h in self.capability["required_headers"])
            conn.request("PUT", split.path + "?" + split.query, body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()  # NAIVE: no bound on the answer
        finally:
            conn.close()
        if not 200 <= resp.status < 300:  # NAIVE: any 2xx counts as stored
            raise JobError("CRAWLER_UPLOAD_FAILED")

    # -- the run -----------------------------------------------------------
    def run(self):
        # NAIVE: only "set and non-empty"; the pattern is never checked.
        if not os.environ.get("MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET"):
            raise JobError("CRAWLER_RESULTS_BUCKET_REQUIRED")
        # NAIVE: no prctl(PR_SET_DUMPABLE, 0) before the first secret.
        try:
            uuid.UUID(self.session_id)  # NAIVE: braces, urn:, upper case all accepted
        except ValueError:
            raise JobError("CRAWLER_JOB_ARGUMENT_INVALID")
        self.storage = os.environ.get("STORAGE_EMULATOR_HOST", "https://storage.googleapis.com")
        policy = json.loads(os.environ["MOSTLYRIGHT_CRAWLER_EGRESS_POLICY"])  # NAIVE: not validated
        self.upload_timeout = timeout("UPLOAD", 600)
        request, capability = self.bootstrap()
        self.request, self.request_digest = request, digest(request)
        self.check_capability(capability)
        self.capability = capability  # from here on, failures go in a bundle
        raw, retrieval = self.fetch(policy)
        body = self.normalise(raw, retrieval)
        self.put(body)

    def report(self, code):
        status = "failed"
        if self.capability is not None:
            bundle = {"schema_version": FAILURE_SCHEMA, "request_digest": self.request_digest,
                      "source_id": self.request["source_id"], "adapter_id": self.request["adapter_id"],
                      "adapter_version": self.request["adapter_version"], "failure_code": code}
            try:
                # NAIVE: after a refused result PUT too, on the same single-use capability (D12).
                self.put(dumps(bundle).encode("utf-8"))
                status = "reported"
            except Exception:
                pass
        sys.stderr.write(dumps({"code": code, "status": status}) + "\n")


# -- child mode: the normaliser ---------------------------------------------

class NormalisationFailed(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def normalise_rows(data_format, raw, limits):
    try:
        text = raw.decode("utf-8")  # NAIVE: a BOM is kept, as part of the first column's name
    except UnicodeDecodeError:
        raise NormalisationFailed("CRAWLER_SOURCE_ENCODING_UNSUPPORTED")
    try:
        if data_format == "csv":
            # NAIVE: blank lines skipped instead of refused.
            records = [record for record in csv.reader(io.StringIO(text, newline="")) if record]
            columns, rows = records[0], records[1:]
        else:
            # NAIVE: json.loads (floats, NaN, duplicates); columns in the first object's order.
            objects = [json.loads(line) for line in text.split("\n") if line.strip()]
            columns = list(objects[0])
            rows = [[obj[name] for name in columns] for obj in objects]
    except (csv.Error, ValueError, IndexError, KeyError, TypeError):
        raise NormalisationFailed("CRAWLER_NORMALIZATION_FAILED")
    if len(rows) > limits["max_rows"]:
        raise NormalisationFailed("CRAWLER_LIMIT_EXCEEDED")
    # NAIVE: max_columns and max_normalized_bytes never checked; field counts never compared.
    return columns, rows


def encode_line(values):
    return (json.dumps(values, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def child_main():
    data = sys.stdin.buffer.read()  # NAIVE: the whole input, source included, in memory
    head, _, raw = data.partition(b"\n")
    header = json.loads(head)
    request, retrieval = header["request"], header["retrieval"]
    query = request["query"]
    try:
        columns, rows = normalise_rows(query["data_format"], raw, query["limits"])
    except NormalisationFailed as exc:
        sys.stderr.write(dumps({"code": exc.code, "status": "failed"}) + "\n")
        return 1
    row_lines = b"".join(encode_line(row) for row in rows)
    content = encode_line(columns) + row_lines
    content_sha = hashlib.sha256(content).hexdigest()

    def optional(text):
        return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()

    shared = {"raw_content_sha256": retrieval["raw_content_sha256"], "normalized_content_sha256": content_sha,
              "row_count": len(rows), "row_digest": hashlib.sha256(row_lines).hexdigest(),
              "http_status_code": retrieval["http_status_code"], "etag_digest": optional(retrieval["etag"]),
              "last_modified_digest": optional(retrieval["last_modified"])}
    receipt = dict(shared, **{
        "schema_version": RECEIPT_SCHEMA, "source_id": request["source_id"], "adapter_id": request["adapter_id"],
        "adapter_version": request["adapter_version"], "request_digest": header["request_digest"],
        "source_url": retrieval["source_url"], "final_url": retrieval["final_url"],
        "fetched_media_type": retrieval["media_type"], "normalized_media_type": "application/x-ndjson",
        "normalized_data_format": query["data_format"], "normalized_filename": query["filename"],
        "acquired_at": request["requested_at"], "raw_size_bytes": retrieval["raw_size_bytes"],
        "normalized_size_bytes": len(content), "column_names": columns,
        "parsed_schema_digest": digest({"column_names": columns, "data_format": query["data_format"]}),
        "family_id": None, "family_version": None, "decode_options_digest": None, "decode_flags": [],
        "resource_caps": None, "reader_budgets": None,
        "transport_evidence_digest": retrieval["transport_evidence_digest"],
        "egress_policy_attestation": request["egress_policy_attestation"], "clean_room": header["clean_room"]})
    observation = dict(shared, **{
        "schema_version": OBSERVATION_SCHEMA, "source_id": request["source_id"],
        "request_digest": header["request_digest"], "observed_at": request["requested_at"]})
    result = {"schema_version": RESULT_SCHEMA, "request_digest": header["request_digest"],
              "source_id": request["source_id"], "adapter_id": request["adapter_id"],
              "adapter_version": request["adapter_version"], "acquisition_receipt": receipt,
              "observation": observation, "normalized_content": base64.b64encode(content).decode("ascii"),
              "next_watermark": None}
    sys.stdout.buffer.write(dumps(result).encode("utf-8"))
    return 0


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if "--input-fd" in args:  # child mode
        return child_main()
    # NAIVE: argparse: abbreviations, the option twice (the last wins), unknown tokens echoed.
    parser = argparse.ArgumentParser(description="Run one crawler session (a first version).")
    parser.add_argument("--crawler-session-id", required=True)
    session_id = parser.parse_args(args).crawler_session_id
    # NAIVE: sys.argv[1:] is not scrubbed.
    # NAIVE: no SIGTERM/SIGINT handler: as PID 1 SIGTERM is ignored; SIGINT is a traceback.
    job = Job(session_id)
    try:
        job.run()
        return 0
    except JobError as exc:
        job.report(exc.code)
        # NAIVE: 1 for everything: a stored bundle too (0), never 143.
        return 1
    except Exception as exc:
        # NAIVE: the exception text and the URL in use (the signed upload URL during a PUT)
        # on stderr; no status line, no :fail, no bundle.
        print("crawler job failed: %s: %s" % (current_url, exc), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
