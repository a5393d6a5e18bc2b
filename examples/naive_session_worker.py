#!/usr/bin/env python3
"""A first version of the session worker, written the way most first versions are.

THIS FILE IS THE COUNTER-EXAMPLE. Do not copy it; copy nodes/session_worker.py.

It follows the upstream program (one process, a claim loop, `subprocess.run` for the probe)
and speaks the wire format right enough that a small healthy Job-mode session succeeds: token,
exchange, lease, `attempt:start`, events, heartbeats, claims, acquisition, download, probe,
report, and on a closed session the last event, the summary, exit 0. No Service mode. Judge it:

    python3 -m conformance session examples/naive_session_worker.py

What it gets wrong, each marked `# NAIVE:` where it happens:

 1. The capability reaches the probe: kept in os.environ for the helpers, it is inherited by
    the probe child, which parses content nobody vouches for (SESSION-SECRET-2, -ISOLATION-5).
 2. Blocking reads with no deadline: http.client's per-socket timeout, and every answer read
    whole with resp.read() (SESSION-DISPATCH-4, -CALLBACK-5, -6, -ACQUIRE-7).
 3. No signal handler: as PID 1 SIGTERM is ignored, SIGINT is a traceback (SESSION-STOP-*).
 4. The heartbeat is sent from the claim loop: quiet while a probe runs or the loop sleeps; a
    transport error on a beat ends the session (SESSION-HEARTBEAT-*).
 5. argparse: any order, `--flag=value`, abbreviations, a repeated flag, tokens echoed;
    uuid.UUID() takes any spelling; no Service mode (SESSION-ARGV-*, -SERVICE-*).
 6. Configuration read where it is used, with float(); the origin never read, so the identity
    token goes where argv says (SESSION-CONFIG-*, -DISPATCH-1).
 7. One process: no monitor, setsid, non-dumpable, subreaper or scratch directory; secrets are
    str, never wiped (SESSION-ISOLATION-1 to -4, -9, -SECRET-4, -5).
 8. json.loads for everything; the lease read with [] and .get(): no key set, types, grammar or
    30-minute cap; allowed paths ignored; an empty source_ids allows all (SESSION-LEASE-*, D3).
 9. The deadline: the wall clock, once per claim; attempt_finished sent after it (SESSION-DEADLINE-*).
10. Claims: the poll number advances on every claim; a lost fence is retried; one fixed delay,
    no doubling, jitter or Retry-After (SESSION-CLAIM-1, -6, -7, -BACKOFF-*).
11. Probes: requests not held to the vocabulary; acquisition and descriptor never compared; no
    reopening, no retried read; the bundle never validated (SESSION-PROBE-*, -ACQUIRE-*).
12. The probe child: no -I -S, no sandbox (its policy's digest claimed all the same), no
    session, no parent-death signal; its code trusted, its result unchecked (SESSION-ISOLATION-*).
13. Reports not retried (SESSION-REPORT-4); a refusal's body goes to stderr (SESSION-SECRET-3).
14. Events: no cap of 256; any source_id is narrated (SESSION-PROGRESS-1, -6).
15. Exit 1 for a failed session state and a consumed dispatch; a class name as the failure code
    (SESSION-CLAIM-4, -DISPATCH-6, -EXIT-3, -4).
16. The prober (example work): float() typing, booleans as integers, no previews, caps or result
    ceiling, a sum over nothing is 0 (SESSION-WORK-*).
"""

import argparse
import base64
import datetime
import hashlib
import http.client
import json
import math
import operator
import os
import ssl
import subprocess
import sys
import time
import urllib.parse
import uuid

SCHEMA_VERSION = "3.0.0"
IDENTITY_PATH = "/computeMetadata/v1/instance/service-accounts/default/identity"
ATTEMPT = "/internal/v3/producer/attempts/{attempt_id}"
PATHS = {"start": ATTEMPT + ":start", "heartbeat": ATTEMPT + ":heartbeat", "append": ATTEMPT + "/events:append",
         "claim": ATTEMPT + "/probes:claim", "report": ATTEMPT + "/probes/{probe_id}:result", "acquire": ATTEMPT
         + "/session-acquisitions", "read": ATTEMPT + "/session-acquisitions/{crawler_session_id}"}
EXPECTED = {"acquire": 201}
HTTP_TIMEOUT_S = 10  # NAIVE: a per-socket-operation timeout, not a deadline for the whole exchange
MAX_CLAIM_FAILURES = 10
PROBE_KINDS = ("source_inspect", "sample_rows", "profile_columns", "evaluate_expression")
EVENT_TYPES = {"attempt_started": "attempt_started", "source_probe_started": "source_probe_started",
               "source_probe_settled": "source_probe_completed", "attempt_finished": "attempt_finished"}
REFUSED = ("PROBE_SOURCE_CHANNEL_UNAVAILABLE", "PROBE_SOURCE_OUT_OF_SCOPE", "PROBE_SOURCE_MISMATCH",
           "PROBE_REQUEST_INVALID", "PROBE_COLUMN_UNKNOWN", "PROBE_AGGREGATE_NOT_NUMERIC",
           "RESEARCH_SOURCE_FORBIDDEN", "RESEARCH_SOURCE_UNACQUIRABLE", "PROBE_SOURCE_TOO_LARGE")
COMPARE = dict((name, getattr(operator, name)) for name in ("eq", "ne", "lt", "le", "gt", "ge"))
TYPE_NAMES = {bool: "boolean", int: "integer", float: "number", str: "string"}
POLICY = {"schema_version": "session-probe-sandbox.v1", "network": "denied", "process_creation": "denied",
          "no_new_privs": True, "address_space_bytes": 536870912, "core_bytes": 0, "open_files": 16}
ATTESTATION = "MOSTLYRIGHT_EXTERNAL_NETWORK_POLICY_ATTESTATION"
TIMED_OUT = ("SANDBOX_TIMEOUT", "PROBE_SOURCE_ACQUISITION_TIMEOUT")


class SessionFailed(Exception):
    def __init__(self, code, retry_after=0, status=None):
        super().__init__(code)
        self.code, self.retry_after, self.status = code, retry_after, status


class ProbeFailed(SessionFailed):
    """A probe's failure: reported, and the session goes on."""


def dumps(value):
    # NAIVE: allow_nan left on: a NaN cell goes out as `NaN`, which is not JSON.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def digest(value):
    return hashlib.sha256(dumps(value)).hexdigest()


def log(text):
    sys.stderr.write(text.replace("\n", " ") + "\n")


def setting(name, default):
    return float(os.environ.get(name) or default)  # NAIVE: read where used; "nan", "inf", "1e3"; no range


def fetch(method, url, headers=(), body=None):
    """One request on a fresh connection: (status, Retry-After, body)."""
    parts = urllib.parse.urlsplit(url)
    tls = {"context": ssl.create_default_context()} if parts.scheme == "https" else {}
    conn = (http.client.HTTPSConnection if tls else http.client.HTTPConnection)(
        parts.hostname, parts.port, timeout=HTTP_TIMEOUT_S, **tls)
    try:
        # The contract wants exactly these headers, so no Accept-Encoding.
        conn.putrequest(method, parts.path + ("?" + parts.query if parts.query else ""), skip_accept_encoding=True)
        for name, value in headers:
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        # NAIVE: the whole answer, however long, however slowly it comes: no bound, no deadline.
        return resp.status, resp.getheader("Retry-After"), resp.read()
    finally:
        conn.close()


def refusal_code(status, data):
    try:
        code = json.loads(data).get("code")
    except (ValueError, AttributeError):
        code = None
    # NAIVE: the body is logged, detail and all: whatever the server put there reaches stderr.
    log("refused with %d: %s" % (status, data.decode("utf-8", "replace")[:300]))
    return code if isinstance(code, str) and code else "CONTROL_PLANE_HTTP_%d" % status


def identity_token(audience):
    host = os.environ.get("GCE_METADATA_HOST", "169.254.169.254")
    query = urllib.parse.urlencode({"audience": audience, "format": "full"})
    try:
        status, _, data = fetch("GET", "http://%s%s?%s" % (host, IDENTITY_PATH, query), [("Metadata-Flavor", "Google")])
    except OSError:
        status = None
    if status != 200:
        raise SessionFailed("SESSION_IDENTITY_UNAVAILABLE")
    return data.decode("utf-8").strip()  # NAIVE: a str, never wiped, never checked as a compact JWS


class Worker(object):
    def __init__(self, args):
        self.args, self.lease, self.pending, self.terminal = args, None, [], None
        self.answered = self.failed = self.sequence = self.batch = self.beats = 0

    def exchange(self):
        # NAIVE: URL and audience from argv, never compared with STUDIO_API_ORIGIN: the token goes there.
        token = identity_token(self.args.session_dispatch_audience)
        body = dumps({"dispatch_id": self.args.session_dispatch_id, "schema_version": SCHEMA_VERSION})
        try:
            status, _, data = fetch("POST", self.args.session_dispatch_exchange_url, [
                ("Authorization", "Bearer " + token), ("Content-Type", "application/json"),
                ("Accept", "application/json")], body)
        except OSError:
            raise SessionFailed("SESSION_DISPATCH_EXCHANGE_FAILED")
        if status != 200:
            # NAIVE: a consumed dispatch is a failure like any other (exit 1: the Job retries).
            raise SessionFailed(refusal_code(status, data))
        # NAIVE: json.loads (duplicates, NaN, any depth); no exact key set, no types, no capability
        # grammar; what is not JSON, or a missing key, crashes with an exception's name.
        self.lease = lease = json.loads(data)
        self.base = lease["callback_base_url"].rstrip("/")
        self.binding = {"schema_version": SCHEMA_VERSION, "workspace_id": lease["workspace_id"],
                        "run_id": lease["run_id"], "attempt_id": lease["attempt_id"], "fence": lease["fence"]}
        self.source_ids = lease.get("context", {}).get("source_ids") or []
        # NAIVE: wall clock only; fromisoformat on 3.9 takes 3 or 6 fraction digits and nothing else;
        # an expiry in the past is not looked at, one 10 hours out is not refused.
        self.expires = datetime.datetime.fromisoformat(lease["capability_expires_at"][:-1] + "+00:00").timestamp()
        self.heartbeat_s, self.poll_s = lease["heartbeat_interval_seconds"], lease["claim_poll_interval_seconds"]
        # NAIVE: kept in the environment so every helper can reach it; every child inherits it.
        os.environ["MR_SESSION_CAPABILITY"] = lease["capability"]

    def call(self, verb, body=None, key=None, **ids):
        # NAIVE: allowed_callback_paths is never looked at; no check of the deadline first.
        path = PATHS[verb].format(attempt_id=self.lease["attempt_id"], **ids)
        headers = [("Authorization", "Bearer " + os.environ["MR_SESSION_CAPABILITY"]), ("Accept", "application/json")]
        if key is not None:
            headers.append(("Idempotency-Key", key))
        if body is not None:
            headers.append(("Content-Type", "application/json"))
            body = dumps(body)
        try:
            status, retry_after, data = fetch("GET" if verb == "read" else "POST", self.base + path, headers, body)
        except OSError:
            raise SessionFailed("CONTROL_PLANE_UNREACHABLE")
        if status != EXPECTED.get(verb, 200):
            raise SessionFailed(refusal_code(status, data), retry_after, status)
        return json.loads(data) if data else None  # NAIVE: json.loads, any size, any shape

    def key(self, *parts):
        return ":".join(("session", self.lease["attempt_id"]) + tuple(str(p) for p in parts))

    def event(self, name, facts):
        # NAIVE: no cap: a long session appends its 257th event and more.
        self.sequence += 1
        payload = {"name": EVENT_TYPES[name], "facts": facts}
        payload_digest = digest(payload)
        raw = bytearray(hashlib.sha256(("%s:%d:%s:%s" % (self.lease["attempt_id"], self.sequence, name,
                                                           payload_digest)).encode("utf-8")).digest()[:16])
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        self.pending.append(dict(self.binding, client_event_id=str(uuid.UUID(bytes=bytes(raw))),
                                 event_type=EVENT_TYPES[name], payload_digest=payload_digest, payload=payload))

    def flush(self):
        if not self.pending:
            return
        events, self.pending = self.pending, []
        self.batch += 1
        try:
            # NAIVE: the same 10 s per-socket timeout as any call, in the probe's latency path.
            self.call("append", events, self.key("event-progress", self.batch))
        except SessionFailed as exc:
            log("events dropped: %s" % exc.code)

    def heartbeat(self):
        # NAIVE: called from the claim loop, so nothing beats while a probe is in progress or
        # the loop sleeps; and a transport error here (not a refusal) ends the session.
        if time.monotonic() < self.next_beat:
            return
        self.beats += 1
        try:
            self.call("heartbeat", self.binding, self.key("heartbeat", self.beats))
        except SessionFailed as exc:
            if exc.code == "CONTROL_PLANE_UNREACHABLE":
                raise
            log("heartbeat refused: %s" % exc.code)
        self.next_beat = time.monotonic() + self.heartbeat_s

    def run(self):
        self.exchange()
        self.call("start", self.binding, self.key("start"))
        self.event("attempt_started", {"role": "session", "stage_total": 0})
        self.flush()
        self.next_beat = time.monotonic() + self.heartbeat_s
        try:
            return self.claim_loop()
        finally:
            # NAIVE: sent whatever ended the session, the capability's expiry included.
            self.event("attempt_finished", {"outcome": self.terminal or "stopped"})
            self.flush()

    def claim_loop(self):
        body = dict(self.binding, session_id=self.lease["session_id"])
        poll = failures = 0
        while True:
            if time.time() >= self.expires:  # NAIVE: the wall clock, and only here
                self.terminal = "capability_expired"
                return self.terminal
            self.heartbeat()
            poll += 1  # NAIVE: advances whether or not the claim was answered
            try:
                answer = self.call("claim", body, self.key("claim", poll))
                state, claimed = answer.get("session_state"), answer.get("claimed")
            except (SessionFailed, ValueError, AttributeError) as exc:
                # NAIVE: ATTEMPT_FENCE_STALE and friends are retried like any failure, and every
                # retry waits the same interval: no doubling, no jitter, Retry-After ignored.
                failures += 1
                if failures >= MAX_CLAIM_FAILURES:
                    raise SessionFailed(getattr(exc, "code", "CONTROL_PLANE_RESPONSE_INVALID"))
                time.sleep(self.poll_s)
                continue
            failures = 0
            if answer.get("claim_poll_interval_seconds"):
                # NAIVE: float(): "abc" crashes the session, a negative value crashes time.sleep().
                self.poll_s = float(answer["claim_poll_interval_seconds"])
            if state in ("closed", "failed"):
                self.terminal = state
                return state
            if claimed:
                self.handle(answer["probe"])  # NAIVE: probe and probe_id never checked
                continue
            time.sleep(self.poll_s)  # NAIVE: not ended by a stop, not capped by the deadline

    def handle(self, probe):
        probe_id, kind = probe["probe_id"], probe.get("probe_kind")
        request = probe.get("request") or {}
        source_id, ordinal = request.get("source_id"), probe.get("ordinal") or 1
        facts = {"source_id": source_id, "probe_kind": kind, "ordinal": ordinal}
        narrated = bool(source_id) and kind in PROBE_KINDS  # NAIVE: any non-empty source_id, any ordinal
        if narrated:
            self.event("source_probe_started", facts)
            self.flush()
        result, code, retry_after = None, None, 0
        try:
            # NAIVE: the kind and source_id only: keys, ranges and the expression are not checked.
            if kind not in PROBE_KINDS or not source_id:
                raise ProbeFailed("PROBE_REQUEST_INVALID")
            if self.source_ids and source_id not in self.source_ids:  # NAIVE: an empty list allows all
                raise ProbeFailed("PROBE_SOURCE_OUT_OF_SCOPE")
            content, data_format = self.acquire(source_id)
            result = self.answer(kind, request, source_id, content, data_format)
        except ProbeFailed as exc:
            code, retry_after = exc.code, exc.retry_after
        except SessionFailed as exc:
            code = exc.code
        except Exception:
            code = "PROBE_FAILED"
        report = dict(self.binding, session_id=self.lease["session_id"], probe_id=probe_id, outcome="failed")
        report.update({"outcome": "succeeded", "result": result} if result is not None else {"failure_code": code})
        try:
            self.call("report", report, self.key("result", probe_id), probe_id=probe_id)
        except SessionFailed as exc:
            # NAIVE: no retry: a 503 or a lost answer ends the session.
            if exc.code != "RESEARCH_PROBE_ALREADY_SETTLED":
                raise
        if result is not None:
            self.answered += 1
            facts.update(outcome="succeeded", code="OK", display_code="OK", retry_after_seconds=0,
                         bytes=len(dumps(result)))
        else:
            self.failed += 1
            display = "SESSION_ACQUISITION_THROTTLED" if code == "AGENT_BUDGET_EXCEEDED" else code
            outcome = ("refused" if display in REFUSED else "timed_out" if display in TIMED_OUT
                       else "throttled" if display != code else "failed")
            facts.update(outcome=outcome, code=code, display_code=display, retry_after_seconds=retry_after, bytes=0)
        if narrated:
            self.event("source_probe_settled", facts)
        self.flush()

    def acquire(self, source_id):
        body = dict(self.binding, session_id=self.lease["session_id"], source_id=source_id)
        try:
            # NAIVE: epoch 0 for ever: an expired acquisition is never reopened under a new key.
            doc = self.call("acquire", body, self.key("acquire", source_id, 0))
        except SessionFailed as exc:
            # NAIVE: int(): "abc" or an HTTP date raises, 99999 is kept.
            raise ProbeFailed(exc.code, int(exc.retry_after) if exc.status == 429 and exc.retry_after else 0)
        started = time.monotonic()
        ceiling = setting("MR_SESSION_WORKER_ACQUISITION_TIMEOUT_SECONDS", 90)
        # NAIVE: the document's bindings (fence, attempt, session, source, adapter) never compared.
        while doc.get("status") != "result_ready":
            if doc.get("status") == "failed":
                # NAIVE: the server's failure_code reported as given, prose included.
                raise ProbeFailed(doc.get("failure_code") or "PROBE_SOURCE_ACQUISITION_FAILED")
            if time.monotonic() - started > ceiling:  # NAIVE: not capped by the capability's expiry
                raise ProbeFailed("PROBE_SOURCE_ACQUISITION_TIMEOUT")
            time.sleep(1.0)
            # NAIVE: a read that fails, transient or not, fails the probe.
            doc = self.call("read", crawler_session_id=doc["crawler_session_id"])
        download = doc["result_download"]
        # NAIVE: the descriptor is trusted: its URL goes anywhere, its size and expiry are not checked.
        try:
            status, _, bundle = fetch("GET", download["url"])  # read whole, however large
        except OSError:
            raise ProbeFailed("PROBE_SOURCE_DOWNLOAD_FAILED")
        if status != 200 or hashlib.sha256(bundle).hexdigest() != download["bundle_sha256"]:
            raise ProbeFailed("PROBE_SOURCE_DOWNLOAD_FAILED")
        # NAIVE: not held to the crawler result's schema, its digests or this acquisition's bindings.
        result = json.loads(bundle)
        content = base64.b64decode(result["normalized_content"])
        return content, result["acquisition_receipt"]["normalized_data_format"]

    def answer(self, kind, request, source_id, content, data_format):
        timeout = setting("MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS", 45)
        # NAIVE: claimed in every result, applied nowhere.
        policy = dict(POLICY, cpu_seconds=math.ceil(timeout) + 1, timeout_ms=math.ceil(timeout * 1000),
                      external_network_policy_attestation=os.environ.get(ATTESTATION))
        header = {"schema_version": "session-probe-input.v1", "probe_kind": kind, "request": request,
                  "source_id": source_id, "data_format": data_format, "content_bytes": len(content),
                  "content_sha256": hashlib.sha256(content).hexdigest(), "sandbox_policy_digest": digest(policy),
                  "result_max_bytes": 65536}
        try:
            # NAIVE: the node file without -I -S, the whole environment (the capability with it), no
            # sandbox, no session of its own, no parent-death signal; stdin, stdout and stderr held
            # whole; the timeout kills the direct child only, and nothing beats meanwhile.
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--probe-child"],
                                  input=dumps(header) + b"\n" + content, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ProbeFailed("SANDBOX_TIMEOUT")
        if proc.returncode != 0:
            try:
                raise ProbeFailed(json.loads(proc.stderr)["code"])  # NAIVE: whatever code it names
            except (ValueError, KeyError, TypeError):
                raise ProbeFailed("PROBE_FAILED")
        return json.loads(proc.stdout)  # NAIVE: shape, bindings, size and relations never checked


# -- the probe child: the prober ----------------------------------------------------------

def typed(value, data_format):
    if data_format != "csv" or not isinstance(value, str):
        return value
    if value in ("", "true", "false"):
        return {"": None, "true": True, "false": False}[value]
    for kind in (int, float):  # NAIVE: float() takes "nan", "inf", "1e5", " 3 "
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def type_of(cells):
    names = set(TYPE_NAMES[type(cell)] for cell in cells if cell is not None)
    if names == {"integer", "number"}:
        return "number"
    return "null" if not names else names.pop() if len(names) == 1 else "mixed"


def matches(predicate, row):
    op = predicate["op"]
    # NAIVE: recursion with no depth or size limit; an unknown op is a KeyError.
    if op == "and":
        return all(matches(p, row) for p in predicate["args"])
    if op == "or":
        return any(matches(p, row) for p in predicate["args"])
    if op == "not":
        return not matches(predicate["arg"], row)
    cell = row[predicate["column"]]
    if op in ("is_null", "not_null"):
        return (cell is None) == (op == "is_null")
    if cell is None:
        return False
    try:
        return COMPARE[op](cell, predicate["value"])  # NAIVE: Python's own: True == 1, "10" < "9"
    except TypeError:
        return False


def prober(kind, request, columns, rows):
    """The kind's keys of the result. NAIVE: no 64-column cap, no preview, no byte ceiling."""
    scanned = rows[:request.get("scan_rows", 10000)]
    wanted = request.get("columns") or columns
    if any(name not in columns for name in wanted):
        raise ProbeFailed("PROBE_COLUMN_UNKNOWN")
    index = dict((name, columns.index(name)) for name in columns)
    if kind == "source_inspect":
        pairs = [[name, type_of(row[index[name]] for row in scanned)] for name in columns]
        return {"rows_scanned": len(scanned), "schema_digest": digest(pairs),
                "columns": [{"name": name, "inferred_type": kind_} for name, kind_ in pairs]}
    if kind == "sample_rows":
        offset, limit = request.get("offset", 0), request.get("limit", 20)
        window = rows[offset:offset + limit]
        return {"columns": wanted, "rows": [[row[index[name]] for name in wanted] for row in window],
                "rows_scanned": offset + len(window)}
    if kind == "profile_columns":
        profiles = []
        for name in wanted:
            cells = [row[index[name]] for row in scanned if row[index[name]] is not None]
            entry = {"name": name, "inferred_type": type_of(cells), "non_null": len(cells),
                     "nulls": len(scanned) - len(cells), "distinct": len(set(dumps(c) for c in cells))}
            try:
                if cells:
                    entry.update(minimum=min(cells), maximum=max(cells))  # NAIVE: False < 1 < 2.5
            except TypeError:
                pass
            profiles.append(entry)
        return {"rows_scanned": len(scanned), "columns": profiles}
    expression = request["expression"]
    named = [dict(zip(columns, row)) for row in scanned]
    matched = [row for row in named if "where" not in expression or matches(expression["where"], row)]
    aggregate, column = expression["aggregate"], expression.get("column")
    out = {"aggregate": aggregate, "rows_matched": len(matched), "rows_scanned": len(scanned)}
    if column is not None:
        out["column"] = column
    if aggregate == "count":
        out["value"] = len(matched)
        return out
    cells = [row[column] for row in matched if row.get(column) is not None]
    try:
        if aggregate == "sum":
            out["value"] = sum(cells)  # NAIVE: 0 over no cell, not null; True counts as 1
        elif aggregate == "avg":
            out["value"] = sum(cells) / len(cells) if cells else None
        else:
            out["value"] = (min if aggregate == "min" else max)(cells) if cells else None
    except TypeError:
        raise ProbeFailed("PROBE_AGGREGATE_NOT_NUMERIC")
    return out


def child_main():
    data = sys.stdin.buffer.read()  # NAIVE: the whole input in memory
    head, _, content = data.partition(b"\n")
    header = json.loads(head)  # NAIVE: outside the try: input that is not JSON is a traceback
    try:
        lines = content.decode("utf-8").splitlines()
        columns = json.loads(lines[0])
        rows = [[typed(v, header["data_format"]) for v in json.loads(line)] for line in lines[1:]]
        result = prober(header["probe_kind"], header["request"], columns, rows)
    except Exception as exc:  # NAIVE: a RecursionError or a MemoryError is just PROBE_FAILED
        sys.stderr.write(dumps({"code": getattr(exc, "code", "PROBE_FAILED"), "status": "failed"}).decode() + "\n")
        return 1
    result.update((key, header[key]) for key in ("probe_kind", "source_id", "content_sha256", "content_bytes",
                                                 "data_format", "sandbox_policy_digest"))
    result.update(schema_version="1.0.0", truncated=False)
    sys.stdout.buffer.write(dumps(result))
    return 0


# -- main --------------------------------------------------------------------------------

def summary(worker, terminal=None, failure=None):
    lease = worker.lease if isinstance(worker.lease, dict) else {}
    doc = {"status": "failed" if failure else "stopped", "role": "session", "session_id": lease.get("session_id"),
           "attempt_id": lease.get("attempt_id"), "probes_answered": worker.answered,
           "probes_failed": worker.failed, "terminal_state": terminal, "failure_code": failure, "warm_pool_ready": 0}
    sys.stdout.write(dumps(doc).decode("utf-8") + "\n")


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if args == ["--probe-child"]:
        return child_main()
    # NAIVE: argparse: any order, --flag=value, abbreviations, the last of a repeated flag; its
    # usage and the unknown tokens echoed on stderr. No Service mode: no argument is an error.
    parser = argparse.ArgumentParser(description="Serve one research session (a first version).")
    for flag in ("--session-dispatch-id", "--session-dispatch-exchange-url", "--session-dispatch-audience"):
        parser.add_argument(flag, required=True)
    parsed = parser.parse_args(args)
    try:
        uuid.UUID(parsed.session_dispatch_id)  # NAIVE: braces, urn:uuid:, upper case, any version
    except ValueError:
        log("SESSION_DISPATCH_INVALID: the dispatch id is not a UUID")
        return 2
    # NAIVE: no SIGTERM or SIGINT handler, no fork, no setsid, no prctl: as PID 1 a SIGTERM is
    # ignored and the session runs to its end; a SIGINT is a KeyboardInterrupt traceback.
    worker = Worker(parsed)
    try:
        state = worker.run()
    except SessionFailed as exc:
        failure = exc.code
    except Exception as exc:
        log("session worker crashed: %r" % exc)
        failure = type(exc).__name__  # NAIVE: the class name ("KeyError") as the failure code
    else:
        summary(worker, terminal=state)
        return 0 if state != "failed" else 1  # NAIVE: a failed session state exits 1: the Job retries
    summary(worker, failure=failure)
    log("%s: session job did not reach a terminal session state" % failure)
    return 1


if __name__ == "__main__":
    sys.exit(main())
