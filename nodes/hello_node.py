#!/usr/bin/env python3
"""hello_node.py: the reference LSPO external step ("hello-node").

Copies every pinned input, verified against its sha256 (and size) pin while it
streams, to outputs/ in the job's staging area; writes result.json; and writes
the completion marker __lspo_complete.json last, on success, failure and stop.

Run it:
    python3 nodes/hello_node.py --help
    LSPO_CREDENTIALS_FILE=/path/to/creds.json python3 nodes/hello_node.py
Judge it against its contract:
    python3 -m conformance step nodes/hello_node.py

Contract: contract/step.md, version 4.  A line that exists for a clause carries
its ID and what breaks without it (grep -n STEP-STOP-2: clause, code, checks):
    CREDS     the envelope: where, what it holds, re-reads, the marker's fallback
    MANIFEST  bounded read; identity from the manifest, else the environment
    INPUT     pins required and checked while streaming, one input at a time
    OUTPUT    canonical relpaths, POST or local staging, 1 GiB, no redirect, no re-send
    RESULT    result.json: shape, facts, 1 MiB ceiling, the failure-path report
    MARKER    the one receipt: shape, inventory, identity, always the last write
    PROGRESS  `@lspo:progress {...}` lines on stdout, at most 201 of them
    EXIT      0 succeeded, 1 transient, 10 permanent, 20 cancelled
    STOP      SIGTERM/SIGINT end in-flight I/O at once; the receipt's own 20 s
    STREAM    memory flat in object size, page cache released, scratch in TMPDIR
    HTTP      refusal classification, User-Agent, bounded error bodies
    PROXY     HTTPS_PROXY / HTTP_PROXY / NO_PROXY: CONNECT tunnel, forwarding
    PEER      every document and variable read as the upstream read it (6.0 is 6)
    REDACT    no credential in any output, never a traceback
    WORK      the example work (section 3): copies, judged with --reference

Layout (`grep -n '^# [0-9]' nodes/hello_node.py` prints it):
    1 Imports               standard library only
    2 Configuration [EDIT]  program name, User-Agent
    3 Your work [EDIT]      the frame; port, phase, metrics; scan_chunk, do_work, finish_work
    ---- Below this line: contract machinery [KEEP] ----
    4 Limits, 5 Errors      every number with its unit and reason; StepFailure, its outcomes
    6 Protocol              6.1-6.8 as in every node; 6.9 envelope, 6.10 inputs, 6.11 uploads
    7 Lifecycle             one Run: inputs, result.json, failure path, the receipt
    8 main()                configuration, handlers, the lifecycle, the exit code
    9 Shared blocks         verbatim copies of nodes/blocks/*.py: edit those instead

Edit sections 2 and 3, keep the rest.  Section 9 is rewritten from
nodes/blocks/ by `python3 -m conformance.sync`, and `--check` reports drift.
"""

# 1 Imports ====================================================================

import base64
import collections
import contextlib
import datetime
import errno
import hashlib
import http.client
import json
import os
import re
import secrets
import select
import shutil
import signal
import socket
import ssl
import sys
import tempfile
import threading
import time
import urllib.parse

# 2 Configuration [EDIT] =======================================================

PROGRAM = "hello-node"  # your step's name: the prefix of every stderr line and of its scratch directory
USER_AGENT = "lspo-hello-node/2 (conformance reference)"  # STEP-HTTP-4: names the caller to the store (D14)

# 3 Your work [EDIT] ===========================================================
# +- The frame -----------------------------------------------------------------
# | Called, in order: scan_chunk(tally, data, count) on each chunk of an input
# |     as it streams in; do_work(run, item) on each verified input, in list
# |     order; finish_work(run) once, after the last.  Then the machinery
# |     writes result.json (run.metrics, the facts claimed) and the marker.
# | Your code may use: `run` (a Run, section 7): run.scratch (private,
# |     removed at the end), run.state (a dict across inputs), run.metrics,
# |     run.output_relpath(port, name), run.publish_file(relpath, path, port,
# |     sha256=None, size=None), run.publish_bytes(relpath, data, port),
# |     run.claim(key, value) and run.check_stop(what); below KEEP, listed in
# |     the next field once used: say(message), release_page_cache(fd, dirty)
# |     (every CACHE_DROP_BYTES written: page cache counts against the
# |     container's memory), remove_file(path), CHUNK_BYTES, MAX_NAME_CHARS.
# | Uses from below KEEP: WorkRefused
# | To refuse work: raise WorkRefused(code, message), code "permanent" (exit
# |     10, retrying cannot help) or "transient" (exit 1): the run ends failed,
# |     its marker written.  A StepFailure from a run.* call: let it propagate.
# +-----------------------------------------------------------------------------
# This step copies each input (the upstream hello-node; contract/step.md, "Example work").

OUTPUT_PORT = "output"  # STEP-OUTPUT-8: your objects' port; "report" is result.json's alone
WORK_PHASE = "copying inputs"  # STEP-PROGRESS-2: the progress phase while inputs are processed
METRICS = ("files", "total_bytes", "lines")  # STEP-RESULT-1: result.json's metrics, each starting at 0


def scan_chunk(tally, data, count):
    """Look at one chunk of an input while it streams in.  [EDIT]

    data[:count] is the chunk, in the one reused buffer: read it, never keep it.  The
    same pass hashes the input, so a count here costs no second read (STEP-STREAM-1).
    `tally` is this input's dict: do_work gets it as item.tally, unless the pins fail.
    """
    tally["lines"] = tally.get("lines", 0) + data.count(b"\n", 0, count)  # STEP-WORK-4: every \n byte


def do_work(run, item):
    """Turn one verified input into this step's outputs.  [EDIT]

    `item`: item.name, item.port (where it came from), item.size, item.sha256, item.tally
    (scan_chunk's), and item.path, a scratch file checked against its pins, deleted after
    this returns.  A transforming step publishes a new file written under run.scratch.
    """
    relpath = run.output_relpath(item.port, item.name)  # STEP-WORK-2: outputs/<name>, unique in the run
    # STEP-WORK-1: the copy is the input's verified bytes
    run.publish_file(relpath, item.path, OUTPUT_PORT, sha256=item.sha256, size=item.size)
    run.claim("input", item.name)  # STEP-WORK-5: only now, so the fact states what really happened
    run.metrics["files"] += 1  # STEP-WORK-4: copies accepted, their bytes and their lines
    run.metrics["total_bytes"] += item.size
    run.metrics["lines"] += item.tally.get("lines", 0)


def finish_work(run):
    """Publish what was built from all the inputs; not called after a failure or a stop.  [EDIT]
    A copy step has nothing left to do here."""


# ---- Below this line: contract machinery [KEEP] ----

# 4 Limits =====================================================================
# Every number the contract fixes, with its unit and its reason.  A line
# `# CONTRACT:` under one says which clause breaks when it is changed.

MiB = 1024 * 1024
GiB = 1024 * MiB

MARKER_FILENAME = "__lspo_complete.json"  # the completion receipt
RESULT_FILENAME = "result.json"  # the report document
OUTPUT_DIR = "outputs"  # where run.output_relpath puts objects
REPORT_PORT = "report"  # port of result.json: a port's objects go to every step downstream of it
DEFAULT_INPUT_PORT = "input"  # an input without a port, for naming on a clash

CREDENTIALS_ENV = "LSPO_CREDENTIALS_FILE"  # set by the agent on every job
LEGACY_CREDENTIALS_ENV = "LSPO_CREDENTIALS"  # baked into older images; kept working (D14)
DEFAULT_CREDENTIALS_FILE = "/lspo/creds/creds.json"  # the contract's default mount
IDENTITY_ENV = (  # fallbacks for a marker whose manifest could not be read
    ("execution_id", "LSPO_EXECUTION_ID"),
    ("attempt", "LSPO_ATTEMPT"),
    ("generation", "LSPO_GENERATION"),
)
IDEMPOTENCY_ENV = "LSPO_IDEMPOTENCY_KEY"
STAGING_MODES = ("presigned_post", "local_path")

EXIT_OK = 0  # succeeded
EXIT_TRANSIENT = 1  # a later attempt may succeed
EXIT_PERMANENT = 10  # retrying cannot help
EXIT_CANCELLED = 20  # stopped on request
OUTCOME_SUCCEEDED, OUTCOME_TRANSIENT, OUTCOME_PERMANENT, OUTCOME_CANCELLED = (
    "succeeded", "transient", "permanent", "cancelled")  # how a run ended, decided once (STEP-EXIT-2)
# STEP-EXIT-1: the one place an outcome becomes a code: the marker's exit_code and the process's agree
EXIT_STATUS = {OUTCOME_SUCCEEDED: EXIT_OK, OUTCOME_TRANSIENT: EXIT_TRANSIENT,
               OUTCOME_PERMANENT: EXIT_PERMANENT, OUTCOME_CANCELLED: EXIT_CANCELLED}

MAX_CREDENTIALS_BYTES = 64 * MiB  # bounded read of the envelope file
MAX_DOCUMENT_BYTES = 8 * MiB  # the platform's ceiling for the manifest and the marker
# CONTRACT: raised, this breaks STEP-MANIFEST-2 and STEP-MARKER-2.
MAX_RESULT_BYTES = 1 * MiB  # the result reader refuses more; writing more publishes nothing readable
# CONTRACT: raised, this breaks STEP-RESULT-2.
MAX_OBJECT_BYTES = 1 * GiB  # the largest object the upload policy admits

CONNECT_DEADLINE_S = 10.0  # elapsed, over DNS + every address + a proxy's CONNECT + TLS: a stall, not a slow network
# CONTRACT: lowered, a slow but healthy connect kills the job; raised, it breaks STEP-STOP-3.
READ_TIMEOUT_S = 25.0  # silence allowed on a GET before it counts as a dead store (not the stop latency)
UPLOAD_TIMEOUT_S = 10.0  # silence allowed on an upload: once the body is out, waiting buys little
# CONTRACT: both are STEP-STREAM-4's numbers.
RECEIPT_DEADLINE_S = 20.0  # elapsed, over every phase of the marker write, its retry included
# CONTRACT: raised, this breaks STEP-STOP-6; lowered, receipts are given up on slow stores.
CREDS_MARGIN_S = 5.0  # re-read the envelope this long before it expires
# CONTRACT: lowered, this breaks STEP-CREDS-3 (a request could leave with a token about to die).
EARLY_ANSWER_WAIT_S = 2.0  # after a failed send, how long to look for a refusal already sent

CHUNK_BYTES = 1 * MiB  # unit of every streaming read; one reused buffer per run
CACHE_DROP_BYTES = 8 * MiB  # page cache a copy may accumulate before asking the kernel to drop it
ERROR_BODY_BYTES = 4096  # bounded read of an error response body
# CONTRACT: raised, this breaks STEP-HTTP-5.
ERROR_SNIPPET_CHARS = 160  # error body text quoted when there is no <Code>
MAX_ERROR_CHARS = 500  # the marker's error field, after redaction
MAX_NAME_CHARS = 120  # an input name quoted in a diagnostic

PROGRESS_MAX_LINES = 201  # the run log is a 1000-line tail; progress must not fill it
# CONTRACT: raised, this breaks STEP-PROGRESS-3.
PROGRESS_PHASE_CHARS = 64
MAX_FACTS = 10000  # the platform's MAX_RESULT_FACTS
MAX_FACT_VALUE_CHARS = 512  # the platform's column limit
PARAMS_KEYS_SHOWN = 64  # keys listed when the params echo gives way

# 5 Errors =====================================================================
# One root error; each subclass carries its outcome, decided where the failure is
# understood (STEP-EXIT-1).  A stop is the stop block's StopRequested, never a StepFailure.


class StepFailure(Exception):
    """Root of every failure this node reports; `outcome` is what it maps to.  `status`: the store
    answered with it; `maybe_stored`: bytes went out, no answer came back (STEP-OUTPUT-6)."""

    outcome = OUTCOME_TRANSIENT

    def __init__(self, message, status=None, maybe_stored=False):
        super().__init__(message)
        self.message = message
        self.status = status
        self.maybe_stored = maybe_stored

    @property
    def exit_code(self):
        return EXIT_STATUS[self.outcome]


class Permanent(StepFailure):
    """A bad input, document or configuration: no retry can fix it."""

    outcome = OUTCOME_PERMANENT


class Transient(StepFailure):
    """A later attempt may succeed: network trouble, 5xx, throttling."""


class Expired(Transient):
    """A refusal that looks like dead credentials: STEP-CREDS-4 allows one retry."""


class WorkRefused(StepFailure):
    """Raised by the [EDIT] work: `code` "permanent" (exit 10) or "transient" (anything else, exit 1)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.outcome = OUTCOME_PERMANENT if code == OUTCOME_PERMANENT else OUTCOME_TRANSIENT


class UsageError(StepFailure):
    """No start: `text` is main()'s one stderr line, naming a variable, never its value (a password)."""

    def __init__(self, message, outcome):
        super().__init__("could not start: " + message)
        self.outcome = outcome
        self.text = "%s: %s\n" % (PROGRAM, redact(self.message, SECRETS))


# 6 Protocol ===================================================================

# 6.1 Process and output =======================================================
# One line per message, redacted, written whole: the log is public (STEP-REDACT-*).

SECRETS = set()  # credential values seen in any envelope, removed from every printed line
# STOP and PROCESS are made at the end of the file: their classes come from section 9.


def say(message):
    """One diagnostic line on stderr, prefixed (STEP-REDACT-1/-2: redacted, one line)."""
    write_all(2, ("%s: %s\n" % (PROGRAM, redact(message, SECRETS))).encode("utf-8", "backslashreplace"))


def describe(exc):
    """A printable account of an exception, never with a URL (http.client quotes request targets)."""
    if isinstance(exc, (StepFailure, StopRequested)):
        return str(exc)  # written by this node, never with a URL in it
    if isinstance(exc, OSError):
        text = exc.strerror or (str(exc.args[0]) if exc.args else "")
        return "%s: %s" % (type(exc).__name__, redact(text, SECRETS))
    return type(exc).__name__


def start_process():
    """STEP-STOP-1: the handlers before the envelope is read (unhandled, SIGINT is a traceback)."""
    STOP.open()
    install_handlers(STOP.handle)


# 6.2 Documents and forms ======================================================
# The documents, composed exactly: the collector refuses a wrong shape (STEP-RESULT-*, STEP-MARKER-2).

_FACT_KEY_RE = re.compile(r"[a-z][a-z0-9_]{0,63}\Z")
_FACT_FORBIDDEN_RE = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")
UNCLAIMED_ORDER = ("unusable", "bad_key", "over_cap")  # STEP-RESULT-3: one fixed order, so every summary reads alike


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def dump_document(document):
    return json.dumps(document, sort_keys=True, indent=2).encode("utf-8")


def compose_result(metrics, attempt, params, facts, not_claimed):
    """result.json as bytes, never over MAX_RESULT_BYTES (STEP-RESULT-1, STEP-RESULT-2)."""
    summary = {"attempt": attempt, "params": params}
    if not_claimed:
        summary["facts_not_claimed"] = not_claimed
    document = {"schema_version": 1, "metrics": dict(metrics), "summary": summary, "facts": list(facts)}
    data = dump_document(document)
    if len(data) <= MAX_RESULT_BYTES:
        return data
    shape = isinstance(params, dict)
    summary.update({  # STEP-RESULT-2: the params echo gives way first
        "params": None,
        "params_omitted": "params are not echoed: the document would exceed the 1 MiB ceiling",
        "params_keys": sorted(params)[:PARAMS_KEYS_SHOWN] if shape else None,
        "params_count": len(params) if shape else None,
    })
    data = dump_document(document)
    say("result.json: %s" % ("params left out, they would pass the 1 MiB ceiling" if params
                              else "over the 1 MiB ceiling with no params to leave out"))
    kept = document["facts"]
    while len(data) > MAX_RESULT_BYTES and kept:
        kept = kept[:len(kept) // 2]  # STEP-RESULT-2: then facts are halved, keeping the first
        summary["facts_omitted"] = "%d of %d facts dropped to fit the 1 MiB ceiling" % (
            len(facts) - len(kept), len(facts))
        document["facts"] = kept
        data = dump_document(document)
    if len(kept) < len(facts):
        say("result.json: kept %d of %d facts to fit the 1 MiB ceiling" % (len(kept), len(facts)))
    if len(data) > MAX_RESULT_BYTES:  # STEP-RESULT-2: fail rather than publish what no reader may read
        raise Permanent("result.json exceeds 1 MiB even without params and facts")
    return data


def compose_marker(status, exit_code, error, objects, ports, identity):
    """__lspo_complete.json as bytes (STEP-MARKER-2)."""
    document = {
        "schema_version": 1,
        "status": status,
        "exit_code": exit_code,  # STEP-MARKER-3: the code the process returns
        "objects": [{"relpath": r, "sha256": s, "size": n} for r, (s, n) in objects.items()],
        "produced_ports": dict((port, [r for r in relpaths if r in objects])
                               for port, relpaths in ports.items()
                               if any(r in objects for r in relpaths)),  # STEP-MARKER-5: ports within objects
        "error": error,  # STEP-MARKER-7: null only on success
        "execution_id": identity["execution_id"],
        "attempt": identity["attempt"],
        "generation": identity["generation"],
        "idempotency_key": identity["idempotency_key"],
    }
    return dump_document(document)


# 6.3 Configuration ============================================================
# Read once, at start-up: a bad variable fails before any request, named, never its value.

Config = collections.namedtuple(
    "Config", "credentials_path credentials_variable scratch_parent identity idempotency_key")


def env_positive_int(raw):
    text = (raw or "").strip()
    if not (text.isascii() and text.isdigit()):  # STEP-MANIFEST-4 (D12): ASCII digits only, no sign
        return None
    return int(text) or None


def load_config(environ):
    primary = environ.get(CREDENTIALS_ENV, "")
    legacy = environ.get(LEGACY_CREDENTIALS_ENV, "")
    if primary:  # STEP-CREDS-1: the agent's variable wins
        path, variable = primary, "named by " + CREDENTIALS_ENV
    elif legacy:  # STEP-CREDS-1: then the legacy name
        path, variable = legacy, "named by " + LEGACY_CREDENTIALS_ENV
    else:  # STEP-CREDS-1: then the contract's default mount
        path, variable = DEFAULT_CREDENTIALS_FILE, "at the default path " + DEFAULT_CREDENTIALS_FILE
    if primary and legacy and os.path.normpath(primary) != os.path.normpath(legacy):
        say("%s and %s name different files; using %s" % (  # STEP-CREDS-2: variables, never values
            CREDENTIALS_ENV, LEGACY_CREDENTIALS_ENV, CREDENTIALS_ENV))
    identity = dict((key, env_positive_int(environ.get(var))) for key, var in IDENTITY_ENV)
    key = environ.get(IDEMPOTENCY_ENV)
    key = key if isinstance(key, str) and key.strip() else None
    scratch_parent = environ.get("TMPDIR") or None  # STEP-STREAM-3 (D10): scratch honours TMPDIR
    try:  # STEP-PROXY-1: behind an egress proxy, a node that connects directly fails every request
        proxies = Proxies.from_environ(environ)
    except ProxyConfigError as exc:
        raise Permanent(str(exc)) from None  # STEP-PROXY-1: names the variable, never its value (a password)
    SECRETS.update(proxies.secrets())  # STEP-PROXY-5: else a message quoting them would publish them
    PROXIES[:] = [proxies]
    return Config(path, variable, scratch_parent, identity, key)


def configure(tokens, environ):
    """The Config, None for --help, or UsageError; reads no file (STEP-STOP-1: the handlers first)."""
    if tokens in (["-h"], ["--help"]):
        return None
    if tokens:
        # STEP-EXIT-1 (D35): ignored, as the upstream did: refusing them would fail every job of an
        # image that launches its step with arguments.  Counted, never echoed: one may hold a secret.
        say("ignoring %d command-line argument(s): this step takes its job from the environment" % len(tokens))
    try:
        return load_config(environ)
    except Exception as exc:  # STEP-PROXY-1: a bad proxy variable, named; a defect: one line, never a traceback
        failure = exc if isinstance(exc, StepFailure) else Transient("internal error: " + describe(exc))
        raise UsageError(failure.message, failure.outcome) from None


# 6.4 Identity =================================================================
# The identity goes into the marker: taken from the wrong place, it attributes
# the receipt to another attempt (STEP-MANIFEST-4, STEP-MARKER-6).


def parse_manifest(data):
    try:
        manifest = json.loads(data.decode("utf-8"))
    except ValueError:  # STEP-MANIFEST-3: an expired presigned URL answers 200 with an XML page
        raise Transient("the manifest is not UTF-8 JSON") from None
    if not isinstance(manifest, dict):  # STEP-MANIFEST-3: a manifest that is not an object is permanent
        raise Permanent("the manifest is not a JSON object")
    version = manifest.get("schema_version", 1)
    if not is_int(version) or version != 1:  # STEP-MANIFEST-3: True is not 1
        raise Permanent("the manifest's schema_version is not 1")
    return manifest


def identity_number(manifest, config, key):
    """The manifest's `key` when an integer >= 1, else the environment's, else None (STEP-MANIFEST-4)."""
    value = manifest.get(key) if isinstance(manifest, dict) else None
    if is_int(value) and value >= 1:
        return value
    return config.identity[key]  # STEP-MANIFEST-4: the environment's value


def resolve_identity(manifest, config):
    """(identity dict, None) or (None, why) (STEP-MANIFEST-4, STEP-MARKER-6)."""
    manifest = manifest if isinstance(manifest, dict) else {}
    identity = {}
    for key, variable in IDENTITY_ENV:
        value = identity_number(manifest, config, key)
        if value is None:
            return None, "no usable %s in the manifest or in %s" % (key, variable)
        identity[key] = value
    key = manifest.get("idempotency_key")
    if not (isinstance(key, str) and key.strip()):  # STEP-MANIFEST-4 (D2): only a usable key blocks the fallback
        key = config.idempotency_key
    identity["idempotency_key"] = key
    return identity, None


# 6.5 HTTP exchanges ===========================================================
# One transport: one deadline over the connect, and a socket a stop can shut
# down, since a blocked read never looks at a flag (STEP-STOP-2, -3).

_TLS_CONTEXTS = []  # one TLS context per process, made on first use
PROXIES = []  # the environment's proxies (a Proxies), read once by load_config: importing reads nothing
RETRYABLE_CODES = ("slowdown", "requesttimeout", "operationaborted", "requestthrottled",
                   "throttling", "toomanyrequests", "internalerror", "serviceunavailable")
EXPIRED_CODES = ("expired", "accessdenied", "invalidaccesskeyid", "signaturedoesnotmatch",
                 "tokenrefreshrequired", "requesttimetooskewed", "authorization")
_STORE_CODE_RE = re.compile(r"<Code>([^<]{1,64})</Code>")


def tls_context():
    """The process's TLS context (it honours SSL_CERT_FILE, as OpenSSL does)."""
    if not _TLS_CONTEXTS:
        _TLS_CONTEXTS.append(ssl.create_default_context())
    return _TLS_CONTEXTS[0]


def network_failure(what, exc):
    """The StepFailure an exception raised by the network stands for."""
    if isinstance(exc, StepFailure):
        return exc
    if STOP.should_abandon() or isinstance(exc, StopRequested):  # STEP-EXIT-2: a stop explains the error
        return StopRequested("stopped on request during %s" % what)
    return Transient("%s: %s" % (what, describe(exc)))  # STEP-HTTP-3: DNS, connect, reset, timeout


def classify(what, status, reason, body):
    """The failure an HTTP refusal stands for (STEP-HTTP-1, STEP-HTTP-2), its detail redacted."""
    text = body.decode("utf-8", "replace")
    match = _STORE_CODE_RE.search(text)
    extra = match.group(1) if match else redact(text, SECRETS)[:ERROR_SNIPPET_CHARS]  # redacted, then cut
    detail = ("HTTP %d %s" % (status, reason or "")).strip() + (" (%s)" % extra if extra else "")
    detail = redact(detail, SECRETS)  # the code and the reason too
    probe = detail.lower().replace(" ", "")
    message = "%s: %s" % (what, detail)
    # STEP-HTTP-2 (D8): expired-looking: re-read the envelope
    if status == 401 or (status in (400, 403) and any(c in probe for c in EXPIRED_CODES)):
        return Expired(message, status=status)
    if status == 407:  # STEP-PROXY-4 (D41): only a proxy sends it; its settings, not the work, are at fault
        return Transient(message, status=status)
    # STEP-HTTP-1: a later attempt may succeed
    if status >= 500 or status == 429 or any(c in probe for c in RETRYABLE_CODES):
        return Transient(message, status=status)
    return Permanent(message, status=status)  # STEP-HTTP-1: any other refusal (3xx: see check_status)


def check_status(response, what):
    status = response.status
    if 200 <= status < 300:
        return
    if 300 <= status < 400:  # STEP-OUTPUT-5: never followed; urllib would re-send a POST as a body-less GET
        raise Transient("%s: HTTP %d redirect not followed" % (what, status), status=status)
    try:
        body = response.read(ERROR_BODY_BYTES)  # STEP-HTTP-5: at most 4096 bytes of an error body
    except Exception:
        body = b""
    raise classify(what, status, response.reason, body)


@contextlib.contextmanager
def exchange(url, what, timeout_s, budget=None):
    """An open HttpExchange; every failure to open it mapped to a StepFailure."""
    try:
        session = HttpExchange(url, STOP, timeout_s=timeout_s, connect_deadline_s=CONNECT_DEADLINE_S,
                               budget=budget, ssl_context_factory=tls_context,
                               # STEP-PROXY-2: each URL asks NO_PROXY (else an exempt host goes to the proxy)
                               proxies=PROXIES[0] if PROXIES else None)
    except ValueError as exc:
        raise Permanent("%s: the URL is not usable (%s)" % (what, exc)) from None
    try:
        try:
            session.open()  # STEP-STOP-3: DNS + TCP + proxy CONNECT + TLS under one 10 s deadline, ended by a stop
        except Exception as exc:
            raise network_failure(what, exc) from None
        yield session
    finally:
        session.close()


def send_get(session, what):
    try:
        session.conn.putrequest("GET", session.target.request_target)
        session.conn.putheader("User-Agent", USER_AGENT)  # STEP-HTTP-4: the store's operators see who calls
        session.conn.putheader("Connection", "close")
        session.conn.endheaders()
        return session.conn.getresponse()
    except Exception as exc:
        raise network_failure(what, exc) from None


def get_document(url, what, limit):
    """A small document by GET, reading at most limit + 1 bytes (STEP-MANIFEST-2)."""
    with exchange(url, what, READ_TIMEOUT_S) as session:
        response = send_get(session, what)
        check_status(response, what)
        if response.length is not None and response.length > limit:  # STEP-MANIFEST-2: refused unread
            raise Permanent("%s: %d bytes announced, more than the %d allowed" % (what, response.length, limit))
        data = bytearray()
        try:
            while True:
                chunk = response.read(min(CHUNK_BYTES, limit + 1 - len(data)))
                if not chunk:
                    break
                data += chunk
                if len(data) > limit:  # STEP-MANIFEST-2: stop reading past the ceiling
                    raise Permanent("%s: more than %d bytes; stopped reading" % (what, limit))
        except Exception as exc:  # a StepFailure passes through network_failure unchanged
            raise network_failure(what, exc) from None
        STOP.check(what)  # a shut-down socket reads as a short body
        return bytes(data)


# 6.6 State on disk ============================================================
# Objects move in 1 MiB chunks through one buffer, their page cache dropped every 8 MiB:
# a whole object in memory, or a growing page cache, gets the container OOM-killed (STEP-STREAM-*).

Payload = collections.namedtuple("Payload", "path data size sha256")  # exactly one of path, data


def bytes_payload(data):
    return Payload(None, data, len(data), hashlib.sha256(data).hexdigest())


def release_page_cache(fd, dirty):
    """Ask the kernel to drop a file's cached pages, best effort (dirty ones cannot be: sync first)."""
    try:
        if dirty:
            os.fsync(fd)
        # STEP-STREAM-2: page cache counts against the container's memory
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except (AttributeError, OSError, ValueError):
        pass  # advice only, and not on every platform


def write_file(fd, view):
    """os.write every byte; unlike write_all (section 9) an error raises: a full disk fails the copy."""
    while view:
        view = view[os.write(fd, view):]


def stream_verified(read_into, out_fd, pins, buffer, what, tally):
    """Copy a source to out_fd, shown to scan_chunk and verified against its pins: (sha256, size).

    `read_into(view)` fills a memoryview and returns the byte count, 0 at the end.  One pass
    over the bytes: a second read of a 1 GiB input would double the node's I/O and CPU.
    """
    view = memoryview(buffer)
    digest = hashlib.sha256()
    size = pending = 0
    while True:
        STOP.check(what)  # STEP-STOP-2: checked after every chunk
        count = read_into(view)
        if not count:
            break
        size += count
        if pins.size is not None and size > pins.size:  # STEP-INPUT-2: oversize refused at once, not read to the end
            raise Permanent("%s: more bytes than its size pin of %d; stopped reading" % (what, pins.size))
        if size > MAX_OBJECT_BYTES:  # STEP-OUTPUT-4: its copy could never be written (D33)
            raise Permanent("%s: over the 1 GiB object ceiling; stopped reading" % what)
        chunk = view[:count]
        digest.update(chunk)
        scan_chunk(tally, buffer, count)  # the work's own look at the bytes, in this same pass
        write_file(out_fd, chunk)
        pending += count
        if pending >= CACHE_DROP_BYTES:
            release_page_cache(out_fd, dirty=True)  # STEP-STREAM-2: every 8 MiB
            pending = 0
    if size >= CACHE_DROP_BYTES:
        release_page_cache(out_fd, dirty=True)  # STEP-STREAM-2: and the tail (a small file's cache dies with it)
    STOP.check(what)  # a stop's shutdown ends the body early: report the stop, not a short input
    if pins.size is not None and size != pins.size:
        raise Permanent("%s: %d bytes, but its size pin says %d" % (what, size, pins.size))
    if digest.hexdigest() != pins.sha256:  # STEP-INPUT-2: the platform checks what a step wrote, not what it read
        raise Permanent("%s: sha256 does not match its pin" % what)
    return digest.hexdigest(), size


def file_sha256(path, buffer):
    """(sha256 hex, size) of a file, streamed."""
    view = memoryview(buffer)
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb", buffering=0) as source:
        while True:
            count = source.readinto(view)
            if not count:
                break
            digest.update(view[:count])
            size += count
        release_page_cache(source.fileno(), dirty=False)
    return digest.hexdigest(), size


def copy_into(fd, payload, buffer):
    if payload.data is not None:
        write_file(fd, memoryview(payload.data))
        return
    view = memoryview(buffer)
    pending = 0
    with open(payload.path, "rb", buffering=0) as source:
        while True:
            STOP.check("a staging copy")
            count = source.readinto(view)
            if not count:
                break
            write_file(fd, view[:count])
            pending += count
            if pending >= CACHE_DROP_BYTES:
                release_page_cache(fd, dirty=True)  # STEP-STREAM-2: dirty pages synced and dropped every 8 MiB
                release_page_cache(source.fileno(), dirty=False)
                pending = 0
        if payload.size >= CACHE_DROP_BYTES:
            release_page_cache(fd, dirty=True)
            release_page_cache(source.fileno(), dirty=False)


def write_local(root, relpath, payload, what, buffer):
    destination = os.path.join(root, *relpath.split("/"))
    try:
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        atomic_write(destination, lambda fd: copy_into(fd, payload, buffer), mode=0o644)  # STEP-OUTPUT-7: temp, fsync, rename
    except OSError as exc:
        raise Transient("%s: %s" % (what, describe(exc))) from None


def make_scratch(parent):
    try:
        return tempfile.mkdtemp(prefix=PROGRAM + "-", dir=parent)  # STEP-STREAM-3: private, under TMPDIR
    except OSError as exc:
        raise Transient("could not create a scratch directory under TMPDIR: %s" % describe(exc)) from None


def remove_file(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def read_local_document(path, what, limit):
    if not isinstance(path, str) or not path:
        raise Permanent("%s: the path is not a non-empty string" % what)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise Transient("%s: %s" % (what, describe(exc))) from None
    if len(data) > limit:  # STEP-MANIFEST-2: an oversized document is never read whole
        raise Permanent("%s: more than %d bytes" % (what, limit))
    return data


# 6.7 Child framing (not used by this node) ====================================
# One process does the whole run: no child is started, so no argv prefix is taken.

CHILD_MODES = ()


# 6.8 Progress =================================================================
# The agent shows the last progress line; the log keeps a 1000-line tail (STEP-PROGRESS-*).


class Progress(object):
    """`@lspo:progress` lines, thinned so that a job with 1,000 inputs still ends with its `done` line."""

    lines = 0  # written so far
    fraction = 0.0  # the last one written
    step = -1  # its 1/200 of the run

    def report(self, fraction, phase):
        fraction = round(min(1.0, max(0.0, float(fraction))), 4)
        step = int(fraction * (PROGRESS_MAX_LINES - 1) + 1e-6)
        if self.lines >= PROGRESS_MAX_LINES:  # STEP-PROGRESS-3: leave the log's tail to why a run failed
            return
        # STEP-PROGRESS-2: never backwards; between inputs, at most one line per 1/200 of the run
        if fraction < self.fraction or (fraction < 1.0 and step <= self.step):
            return
        payload = json.dumps({"fraction": fraction, "phase": str(phase)[:PROGRESS_PHASE_CHARS]})
        write_all(1, ("@lspo:progress %s\n" % payload).encode("ascii"))  # STEP-PROGRESS-1: whole line, unbuffered
        self.lines += 1
        self.fraction, self.step = fraction, step


# 6.9 The credentials envelope =================================================
# The envelope lives about 15 minutes and is replaced by a rename, unannounced:
# a node that reads it once cannot write after that (STEP-CREDS-*).


def remember_secrets(envelope):
    """Add every credential the envelope carries to SECRETS (STEP-REDACT-1)."""
    def visit(value):
        if isinstance(value, (dict, list)):
            for item in (value.values() if isinstance(value, dict) else value):
                visit(item)
        elif isinstance(value, str) and "://" in value:
            parts = urllib.parse.urlsplit(value)
            SECRETS.update(v for v in (parts.query, parts.fragment, parts.username, parts.password) if v)
            SECRETS.update(v for _k, v in urllib.parse.parse_qsl(parts.query))  # decoded values
            SECRETS.update(pair.partition("=")[2] for pair in parts.query.split("&"))  # and as sent
    visit(envelope)
    staging = envelope.get("staging")
    post = staging.get("post") if isinstance(staging, dict) else None
    if isinstance(post, dict):
        try:
            fields = post_fields(post)
        except (TypeError, ValueError):
            fields = {}  # refused by validate_envelope, never sent
        SECRETS.update(str(v) for v in fields.values() if v is not None)


def post_fields(post):
    """staging.post.fields as the upstream read them: any false value is no fields, a list of
    [name, value] pairs is read in its order; dict() raises TypeError or ValueError for the rest."""
    return dict(post.get("fields") or {})


def validate_envelope(envelope):
    """Refuse an envelope this node cannot work with (STEP-CREDS-5, STEP-CREDS-7)."""
    version = envelope.get("schema_version", 1)
    if not is_int(version) or version != 1:  # STEP-CREDS-5: True is not 1
        raise Permanent("the credentials envelope's schema_version is not 1")
    staging = envelope.get("staging")
    # STEP-CREDS-5: no staging, nowhere to write: permanent
    if not isinstance(staging, dict) or staging.get("mode") not in STAGING_MODES:
        raise Permanent("the credentials envelope's staging is missing or has an unknown mode")
    if staging["mode"] == "presigned_post":
        post = staging.get("post")
        if not isinstance(post, dict):  # STEP-CREDS-7 (D16): refused now, not at the first write
            raise Permanent("staging.post is not an object")
        if not isinstance(post.get("url"), str):  # STEP-CREDS-7: refused now, not at the first upload
            raise Permanent("staging.post.url is missing or not a string")
        try:
            split_url(post["url"])
        except ValueError as exc:
            raise Permanent("staging.post.url is not a usable URL (%s)" % exc)
        try:
            post_fields(post)  # STEP-CREDS-7: fields are copied into every POST, each value as its text
        except (TypeError, ValueError):
            raise Permanent("staging.post.fields is neither an object nor a list of [name, value] pairs") from None
        if not isinstance(post.get("key_prefix"), str):  # STEP-CREDS-7: every key is key_prefix + relpath
            raise Permanent("staging.post.key_prefix is missing or not a string")
    # STEP-CREDS-7 (D44): checked at start-up, not at the first write; "" is the working
    # directory, as the upstream joined it, and canonical relpaths keep every write under it
    elif not isinstance(staging.get("path"), str):
        raise Permanent("staging.path is missing or not a string")
    inputs = envelope.get("inputs")
    # STEP-CREDS-7 (D38): null, {}, "", 0 and false mean [] (the upstream read `inputs or []`);
    # any other non-list is a broken envelope that no retry fixes
    if inputs and not isinstance(inputs, list):
        raise Permanent("the credentials envelope's inputs is not a list")


def read_envelope(path, variable):
    """(envelope, expiry epoch or None), validated; messages name the variable, never the path."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CREDENTIALS_BYTES + 1)
    except FileNotFoundError:
        raise Transient("the credentials file %s does not exist" % variable) from None
    except OSError as exc:
        raise Transient("the credentials file %s could not be read (%s)" % (
            variable, exc.strerror or type(exc).__name__)) from None
    if len(data) > MAX_CREDENTIALS_BYTES:
        raise Transient("the credentials file %s is larger than 64 MiB" % variable)
    try:
        envelope = json.loads(data.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError included
        raise Transient("the credentials file %s is not UTF-8 JSON" % variable) from None
    if not isinstance(envelope, dict):
        raise Transient("the credentials file %s does not hold a JSON object" % variable)
    remember_secrets(envelope)
    validate_envelope(envelope)
    return envelope, parse_utc_timestamp(envelope.get("expires_at"))


class Credentials(object):
    """The envelope, re-read from its path whenever it may be out of date."""

    def __init__(self, path, variable):
        self.path = path
        self.variable = variable
        self.held = None
        self.expires_at = None

    def get(self, force=False):
        # STEP-CREDS-3/-4: near expiry or after a refusal, open the path again (a rename replaced it)
        if force or self.held is None or self.stale():
            self.held, self.expires_at = read_envelope(self.path, self.variable)
        return self.held

    def stale(self):
        if self.expires_at is None:
            return True  # STEP-CREDS-3: no usable expires_at, so every access re-reads
        return time.time() >= self.expires_at - CREDS_MARGIN_S  # STEP-CREDS-3: within 5 s of expiry

    def for_marker(self):
        """A forced re-read; if it fails, the envelope held so far, whatever its expiry."""
        try:
            return self.get(force=True)  # STEP-CREDS-6: the marker forces a re-read
        except StepFailure as exc:
            if self.held is None:
                raise
            say("could not re-read the credentials for the completion marker (%s); "
                "using the envelope read before" % exc.message)
            return self.held  # STEP-CREDS-6 (D6): stale fallback, marker only


# 6.10 Inputs, names and relpaths ==============================================
# Pins are checked before any GET, a relpath before any write (STEP-INPUT-*, STEP-OUTPUT-2).

Pins = collections.namedtuple("Pins", "sha256 size")
VerifiedInput = collections.namedtuple("VerifiedInput", "index name port path sha256 size tally")

_SHA256_RE = re.compile(r"[0-9a-fA-F]{64}\Z")
_RELPATH_FORBIDDEN_RE = re.compile(r"[\\\x00-\x1f]")


def input_name(spec, index):
    name = spec.get("relpath") or spec.get("name") or "input-%d" % index
    # STEP-WORK-3: a number (a task id, say) is its text, as the upstream formatted it; not a refusal
    return name if isinstance(name, str) else str(name)


def input_pins(spec, label):
    digest = spec.get("sha256")
    if not isinstance(digest, str) or not _SHA256_RE.match(digest):  # STEP-INPUT-1: a pin is required
        raise Permanent("%s has no usable sha256 pin (64 hex digits); it is not read" % label)
    size = spec.get("size")
    if isinstance(size, float) and size.is_integer():
        size = int(size)  # STEP-INPUT-4 (D43): 6.0 is how some JSON producers write 6; the pin still holds
    # STEP-INPUT-4 (D4): a malformed size pin is refused, not ignored: the bound it sets would not hold
    if size is not None and (not is_int(size) or size < 0):
        raise Permanent("%s has a size pin that is not a whole number of bytes; it is not read" % label)
    if size is not None and size > MAX_OBJECT_BYTES:  # STEP-OUTPUT-4: refused before any transfer
        raise Permanent("%s is pinned at %d bytes, over the 1 GiB object ceiling" % (label, size))
    return Pins(digest.lower(), size)  # STEP-INPUT-1 (D3): pins compare case-insensitively


def check_relpath(relpath):
    """Refuse a name the marker parser would refuse: it drops the whole marker (STEP-OUTPUT-2)."""
    if not isinstance(relpath, str) or not relpath:
        raise Permanent("an object name is empty or not a string")
    shown = relpath[:MAX_NAME_CHARS]
    if relpath.startswith("/"):  # STEP-OUTPUT-2: an absolute key escapes the staging prefix
        raise Permanent("object name %r starts with /" % shown)
    if _RELPATH_FORBIDDEN_RE.search(relpath):  # STEP-OUTPUT-2: a backslash or control character is no portable name
        raise Permanent("object name %r holds a backslash or a control character" % shown)
    # STEP-OUTPUT-2: empty, . and .. components name another place
    if any(part in ("", ".", "..") for part in relpath.split("/")):
        raise Permanent("object name %r has an empty, '.' or '..' component" % shown)


def numbered(path, n):
    """`path` with -n before the last dot of its final component (STEP-OUTPUT-1, D5)."""
    head, slash, last = path.rpartition("/")
    stem, dot, extension = last.rpartition(".")
    last = "%s-%d.%s" % (stem, n, extension) if dot else "%s-%d" % (last, n)
    return head + slash + last


# 6.11 Uploads =================================================================
# An upload with no answer is never sent again: the store may hold it all the same (STEP-OUTPUT-6).


def send_payload(sock, payload, buffer):
    """The file part's bytes, exactly payload.size of them (a longer body desyncs the connection)."""
    if payload.data is not None:
        sock.sendall(payload.data)
        return
    sent = 0
    with open(payload.path, "rb", buffering=0) as source:
        if isinstance(sock, ssl.SSLSocket):  # TLS: the bytes must pass through user space
            view = memoryview(buffer)
            pending = 0
            while sent < payload.size:
                count = source.readinto(view[:min(len(view), payload.size - sent)])
                if not count:
                    break
                sock.sendall(view[:count])
                sent += count
                pending += count
                if pending >= CACHE_DROP_BYTES:
                    release_page_cache(source.fileno(), dirty=False)  # STEP-STREAM-2: what was read from disk, dropped
                    pending = 0
        else:
            while sent < payload.size:  # plain HTTP: the kernel moves file pages to the socket
                count = sock.sendfile(source, sent, min(CACHE_DROP_BYTES, payload.size - sent))
                if not count:
                    break
                sent += count
                release_page_cache(source.fileno(), dirty=False)  # STEP-STREAM-2: what was read from disk, dropped
        release_page_cache(source.fileno(), dirty=False)
    if sent != payload.size:
        raise OSError(errno.EIO, "the file shrank while it was being sent")


def multipart_parts(post, key):
    """(name, value) form fields: the policy fields in order, `key` set in place (STEP-OUTPUT-3)."""
    parts, seen_key = [], False
    for name, value in post_fields(post).items():
        if name == "key":
            value, seen_key = key, True  # STEP-OUTPUT-3: key_prefix + relpath overrides in place
        parts.append((name, value))
    if not seen_key:
        parts.append(("key", key))  # STEP-OUTPUT-3: else after the policy fields
    return parts


def _header_safe(text):
    return str(text).replace('"', "").replace("\r", "").replace("\n", "")


def multipart_frame(post, key):
    """(boundary, head bytes, tail bytes) around the file part, which comes last."""
    boundary = "----lspo" + secrets.token_hex(16)
    head = bytearray()
    for name, value in multipart_parts(post, key):
        head += ('--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n'
                 % (boundary, _header_safe(name))).encode("utf-8")
        head += str(value).encode("utf-8") + b"\r\n"
    filename = _header_safe(key.rpartition("/")[2]) or "object"
    head += ('--%s\r\nContent-Disposition: form-data; name="file"; filename="%s"\r\n'
             "Content-Type: application/octet-stream\r\n\r\n" % (boundary, filename)).encode("utf-8")  # STEP-OUTPUT-3: file last
    tail = ("\r\n--%s--\r\n" % boundary).encode("ascii")
    return boundary, bytes(head), tail


def _early_answer(session):
    """A refusal the store sent before reading the whole body, if one is waiting."""
    if STOP.should_abandon():
        return None
    try:
        session.sock.settimeout(EARLY_ANSWER_WAIT_S)
        response = session.conn.getresponse()
    except Exception:
        return None
    return None if 200 <= response.status < 300 else response


def post_object(post, key, payload, what, buffer, budget=None):
    boundary, head, tail = multipart_frame(post, key)
    with exchange(post["url"], what, UPLOAD_TIMEOUT_S, budget) as session:
        stage = "request"
        try:
            session.conn.putrequest("POST", session.target.request_target, skip_accept_encoding=True)
            session.conn.putheader("Content-Type", "multipart/form-data; boundary=" + boundary)
            session.conn.putheader("Content-Length", str(len(head) + payload.size + len(tail)))  # STEP-OUTPUT-3: exact, never chunked
            session.conn.putheader("User-Agent", USER_AGENT)  # STEP-HTTP-4: the store's operators see who calls
            session.conn.putheader("Connection", "close")
            stage = "body"
            session.conn.endheaders()
            session.sock.sendall(head)
            send_payload(session.sock, payload, buffer)
            session.sock.sendall(tail)
            stage = "answer"
            response = session.conn.getresponse()
        except Exception as exc:
            response = _early_answer(session) if stage == "body" else None
            if response is None:
                failure = network_failure(what, exc)
                if stage != "request" and not isinstance(failure, StopRequested):
                    # STEP-OUTPUT-6: ambiguous, so never re-sent
                    failure = Transient("%s: no answer from the store (%s); it may hold the object, "
                                        "so it is not sent again" % (what, describe(exc)))
                failure.maybe_stored = stage != "request"  # STEP-OUTPUT-6: bytes went out, no status came back
                raise failure from None
        try:
            check_status(response, what)
        finally:
            response.close()


# 7 Lifecycle ==================================================================
# One Run, manifest to marker.  The status and exit code are decided once, before the
# marker is composed, and the marker is the last write on every path: two accounts of
# one run that disagree are worse than one (STEP-MARKER-1, -3; STEP-EXIT-2).

RESULT_NOT_SENT = "not-sent"  # no byte of result.json has reached the store
RESULT_UPLOADED = "uploaded"  # the store accepted it
RESULT_REFUSED = "refused"  # the store answered with a refusal: certainly not stored
RESULT_UNKNOWN = "unknown"  # bytes went out and no answer came back: it may be stored

MARKER_WRITTEN = "written"  # the store accepted the receipt
MARKER_UNCONFIRMED = "unconfirmed"  # attempted; the store may or may not hold it
MARKER_NONE = "none"  # not attempted (no identity, or too large): already said why

# What the end of a failed or stopped run does about result.json, by (state, status).
RESULT_ON_FAILURE = {
    (RESULT_UPLOADED, "failed"): "keep",
    (RESULT_UPLOADED, "cancelled"): "keep",
    (RESULT_NOT_SENT, "failed"): "upload-first",  # STEP-RESULT-4: a failed run still reports its facts
    (RESULT_REFUSED, "failed"): "upload-first",  # STEP-RESULT-4 (D13): definitely refused, so safe to re-send
    (RESULT_UNKNOWN, "failed"): "keep",  # STEP-OUTPUT-6 (D13): a re-send could lose to the first; listed (D34)
    (RESULT_NOT_SENT, "cancelled"): "skip",  # STEP-RESULT-5: no new request after a stop
    (RESULT_REFUSED, "cancelled"): "skip",  # STEP-RESULT-5: no request after a stop but the marker
    (RESULT_UNKNOWN, "cancelled"): "keep",  # STEP-RESULT-4 (D34): it may be stored, so it stays listed
}


class Run(object):
    """One execution of the step.  The inventory lives here, not in the work loop, so a failed
    or stopped run still lists every object it wrote or began writing (STEP-MARKER-5)."""

    def __init__(self, config, creds):
        self.config = config
        self.creds = creds
        self.manifest = None
        self.scratch = None
        self.phase = "starting"
        self.inventory = collections.OrderedDict()  # relpath -> (sha256, size), in write order
        self.ports = collections.OrderedDict()  # port -> [relpath]
        self.taken = set()  # output names chosen so far
        self.facts = []
        self.unclaimed = {"over_cap": 0, "bad_key": 0, "unusable": 0}
        self.metrics = dict.fromkeys(METRICS, 0)  # the work's own measures (section 3)
        self.state = {}  # the work's own state across inputs (section 3)
        self.result_state = RESULT_NOT_SENT
        self.progress = Progress()
        self.buffer = bytearray(CHUNK_BYTES)  # the one streaming buffer, reused for every chunk

    # -- for your work (section 3): the API [EDIT] code may call --

    def output_relpath(self, port, name):
        """outputs/<name>; on a clash outputs/<port>/<name>; then a counter (STEP-WORK-2): one
        relpath twice would lose bytes and list a duplicate, which the collector refuses whole
        (STEP-OUTPUT-1).  The name is used as given: publishing refuses a bad one."""
        candidate = "%s/%s" % (OUTPUT_DIR, name)
        if candidate in self.taken:
            base = "%s/%s/%s" % (OUTPUT_DIR, port, name)
            candidate, n = base, 2
            while candidate in self.taken:
                candidate, n = numbered(base, n), n + 1  # D5: the counter renames the file, never its directory
        self.taken.add(candidate)
        return candidate

    def publish_file(self, relpath, path, port, sha256=None, size=None):
        """Publish the file at `path` as `relpath` on `port`, streamed from disk.  Without
        sha256 and size (a verified input's), it is hashed first: the marker lists the bytes sent."""
        if sha256 is None or size is None:
            sha256, size = file_sha256(path, self.buffer)
        self.publish(relpath, Payload(path, None, size, sha256), port)

    def publish_bytes(self, relpath, data, port):
        """Publish a small object held in memory (a summary, an index): never a large one."""
        self.publish(relpath, bytes_payload(bytes(data)), port)

    def claim(self, key, value):
        """Record a search fact if it obeys the platform's rules; count it if not (STEP-RESULT-3)."""
        if len(self.facts) >= MAX_FACTS:  # STEP-RESULT-3: the platform drops the rest silently; count them here
            self.unclaimed["over_cap"] += 1
            return False
        if not isinstance(key, str) or not _FACT_KEY_RE.match(key):
            self.unclaimed["bad_key"] += 1
            return False
        if isinstance(value, str):
            value = value.strip()
            usable = 0 < len(value) <= MAX_FACT_VALUE_CHARS and not _FACT_FORBIDDEN_RE.search(value)
        else:
            usable = is_int(value)  # STEP-RESULT-3: a string or an int, never a bool
        if not usable:
            self.unclaimed["unusable"] += 1  # STEP-RESULT-3: counted, not listed; the run goes on
            return False
        self.facts.append({"key": key, "value": value})
        return True

    def check_stop(self, what):
        """Raise StopRequested if a stop was requested: call it in any long loop (STEP-STOP-2)."""
        STOP.check(what)

    # -- internal: contract machinery, not for [EDIT] code; the run, start to end --

    def execute(self):
        try:
            status, outcome, reason = self.work()
        finally:
            if self.scratch:
                shutil.rmtree(self.scratch, ignore_errors=True)  # STEP-STREAM-3: nothing left behind
        return self.conclude(status, outcome, reason)  # STEP-MARKER-1: the receipt is the last write

    def work(self):
        """(status, outcome, reason): decided here, once, before the marker is composed."""
        try:
            self.scratch = make_scratch(self.config.scratch_parent)
            self.phase = "reading the manifest"
            self.manifest = self.read_manifest()
            identity, why = resolve_identity(self.manifest, self.config)
            if identity is None:  # STEP-MARKER-6 (D26): no receipt possible, so no work either
                raise Permanent(why)
            say("execution %s, attempt %s" % (identity["execution_id"], identity["attempt"]))
            self.process()
        except BaseException as exc:
            status, outcome, reason = self.decide_failure(exc)
            self.settle_result(status)
            return status, outcome, reason
        if STOP.requested:  # STEP-EXIT-2 (D9): read once; a cancelled receipt always says why
            reason = "stopped on request (signal %s) after the work had finished" % STOP.signum
            say("CANCELLED: " + reason)
            return "cancelled", OUTCOME_CANCELLED, reason
        return "succeeded", OUTCOME_SUCCEEDED, None

    def read_manifest(self):
        envelope = self.creds.get()
        if envelope.get("manifest_get"):  # STEP-MANIFEST-1: preferred
            # STEP-CREDS-4 (D37): retried once like any request, else an envelope rotated
            # just as the run starts fails an attempt the new one could finish
            data = self.with_refresh(
                lambda env: get_document(env.get("manifest_get"), "reading the manifest", MAX_DOCUMENT_BYTES),
                "reading the manifest")
        elif envelope.get("manifest_path"):  # STEP-MANIFEST-1: the local form
            data = read_local_document(envelope["manifest_path"], "reading the manifest", MAX_DOCUMENT_BYTES)
        else:  # STEP-MANIFEST-1: nothing to read is permanent
            raise Permanent("the envelope names neither manifest_get nor manifest_path")
        return parse_manifest(data)

    def process(self):
        total = len(self.creds.get().get("inputs") or [])  # STEP-CREDS-7: null (any JSON false) means []
        for index in range(total):  # STEP-INPUT-3: one at a time, in list order
            STOP.check("the next input")  # STEP-STOP-4: no new input after a stop
            self.phase = "reading input %d of %d" % (index + 1, total)
            self.progress.report(index / total, WORK_PHASE)  # STEP-PROGRESS-2: shows the run moving
            item = self.fetch_input(index)
            self.phase = "working on input %d of %d" % (index + 1, total)
            try:
                do_work(self, item)
            finally:
                remove_file(item.path)
        STOP.check("the work after the last input")  # STEP-STOP-4: nothing new starts after a stop
        self.phase = "finishing the work after the last input"
        finish_work(self)
        self.phase = "writing result.json"
        self.write_result(inventory_first=True)  # STEP-RESULT-1: inventory first on the normal path
        self.progress.report(1.0, "done")  # STEP-PROGRESS-2: after result.json, before the marker
        STOP.check("the end of the work")  # a stop during result.json ends the run as cancelled

    def input_spec(self, envelope, index):
        inputs = envelope.get("inputs") or []
        if index >= len(inputs):
            raise Transient("the input list shrank under a credentials refresh")
        spec = inputs[index]
        if not isinstance(spec, dict):  # STEP-CREDS-7 (D38): permanent, not a crash that advises a retry
            raise Permanent("input %d is not an object" % index)
        return spec

    def fetch_input(self, index):
        """Stream input `index` into scratch, verified against its pins (STEP-INPUT-2)."""
        spec = self.input_spec(self.creds.get(), index)
        name = input_name(spec, index)
        what = "input %d (%s)" % (index, name[:MAX_NAME_CHARS])
        pins = input_pins(spec, what)  # STEP-INPUT-1, STEP-INPUT-4: before any GET
        port = spec.get("port") or DEFAULT_INPUT_PORT
        port = str(port).strip() or DEFAULT_INPUT_PORT  # a non-string is its text, as the upstream formatted it
        fd, path = tempfile.mkstemp(prefix="in-", suffix=".bin", dir=self.scratch)
        tally = {}
        try:
            def attempt(envelope):
                os.ftruncate(fd, 0)  # a retry rewrites the file from the start
                os.lseek(fd, 0, os.SEEK_SET)
                tally.clear()  # ...and the work's look at it starts over too
                return self.download(self.input_spec(envelope, index), fd, pins, what, tally)
            digest, size = self.with_refresh(attempt, what)
        except BaseException:
            os.close(fd)
            remove_file(path)
            raise
        os.close(fd)
        return VerifiedInput(index, name, port, path, digest, size, tally)

    def download(self, spec, fd, pins, what, tally):
        reading = "reading " + what
        url, local = spec.get("get_url"), spec.get("local_path")
        if not (url or local):  # STEP-INPUT-3: nothing to read is permanent
            raise Permanent("%s has neither a get_url nor a local_path" % what)
        if not url and not isinstance(local, str):  # open() of an int would open that file descriptor
            raise Permanent("%s: local_path is not a string" % what)
        with contextlib.ExitStack() as stack:
            if url:  # STEP-INPUT-3: get_url preferred
                session = stack.enter_context(exchange(url, reading, READ_TIMEOUT_S))
                source = send_get(session, reading)
                check_status(source, reading)
            else:
                try:
                    source = stack.enter_context(open(local, "rb", buffering=0))
                except OSError as exc:
                    raise Transient("%s: %s" % (reading, describe(exc))) from None

            def read_into(view):
                try:
                    return source.readinto(view)
                except Exception as exc:  # a reset, a timeout, a disk error: transient, or the stop's
                    raise network_failure(reading, exc) from None
            return stream_verified(read_into, fd, pins, self.buffer, reading, tally)

    def with_refresh(self, operation, what, envelope=None):
        """operation(envelope); after an expired-looking refusal, once more if the file changed."""
        used = self.creds.get() if envelope is None else envelope
        try:
            return operation(used)
        except Expired:
            fresh = self.creds.get(force=True)  # STEP-CREDS-4: a refusal forces a re-read
            if fresh == used:  # STEP-CREDS-4: by value; every re-read builds a new object
                raise
            say("%s was refused as expired; retrying once with the rotated credentials" % what)
            return operation(fresh)  # STEP-CREDS-4: once; a second refusal ends the run

    def record(self, relpath, sha256, size, port):
        if relpath in self.inventory:  # STEP-MARKER-5: no duplicate relpaths
            raise Permanent("object %r would be listed twice" % relpath[:MAX_NAME_CHARS])
        self.inventory[relpath] = (sha256, size)
        self.ports.setdefault(port.strip(), []).append(relpath)

    def forget(self, relpath):
        self.inventory.pop(relpath, None)  # produced_ports is filtered by the inventory

    def write_object(self, relpath, payload, envelope=None, budget=None):
        """The one function through which anything reaches staging."""
        check_relpath(relpath)  # STEP-OUTPUT-2: before any write
        if payload.size > MAX_OBJECT_BYTES:  # STEP-OUTPUT-4: before any transfer
            raise Permanent("%s is %d bytes, over the 1 GiB object ceiling" % (relpath, payload.size))
        what = "uploading " + relpath

        def attempt(env):
            staging = env["staging"]
            if staging["mode"] == "local_path":
                write_local(staging["path"], relpath, payload, what, self.buffer)
            else:  # STEP-OUTPUT-3: the full key, never ${filename}
                post = staging["post"]
                post_object(post, post["key_prefix"] + relpath, payload, what, self.buffer, budget)
        self.with_refresh(attempt, what, envelope)

    def publish(self, relpath, payload, port):
        """Inventory first, then upload: a store may commit a body whose answer never arrives."""
        self.record(relpath, payload.sha256, payload.size, port)  # STEP-MARKER-5: inventory first
        try:
            self.write_object(relpath, payload)
        except BaseException as exc:
            if not getattr(exc, "maybe_stored", False):
                self.forget(relpath)  # definitely not stored: the marker must not name it
            raise

    def result_document(self):
        counted = ["%d %s" % (self.unclaimed[k], k) for k in UNCLAIMED_ORDER if self.unclaimed[k]]
        not_claimed = "not claimed as search facts: " + "; ".join(counted) if counted else None
        manifest = self.manifest if isinstance(self.manifest, dict) else {}
        params = manifest.get("params")
        # STEP-RESULT-1 (D29): the attempt the marker carries; a raw copy would say null or "2"
        # beside a receipt that says 2 whenever the attempt came from the environment
        attempt = identity_number(self.manifest, self.config, "attempt")
        return compose_result(self.metrics, attempt, {} if params is None else params, self.facts, not_claimed)

    def write_result(self, inventory_first):
        """Normal path: inventory, then upload; failure path: the reverse (STEP-RESULT-4)."""
        payload = bytes_payload(self.result_document())
        try:
            if inventory_first:
                self.publish(RESULT_FILENAME, payload, REPORT_PORT)  # STEP-OUTPUT-8: port report only
            else:
                self.write_object(RESULT_FILENAME, payload)  # STEP-RESULT-4: upload first...
        except BaseException as exc:
            if getattr(exc, "maybe_stored", False):
                self.result_state = RESULT_UNKNOWN
                if not inventory_first:
                    # STEP-RESULT-4 (D34): it may be stored, so it is listed; unlisted, a stored
                    # report would sit in staging named by no receipt, out of salvage's sight
                    self.record(RESULT_FILENAME, payload.sha256, payload.size, REPORT_PORT)
            elif getattr(exc, "status", None) is not None:
                self.result_state = RESULT_REFUSED
            raise
        self.result_state = RESULT_UPLOADED
        if not inventory_first:
            self.record(RESULT_FILENAME, payload.sha256, payload.size, REPORT_PORT)  # STEP-RESULT-4: ...then inventoried

    def decide_failure(self, exc):
        stopped = STOP.requested or isinstance(exc, (StopRequested, KeyboardInterrupt))
        if stopped:  # STEP-EXIT-2: cancellation wins, whatever error the stop caused
            status, outcome = "cancelled", OUTCOME_CANCELLED
            reason = "stopped on request (signal %s) while %s" % (STOP.signum, self.phase)
            if not isinstance(exc, (StopRequested, KeyboardInterrupt)):
                reason += "; the interrupted operation ended with: " + describe(exc)
        elif isinstance(exc, StepFailure):
            status, outcome, reason = "failed", exc.outcome, describe(exc)
        else:
            status, outcome, reason = "failed", OUTCOME_TRANSIENT, "internal error: " + describe(exc)
        reason = redact(reason, SECRETS)[:MAX_ERROR_CHARS]  # STEP-MARKER-7, STEP-REDACT-1: redacted, then cut
        say("%s: %s" % ("CANCELLED" if stopped else "FAILED", reason))
        return status, outcome, reason

    def settle_result(self, status):
        """What a failed or stopped run does about result.json (RESULT_ON_FAILURE)."""
        action = RESULT_ON_FAILURE[(self.result_state, status)]
        if action == "skip":
            self.forget(RESULT_FILENAME)
            say("stopped: this run writes no result.json")  # STEP-RESULT-5: a stopped run writes no report
        elif action == "upload-first":
            self.forget(RESULT_FILENAME)
            try:
                self.write_result(inventory_first=False)  # STEP-RESULT-4: the facts so far, before the marker
            except BaseException as exc:
                say("could not write result.json: %s" % describe(exc))

    def conclude(self, status, outcome, reason):
        code = EXIT_STATUS[outcome]  # STEP-MARKER-3: the code the process will return
        marker = self.write_marker(status, code, reason)
        if marker == MARKER_WRITTEN and outcome == OUTCOME_SUCCEEDED:
            written = [size for relpath, (_sha, size) in self.inventory.items() if relpath != RESULT_FILENAME]
            say("done: %d object(s), %d bytes" % (len(written), sum(written)))
        elif marker == MARKER_UNCONFIRMED:
            say("the run ended (%s, exit %d) but its completion marker could not be confirmed" % (status, code))
        return outcome  # STEP-MARKER-3: decided once; the marker's fate never changes it

    def write_marker(self, status, code, reason):
        """Compose and write the one receipt; return a MARKER_* outcome, never raise."""
        STOP.abandonable = False  # STEP-STOP-5: from here a stop only sets the flag
        identity, why = resolve_identity(self.manifest, self.config)
        if identity is None:  # STEP-MARKER-6: a receipt without identity would be another attempt's
            say("no completion marker: %s" % why)
            return MARKER_NONE
        data = compose_marker(status, code, reason, self.inventory, self.ports, identity)
        if len(data) > MAX_DOCUMENT_BYTES:  # STEP-MARKER-2: the collector refuses more than 8 MiB
            say("no completion marker: it would exceed 8 MiB")
            return MARKER_NONE
        budget = Deadline(RECEIPT_DEADLINE_S)  # STEP-STOP-6: one budget over every phase, the retry included
        watchdog = Watchdog(budget, STOP.abandon_all)  # STEP-STOP-6: shuts the socket when the budget is spent
        try:
            envelope = self.creds.for_marker()  # STEP-CREDS-6: re-read; the held envelope only if that fails
            with watchdog:
                self.write_object(MARKER_FILENAME, bytes_payload(data), envelope=envelope, budget=budget)
        except BaseException as exc:
            if watchdog.fired:
                say("giving up on the completion marker after %gs" % RECEIPT_DEADLINE_S)
            say("could not write the completion marker: %s" % describe(exc))
            return MARKER_UNCONFIRMED
        return MARKER_WRITTEN


def lifecycle(config):
    """The envelope, then one Run; the outcome.  A start-up failure has no marker (nowhere to write it)."""
    creds = Credentials(config.credentials_path, config.credentials_variable)
    try:
        creds.get()  # STEP-CREDS-5: a broken envelope is refused before any request
    except Exception as exc:
        failure = exc if isinstance(exc, StepFailure) else Transient("internal error: " + describe(exc))
        say("could not start: %s" % failure.message)
        return OUTCOME_CANCELLED if STOP.requested else failure.outcome
    return Run(config, creds).execute()


def defect_outcome(exc):
    """A defect in this file: one line, never a traceback; a stop seen still ends as cancelled (STEP-EXIT-2)."""
    say("internal error: %s" % describe(exc))
    return OUTCOME_CANCELLED if STOP.requested else OUTCOME_TRANSIENT


def finish(outcome):
    """The exit code of `outcome`, fixed once (STEP-EXIT-1); this node has no final line."""
    return PROCESS.settle(1, None, EXIT_STATUS[outcome])


# 8 main() =====================================================================
# Never a traceback, always one of the four exit codes (STEP-STOP-1, STEP-EXIT-1, STEP-REDACT-2).

USAGE = """usage: hello_node.py [--help]

The reference LSPO external step: copies every pinned input to outputs/, then
writes result.json and the completion marker __lspo_complete.json.  It takes
no arguments (any given are ignored); everything comes from the environment:

  LSPO_CREDENTIALS_FILE  the credentials envelope (legacy: LSPO_CREDENTIALS;
                         default /lspo/creds/creds.json)
  LSPO_EXECUTION_ID, LSPO_ATTEMPT, LSPO_GENERATION, LSPO_IDEMPOTENCY_KEY
                         identity for the marker when the manifest lacks it
  TMPDIR                 where scratch files go (removed before exit)
  SSL_CERT_FILE          CA bundle for https URLs
  HTTPS_PROXY, HTTP_PROXY, NO_PROXY (or lowercase)
                         an http proxy (http://host:port, or host:port as
                         urllib reads it) for https and http URLs, and the
                         hosts reached directly

Exit status: 0 succeeded, 1 transient failure, 10 permanent failure,
20 cancelled (SIGTERM or SIGINT).  Contract: contract/step.md.
"""


def main(argv=None):
    """Run the node, or the child mode its command line names; return the exit status.  Never raises."""
    tokens = list(sys.argv[1:] if argv is None else argv)
    for prefix, child_main in CHILD_MODES:  # 6.7: this file, started again as its own child
        if tokens[:len(prefix)] == list(prefix):
            return child_main(tokens[len(prefix):])
    try:
        config = configure(tokens, os.environ)  # 6.3: argv and environment, read once; None: --help
    except UsageError as exc:  # STEP-PROXY-1: a fixed text naming the option, never its value
        write_all(2, exc.text.encode("ascii", "replace"))
        return exc.exit_code
    if config is None:  # STEP-NODE-2: the usage, with nothing read and nothing sent
        write_all(1, USAGE.encode("ascii"))
        return EXIT_OK
    try:
        start_process()  # 6.1: wake pipes and stop handlers, before the first request (STEP-STOP-1)
        outcome = lifecycle(config)
    except BaseException as exc:  # a defect in this file still ends in the final line, never a traceback
        outcome = defect_outcome(exc)
    return finish(outcome)


# 9 Shared blocks ==============================================================
# Verbatim copies of nodes/blocks/<name>.py (the part below its body marker).
# Do not edit here: edit the block, then run `python3 -m conformance.sync`.

# ---- BEGIN BLOCK deadline (nodes/blocks/deadline.py) ----
# deadline: elapsed budgets on the monotonic clock, and a watchdog that
# enforces a budget on calls that only know per-call timeouts.


class Deadline(object):
    """An elapsed-time budget, measured on the monotonic clock.

    A socket timeout bounds silence, not duration: a peer that sends one byte
    just inside every timeout keeps a call alive for ever.  Every wait that
    must end by a fixed time derives its timeout from remaining().
    """

    def __init__(self, seconds):
        self.seconds = float(seconds)
        self.at = time.monotonic() + self.seconds

    def remaining(self):
        """Seconds left, never negative."""
        return max(0.0, self.at - time.monotonic())

    def expired(self):
        return time.monotonic() >= self.at


def sooner(first, second):
    """The deadline that ends first; either argument may be None."""
    if first is None:
        return second
    if second is None or first.at <= second.at:
        return first
    return second


class Watchdog(object):
    """Call `on_expiry` once, from the process's watchdog thread, when `deadline` passes.

    Wrap a stretch of blocking calls that must end by the deadline whatever the
    peer does; `on_expiry` has to make the blocked call return (for a socket:
    shutdown(), which a read or write in another thread notices at once).
    `fired` tells the caller afterwards why its call failed.  Once the `with`
    block has exited, `on_expiry` has returned or will never run: a socket
    kept for the next exchange is never shut by the last one's watchdog.

    Every Watchdog of the process shares one daemon thread (a thread per
    exchange is a clone() and two futex round trips for each request of an
    idle worker's poll).  It ends after LINGER_S with nothing to watch, or at
    once when retire() is called: a process that forks with a preexec_fn
    must be single-threaded first.
    """

    LINGER_S = 60.0  # longer than an idle worker's poll interval: one thread for all its polls

    _lock = threading.Lock()
    _wake = threading.Condition(_lock)
    _armed = set()
    _thread_pid = None  # the pid that started the thread: a forked child starts its own
    _fork_hook = False
    _retiring = False

    def __init__(self, deadline, on_expiry):
        self.deadline = deadline
        self.on_expiry = on_expiry
        self.fired = False
        self._firing = None

    def __enter__(self):
        cls = Watchdog
        with cls._lock:
            cls._retiring = False
            if cls._thread_pid != os.getpid():
                if not cls._fork_hook:  # a child forked while the thread held the lock must not inherit it held
                    os.register_at_fork(after_in_child=cls._forked)
                    cls._fork_hook = True
                cls._armed.clear()  # a forked child inherits the set, never the thread
                thread = threading.Thread(target=cls._run, name="watchdog", daemon=True)
                thread.start()
                cls._thread_pid = os.getpid()
            cls._armed.add(self)
            cls._wake.notify()
        return self

    @classmethod
    def retire(cls):
        """End the watchdog thread as soon as nothing is armed (a later Watchdog starts another)."""
        with cls._lock:
            cls._retiring = True
            cls._wake.notify()

    @classmethod
    def _forked(cls):
        cls._lock = threading.Lock()
        cls._wake = threading.Condition(cls._lock)
        cls._armed = set()
        cls._thread_pid = None

    @classmethod
    def _run(cls):
        with cls._lock:
            while True:
                now = time.monotonic()
                due = [dog for dog in cls._armed if dog.deadline.at <= now]
                if not due:
                    if not cls._armed:
                        if cls._retiring or not cls._wake.wait(cls.LINGER_S) and not cls._armed:
                            cls._thread_pid = None  # the next Watchdog starts a thread again
                            return
                        continue
                    cls._wake.wait(min(dog.deadline.at for dog in cls._armed) - now)
                    continue
                for dog in due:
                    cls._armed.discard(dog)
                    dog._firing = threading.Event()
                cls._lock.release()
                try:
                    for dog in due:
                        dog._fire()
                finally:
                    cls._lock.acquire()

    def _fire(self):
        self.fired = True
        try:
            self.on_expiry()
        except Exception:
            pass  # a watchdog must never print a traceback from its thread
        finally:
            self._firing.set()

    def __exit__(self, *exc_info):
        with Watchdog._lock:
            Watchdog._armed.discard(self)
            firing = self._firing
        if firing is not None:
            firing.wait(1.0)  # on_expiry is running: let it finish before the caller reuses what it cuts
        return False
# ---- END BLOCK deadline ----

# ---- BEGIN BLOCK utc_timestamp (nodes/blocks/utc_timestamp.py) ----
# utc_timestamp: the lenient ISO-8601 parser used for wall-clock expiry times
# (an envelope's expires_at), the same on every Python version.  It reads
# every form the upstream's datetime.fromisoformat() reads on 3.9 to 3.13
# (with a trailing Z): a peer that writes basic-format or week-date instants,
# an hour-only time or an offset with seconds is read, not taken as "expired".

_UTC_TIMESTAMP_RE = re.compile(
    # date: YYYY-MM-DD, YYYYMMDD, or the ISO week date YYYY-Www[-D] (dashes optional)
    r"(\d{4})(?:-(\d{2})-(\d{2})|(\d{2})(\d{2})|-?W(\d{2})(?:-?([1-7]))?)"
    # time after any one separator: HH[:MM[:SS[.fraction]]], colons optional
    r"(?:.(\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d*))?)?)?)?"
    # zone, after at most one space: Z, or +-HH[:MM[:SS[.fraction]]], colons optional
    r" ?(?:([Zz])|([+-])(\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d{1,6}))?)?)?)?\Z",
    re.DOTALL,
)


def _microseconds(fraction):
    """Digits after the decimal mark as microseconds (more than six are cut, as fromisoformat cuts them)."""
    return int((fraction or "0")[:6].ljust(6, "0"))


def parse_utc_timestamp(text):
    """ISO-8601 text to epoch seconds, or None when it is not a usable time.

    A trailing Z and an explicit offset are honoured; a time without a zone is
    taken as UTC.  The same grammar on every Python version (3.9's
    datetime.fromisoformat accepts neither Z nor most fraction widths, 3.11's
    takes basic format and week dates).
    """
    if not isinstance(text, str):
        return None
    match = _UTC_TIMESTAMP_RE.match(text.strip())
    if match is None:
        return None
    (year, month, day, b_month, b_day, week, weekday, hour, minute, second, fraction,
     _z, sign, off_h, off_m, off_s, off_f) = match.groups()
    try:
        if week is not None:
            date = datetime.date.fromisocalendar(int(year), int(week), int(weekday or 1))
        else:
            date = datetime.date(int(year), int(month or b_month), int(day or b_day))
        moment = datetime.datetime(date.year, date.month, date.day, int(hour or 0), int(minute or 0),
                                   int(second or 0), _microseconds(fraction), tzinfo=datetime.timezone.utc)
        if sign:
            offset = datetime.timedelta(hours=int(off_h), minutes=int(off_m or 0), seconds=int(off_s or 0),
                                        microseconds=_microseconds(off_f))
            if offset >= datetime.timedelta(days=1):
                return None  # fromisoformat refuses an offset of a day or more
            moment = moment - offset if sign == "+" else moment + offset
    except (ValueError, OverflowError):
        return None
    return moment.timestamp()
# ---- END BLOCK utc_timestamp ----

# ---- BEGIN BLOCK redact (nodes/blocks/redact.py) ----
# redact: make any text safe to print.  Whoever holds a presigned URL's query
# string holds the object it names, and HTTP libraries build exception text
# from URLs; so every line a node prints, and every error it records, passes
# through redact() first.

REDACTED = "REDACTED"
_URL_RE = re.compile(r"\b(?:https?|s3)://[^\s'\"<>|\\]+", re.IGNORECASE)
_UNPRINTABLE_RE = re.compile(r"[\x00-\x1f\x7f]+")
_ALREADY_REDACTED_RE = re.compile(re.escape(REDACTED) + r"[).,;:\]}]*\Z")  # keeps redact() idempotent
_MIN_SECRET_CHARS = 8  # shorter values (a status code, "true") are not worth hiding


def _redact_url(match):
    """Keep scheme, host and path; drop userinfo, then query and fragment."""
    scheme, _, rest = match.group(0).partition("://")
    end = len(rest)
    for mark in "/?#":
        found = rest.find(mark)
        if found != -1 and found < end:
            end = found
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        authority = authority.rpartition("@")[2]  # user:password@ is a credential too
    cut = len(tail)
    for mark in "?#":
        found = tail.find(mark)
        if found != -1 and found < cut:
            cut = found
    if cut < len(tail) and not _ALREADY_REDACTED_RE.match(tail, cut + 1):
        tail = tail[:cut + 1] + REDACTED
    return scheme + "://" + authority + tail


def redact(text, secrets=()):
    """`text` as one printable line with credentials removed.

    URLs lose userinfo, query and fragment; every string in `secrets` (values
    the caller knows to be credentials, such as policy fields or tokens) is
    replaced wherever it appears; control characters become spaces, so the
    result is always a single line.
    """
    out = _URL_RE.sub(_redact_url, str(text))
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= _MIN_SECRET_CHARS:
            out = out.replace(secret, REDACTED)
    return _UNPRINTABLE_RE.sub(" ", out).strip()
# ---- END BLOCK redact ----

# ---- BEGIN BLOCK stop (nodes/blocks/stop.py) ----
# stop: the signal plumbing.  One Stop object per process holds the stop flag,
# the ledger of sockets with a request in flight, and a wakeup pipe for the
# waits a shutdown() cannot reach (name lookup, connect, TLS handshake).  The
# node installs Stop.handle for SIGTERM and SIGINT itself, in main().


class StopRequested(Exception):
    """Raised by ordinary code that finds a stop it has to honour now."""


class Stop(object):
    """Stop flag, in-flight ledger and wakeup pipe.

    The handler does three things, in this order, and nothing else: set the
    flag (first, so that a failure in the rest still leaves the stop
    recorded); shut down every socket in the ledger while work is still
    abandonable, because close() does not interrupt a blocked read and
    shutdown() does; wake any select() waiting on wait_fd().  Then it prints
    one line naming the signal.  Every decision is taken later by ordinary code
    reading `requested`.

    `abandonable` turns false when the node starts its final receipt: from then
    on a stop only sets the flag.
    """

    def __init__(self, program, stderr_fd=2):
        self.program = program
        self.stderr_fd = stderr_fd  # where the handler's one line goes; None: no line (a node whose stderr is its status)
        self.requested = False
        self.signum = None
        self.abandonable = True
        self._inflight = set()
        self._wake_r = None
        self._wake_w = None

    def open(self):
        """Create the wakeup pipe (call from main(), never at import); it lasts as long as the process."""
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    def handle(self, signum, frame=None):
        """Signal handler for SIGTERM and SIGINT."""
        self.requested = True
        first = self.signum is None
        self.signum = signum
        try:
            if self.abandonable:
                self.abandon_all()
        except Exception:
            pass
        try:
            if self._wake_w is not None:
                os.write(self._wake_w, b"\0")
        except OSError:
            pass  # a full pipe already wakes its reader
        try:
            if first and self.stderr_fd is not None:
                line = "%s: stop requested (signal %d); finishing up\n" % (self.program, signum)
                os.write(self.stderr_fd, line.encode("ascii", "replace"))
        except (OSError, ValueError):
            pass

    def abandon_all(self):
        """Make every blocked call on a ledger socket return now (any thread)."""
        for sock in tuple(self._inflight):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except (OSError, ValueError):
                pass  # already closed or never connected: nothing to end

    def should_abandon(self):
        """True when a stop was requested and the current work may be cut."""
        return self.requested and self.abandonable

    def check(self, what="this step"):
        if self.should_abandon():
            raise StopRequested("stop requested before %s" % what)

    def wait_fd(self):
        """The fd a select() includes to notice a stop, or None when not abandonable."""
        return self._wake_r if self.abandonable else None

    def track(self, sock):
        """Put a socket on the ledger before anything on it can block."""
        self._inflight.add(sock)

    def untrack(self, sock):
        self._inflight.discard(sock)
# ---- END BLOCK stop ----

# ---- BEGIN BLOCK transport (nodes/blocks/transport.py) ----
# transport: HTTP/1.1 exchanges on sockets the node can always reach (the
# keepalive block's KeptExchange, a subclass, keeps a connection for the next
# exchange to the same origin).  Name lookup, TCP connect over every address
# and the TLS handshake share one elapsed deadline and each wait also watches
# the stop wakeup fd; once connected the socket sits on the stop ledger, so a
# stop (or a watchdog) ends a blocked read or write with shutdown().
# http.client only formats requests and parses responses: it never opens a
# connection itself.
#
# Proxies are opt-in, per exchange, and live in their own block (proxy): this
# one only calls the methods of the proxy it is handed (pick, tunnel,
# forward_target, forwarding_connection), so a node that must never use a
# proxy passes none and embeds no proxy code.  With a proxy, TCP goes to the
# proxy; an https target is reached through its CONNECT tunnel, inside the
# same deadline, every wait stoppable; an http target's request goes to the
# proxy in absolute form.

Target = collections.namedtuple("Target", "scheme host port request_target")

_FORBIDDEN_IN_TARGET = frozenset(" \t\r\n\x00")


def split_url(url):
    """Target of an http(s) URL; ValueError otherwise.

    The error never quotes the URL: its query string may be a credential.
    """
    if not isinstance(url, str) or not url:
        raise ValueError("not a non-empty string")
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError("scheme is not http or https")
    host, port = host_and_port(parts)
    if port is None:
        port = 443 if scheme == "https" else 80
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    if _FORBIDDEN_IN_TARGET.intersection(target) or _FORBIDDEN_IN_TARGET.intersection(host):
        raise ValueError("whitespace or control characters in the URL")
    return Target(scheme, host, port, target)


def host_and_port(parts):
    """(host, port or None) of urlsplit() parts; ValueError without the URL in it."""
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ValueError("port is not a number from 0 to 65535") from None
    if not host:
        raise ValueError("no host")
    return host, port


def wait_ready(stop, readable, writable, deadline, what):
    """Block until an fd is ready; StopRequested on a stop, TimeoutError at the deadline."""
    wake = stop.wait_fd()
    watch = list(readable) + ([wake] if wake is not None else [])
    while True:
        if stop.should_abandon():
            raise StopRequested("stop requested during " + what)
        remaining = deadline.remaining()
        if remaining <= 0:
            raise TimeoutError("%s did not finish within %gs" % (what, deadline.seconds))
        ready_r, ready_w, _ = select.select(watch, writable, [], remaining)
        if wake is not None and wake in ready_r:
            if stop.should_abandon():
                raise StopRequested("stop requested during " + what)
            ready_r.remove(wake)
        if ready_r or ready_w:
            return


def resolve(host, port, stop, deadline):
    """getaddrinfo() bounded by `deadline` and a stop.

    getaddrinfo() takes no timeout and has no socket to shut down, so a name
    (not an address literal) is looked up in a daemon thread while this thread
    waits in select().  A lookup that hangs leaves that thread behind, which
    only happens on a run that is failing anyway.
    """
    try:
        return socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
    except socket.gaierror:
        pass  # a name, not an address literal
    result = {}
    done_r, done_w = os.pipe()

    def lookup():
        try:
            result["addresses"] = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
        except Exception as exc:
            result["error"] = exc
        finally:
            try:
                os.write(done_w, b".")
            except OSError:
                pass  # the waiter gave up and closed its end
            os.close(done_w)

    threading.Thread(target=lookup, name="resolve", daemon=True).start()
    try:
        wait_ready(stop, [done_r], [], deadline, "name lookup of %s" % host)
    finally:
        os.close(done_r)
    if "error" in result:
        raise result["error"]
    return result["addresses"]


def _connect_one(sock, address, stop, deadline):
    sock.setblocking(False)
    code = sock.connect_ex(address)
    if code in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN, errno.EALREADY):
        wait_ready(stop, [], [sock], deadline, "connect")
        code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if code:
        raise OSError(code, os.strerror(code))


def _handshake(tls, stop, deadline):
    while True:
        try:
            tls.do_handshake()
            return
        except ssl.SSLWantReadError:
            wait_ready(stop, [tls], [], deadline, "TLS handshake")
        except ssl.SSLWantWriteError:
            wait_ready(stop, [], [tls], deadline, "TLS handshake")


def open_socket(target, stop, deadline, ssl_context=None, addresses=None, proxy=None, tls_session=None):
    """A connected (and, with `ssl_context`, TLS-wrapped) socket on the ledger.

    One deadline covers the lookup, every address in turn (each gets only what
    is left, so N addresses cannot take N timeouts), a proxy's CONNECT and the
    handshake.  The returned socket is non-blocking; the caller sets its
    timeout.  A stop during any of it, or found once it is done, raises
    StopRequested and no byte of a request goes out.

    `addresses` (getaddrinfo() entries) replaces the lookup for a caller that
    has judged the addresses itself: only those are tried, while the TLS server
    name and the certificate's host stay `target.host`.

    `proxy` (a Proxy of the proxy block) makes the TCP peer the proxy
    (`addresses` are then the proxy's); with `ssl_context` the TLS session
    runs through the tunnel its tunnel() opens to `target`, still verified
    against `target.host`.  Without `ssl_context` the caller sends its
    request to the proxy in absolute form (HttpExchange does).

    `tls_session` (an SSLSession of an earlier connection to `target`) is
    offered for resumption: an abbreviated handshake when the server still
    knows it, a full one otherwise.
    """
    stop.check("opening a connection")
    peer = target if proxy is None else proxy  # whom TCP connects to
    if addresses is None:
        addresses = resolve(peer.host, peer.port, stop, deadline)
    sock, last_error = None, None
    for family, kind, proto, _name, address in addresses:
        if deadline.expired():
            break
        try:
            candidate = socket.socket(family, kind, proto)
        except OSError as exc:  # no IPv6 on this host, say: the next address may still do
            last_error = exc
            continue
        stop.track(candidate)
        try:
            _connect_one(candidate, address, stop, deadline)
        except OSError as exc:  # TimeoutError included: try what time is left on the next
            stop.untrack(candidate)
            candidate.close()
            last_error = exc
            continue
        except BaseException:
            stop.untrack(candidate)
            candidate.close()
            raise
        # A request's head and body go out in two writes; without TCP_NODELAY the body waits
        # for the peer's delayed ACK (about 40 ms on Linux). HTTPConnection.connect() would
        # set it, but this socket is made here, so it is set here.
        candidate.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock = candidate
        break
    if sock is None:
        stop.check("opening a connection")  # a stop shuts the socket: the error it leaves is the stop's
        if last_error is not None and not isinstance(last_error, TimeoutError):
            raise last_error
        raise TimeoutError("no address of %s:%d accepted a connection within %gs"
                           % (peer.host, peer.port, deadline.seconds))
    if proxy is not None and ssl_context is not None:
        try:
            proxy.tunnel(sock, target, stop, deadline)
        except BaseException as exc:
            stop.untrack(sock)
            sock.close()
            if isinstance(exc, OSError):
                stop.check("the proxy's CONNECT")  # the end of file a stop's shutdown leaves is the stop's
            raise
    if ssl_context is not None:
        stop.untrack(sock)
        try:
            # wrap_socket() detaches `sock`; from here only `tls` owns the fd.
            tls = ssl_context.wrap_socket(sock, server_hostname=target.host,
                                          do_handshake_on_connect=False, session=tls_session)
        except BaseException:
            sock.close()
            raise
        stop.track(tls)
        try:
            _handshake(tls, stop, deadline)
        except BaseException as exc:
            stop.untrack(tls)
            tls.close()
            if isinstance(exc, OSError):
                stop.check("the TLS handshake")  # the error a stop's shutdown leaves is the stop's
            raise
        sock = tls
    try:
        stop.check("sending a request")
    except StopRequested:
        stop.untrack(sock)
        sock.close()
        raise
    return sock


def close_quietly(sock):
    try:
        sock.close()
    except OSError:
        pass


class HttpExchange(object):
    """One request and its response, on a connection a stop can end.

        exchange = HttpExchange(url, stop, timeout_s=25, connect_deadline_s=10)
        exchange.open()          # lookup + connect + TLS; raises before any byte is sent
        exchange.conn.putrequest("GET", exchange.target.request_target)
        ...
        exchange.close()         # always

    `conn` is an http.client connection whose socket is ours: http.client
    drops its own reference once a response exists, we keep `sock` on the
    ledger until close().  `budget`, an outer Deadline, tightens the connect
    deadline and caps the socket timeout; enforcing it while blocked is the
    caller's Watchdog's job (its `on_expiry`: cut()).

    `proxies` (a Proxies of the proxy block) opts this exchange into
    proxies: `proxy` is then the one NO_PROXY leaves for this URL, or None.
    Through a proxy, an http URL's `target.request_target` is absolute-form,
    so callers send it unchanged.  _connect() and _release() are where a
    subclass takes and keeps connections (the keepalive block's KeptExchange).
    """

    def __init__(self, url, stop, timeout_s, connect_deadline_s, budget=None, ssl_context_factory=None,
                 proxies=None):
        self.target = split_url(url)
        self.stop = stop
        self.timeout_s = timeout_s
        self.connect_deadline_s = connect_deadline_s
        self.budget = budget
        self.ssl_context_factory = ssl_context_factory or ssl.create_default_context
        self.proxy = proxies.pick(self.target) if proxies is not None else None
        if self.proxy is not None and self.target.scheme == "http":
            self.target = self.proxy.forward_target(self.target)
        self.sock = None
        self.conn = None
        self.was_cut = False

    def open(self):
        deadline = sooner(Deadline(self.connect_deadline_s), self.budget)
        context = self.ssl_context_factory() if self.target.scheme == "https" else None
        self.sock = self._connect(deadline, context)
        timeout = self.timeout_s
        if self.budget is not None:
            timeout = max(0.05, min(timeout, self.budget.remaining()))
        self.sock.settimeout(timeout)
        if context is not None:
            self.conn = http.client.HTTPSConnection(self.target.host, self.target.port,
                                                    timeout=timeout, context=context)
        elif self.proxy is not None:
            self.conn = self.proxy.forwarding_connection(self.target, timeout)
        else:
            self.conn = http.client.HTTPConnection(self.target.host, self.target.port, timeout=timeout)
        self.conn.sock = self.sock
        self.conn.auto_open = 0  # never let http.client open a connection behind our back
        self.conn.close = self._drop_socket  # nor close ours (after `Connection: close`): close() decides
        return self

    def _connect(self, deadline, context):
        return open_socket(self.target, self.stop, deadline, context, proxy=self.proxy)

    def _drop_socket(self):
        if self.conn is not None:
            self.conn.sock = None

    def cut(self):
        """End any blocked read or write now, from any thread (a watchdog's `on_expiry`)."""
        self.was_cut = True
        sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except (OSError, ValueError):
                pass

    def close(self):
        self._drop_socket()
        if self.sock is not None:
            self.stop.untrack(self.sock)
            self._release(self.sock)
            self.sock = None

    def _release(self, sock):
        close_quietly(sock)


def close_quietly(sock):
    try:
        sock.close()
    except OSError:
        pass
# ---- END BLOCK transport ----

# ---- BEGIN BLOCK proxy (nodes/blocks/proxy.py) ----
# proxy: the proxies an environment names, and the CONNECT tunnel and
# absolute-form forwarding the transport block uses through a Proxy's methods
# (tunnel, forward_target, forwarding_connection) when a node hands it one.
# Proxy credentials never appear in a message.
#
# The variables are read as urllib reads them (the upstream's ProxyHandler):
# a lowercase name wins over its uppercase form, an empty lowercase one turns
# the proxy off, and HTTP_PROXY is ignored when REQUEST_METHOD is set (a CGI
# script gets a client's "Proxy:" header as HTTP_PROXY, CVE-2016-1000110).
# NO_PROXY is matched as curl matches it: by whole domain labels, never by
# substring, and an address only by itself.

_PROXY_REPLY_MAX_BYTES = 65536  # a CONNECT reply's status line and headers; more is not a proxy talking
# The blank line that ends a reply's head: CRLF or a bare LF per line, as http.client reads it.
_PROXY_REPLY_END_RE = re.compile(b"\n\r?\n")


class Proxy(collections.namedtuple("Proxy", "host port authorization credentials")):
    """A proxy: where it is, the Proxy-Authorization value to send (None
    without credentials) and the credential strings a log must never show.
    Its repr() shows neither."""

    __slots__ = ()

    def __repr__(self):
        return "Proxy(host=%r, port=%r%s)" % (self.host, self.port,
                                              ", with credentials" if self.authorization else "")

    # The three hooks the transport block calls on the proxy it is given: it
    # names nothing of this block, so a node that never uses a proxy leaves
    # this block out and carries no proxy code.

    def tunnel(self, sock, target, stop, deadline):
        """open_socket(), for an https target: CONNECT through this proxy (_tunnel)."""
        _tunnel(sock, target, self, stop, deadline)

    def forward_target(self, target):
        """HttpExchange, for an http target: the absolute-form request target
        a forwarding proxy needs (the port left out when it is 80)."""
        origin = _authority(target.host, target.port, default_port=80)
        return target._replace(request_target="http://" + origin + target.request_target)

    def forwarding_connection(self, target, timeout):
        """HttpExchange, for an http target: an http.client connection to
        this proxy that sends its credentials with every request."""
        conn = _ForwardingConnection(target.host, target.port, timeout=timeout)
        conn.proxy_authorization = self.authorization
        return conn


class ProxyConfigError(ValueError):
    """A proxy variable that cannot be used; the message names it, never its value."""


def parse_proxy_url(url):
    """The Proxy of `[http://][user:password@]host[:port][/...]` (port 80 by default).

    As urllib reads a proxy variable: a value without a scheme is the
    proxy's authority (`proxy.corp:3128`, `user:pw@proxy:3128`), and what
    follows the authority (a path, `/` or more) is ignored.  A scheme other
    than http is refused: urllib sent its CONNECT, credentials included, in
    the clear to whatever listened there (a TLS or SOCKS port).  ValueError
    never quotes the URL, which may carry a password.  User and password are
    percent-decoded, as urllib does, before they go into the Basic credentials.
    """
    if not isinstance(url, str) or not url:
        raise ValueError("not a non-empty string")
    scheme, colon, rest = url.partition(":")
    if not (colon and scheme and "/" not in scheme and rest.startswith("/")):
        # urllib's reading: no `scheme:/`, so the value is [user:password@]host[:port] (or //host...)
        url = ("http:" if url.startswith("//") else "http://") + url
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() != "http":
        raise ValueError("only http:// proxies are supported")
    if _FORBIDDEN_IN_TARGET.intersection(parts.netloc):
        raise ValueError("whitespace or control characters in the proxy URL")
    host, port = host_and_port(parts)
    authorization, credentials = None, ()
    if parts.username is not None:
        user = urllib.parse.unquote(parts.username)
        password = urllib.parse.unquote(parts.password or "")
        token = base64.b64encode(("%s:%s" % (user, password)).encode("utf-8")).decode("ascii")
        authorization = "Basic " + token
        credentials = tuple(v for v in (parts.username, parts.password, user, password, token, authorization) if v)
    return Proxy(host, 80 if port is None else port, authorization, credentials)


def _proxy_variables(environ):
    """{"http"|"https"|"no": (variable name, value)}, by urllib's precedence."""
    found = {}
    for name, value in environ.items():  # first pass: any case
        if value and name.lower().endswith("_proxy"):
            found[name.lower()[:-6]] = (name, value)
    if "REQUEST_METHOD" in environ:  # a CGI script: HTTP_PROXY may come from a client
        found.pop("http", None)
    for name, value in environ.items():  # second pass: lowercase names win, empty ones unset
        if name.endswith("_proxy"):
            if value:
                found[name.lower()[:-6]] = (name, value)
            else:
                found.pop(name.lower()[:-6], None)
    return dict((k, v) for k, v in found.items() if k in ("http", "https", "no"))


def _ip_literal(host):
    """The packed address of an IPv4 or IPv6 literal, else None."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            return socket.inet_pton(family, host)
        except (OSError, ValueError):
            pass
    return None


def _no_proxy_entry(item):
    """(name, port or None, packed address or None) of one NO_PROXY entry; None if unusable."""
    port = None
    if item.startswith("["):  # [v6] or [v6]:port
        host, bracket, rest = item[1:].partition("]")
        if not bracket or (rest and not (rest[:1] == ":" and rest[1:].isdigit())):
            return None
        port = int(rest[1:]) if rest else None
    elif item.count(":") == 1:  # name:port or v4:port; more colons is a bare IPv6 address
        host, _, text = item.partition(":")
        if not text.isdigit():
            return None
        port = int(text)
    else:
        host = item
    host = host.strip(".")  # ".example.com" is "example.com"; a trailing dot is the root
    if not host or (port is not None and port > 65535):
        return None
    return host, port, _ip_literal(host)


class Proxies(object):
    """The proxies an environment names, and its NO_PROXY list.

        proxies = Proxies.from_environ(os.environ)   # ProxyConfigError names a bad variable
        proxy = proxies.pick(split_url(url))         # a Proxy, or None: connect directly

    NO_PROXY: entries separated by commas or spaces, compared without regard
    to case.  `*` alone means no proxy for any host.  A name matches itself
    and every name under it (`example.com` and `.example.com` both match
    `a.example.com`, neither matches `badexample.com`); an IP address matches
    only that address (IPv6 bracketed or not); `:port` limits an entry to
    that port.
    """

    def __init__(self, http=None, https=None, no_proxy=""):
        self.by_scheme = {"http": http, "https": https}
        text = (no_proxy or "").strip()
        self.bypass_all = text == "*"
        entries = (_no_proxy_entry(item) for item in text.lower().replace(",", " ").split())
        self.no_proxy = tuple(entry for entry in entries if entry is not None)

    @classmethod
    def from_environ(cls, environ):
        found = _proxy_variables(environ)
        chosen = {}
        for scheme in ("http", "https"):
            if scheme in found:
                name, value = found[scheme]
                try:
                    chosen[scheme] = parse_proxy_url(value)
                except ValueError as exc:
                    raise ProxyConfigError("%s is not a usable http://[user:password@]host[:port] proxy URL (%s)"
                                           % (name, exc)) from None
        return cls(chosen.get("http"), chosen.get("https"), found.get("no", ("", ""))[1])

    def bypass(self, host, port):
        """True when NO_PROXY says `host`:`port` is reached directly."""
        if self.bypass_all:
            return True
        host = host.lower().rstrip(".")
        address = _ip_literal(host)
        for name, only_port, entry_address in self.no_proxy:
            if only_port is not None and only_port != port:
                continue
            if address is not None or entry_address is not None:
                if address == entry_address:  # addresses: only the same address
                    return True
            elif host == name or host.endswith("." + name):  # names: whole labels, never a substring
                return True
        return False

    def pick(self, target):
        """The Proxy for a Target, or None to connect directly."""
        proxy = self.by_scheme.get(target.scheme)
        if proxy is None or self.bypass(target.host, target.port):
            return None
        return proxy

    def secrets(self):
        """Every credential string of the proxies, for a node's redaction."""
        return [value for proxy in self.by_scheme.values() if proxy is not None for value in proxy.credentials]


def _authority(host, port, default_port=None):
    """host:port as a request target or Host header writes it: an IPv6
    address in brackets, the port left out when it is `default_port`."""
    shown = "[%s]" % host if ":" in host else host
    return shown if port == default_port else "%s:%d" % (shown, port)


def _tunnel(sock, target, proxy, stop, deadline):
    """CONNECT `target` through the proxy on `sock`; return once it said 2xx.

    Every send and receive waits in wait_ready, so the deadline and a stop
    end it at once, like the rest of the connect.  Only the reply's head is
    consumed (peeked first), never a byte of what the origin sends next.
    A refusal raises ProxyRefused naming the status, never the credentials.
    """
    authority = _authority(target.host, target.port)
    head = "CONNECT %s HTTP/1.1\r\nHost: %s\r\n" % (authority, authority)
    if proxy.authorization is not None:
        head += "Proxy-Authorization: %s\r\n" % proxy.authorization
    pending = memoryview((head + "\r\n").encode("ascii"))  # a non-ASCII host fails here, as in http.client
    while pending:
        wait_ready(stop, [], [sock], deadline, "the proxy's CONNECT")
        try:
            pending = pending[sock.send(pending):]
        except (BlockingIOError, InterruptedError):
            pass
    reply = bytearray()
    while True:
        wait_ready(stop, [sock], [], deadline, "the proxy's CONNECT")
        try:
            peeked = sock.recv(4096, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            continue
        if not peeked:
            raise ConnectionError("the proxy closed the connection before answering CONNECT")
        tail = bytes(reply[-2:])
        end = _PROXY_REPLY_END_RE.search(tail + peeked)
        wanted = len(peeked) if end is None else end.end() - len(tail)
        while wanted:  # the peeked bytes are there: this never waits
            got = sock.recv(wanted)
            if not got:
                raise ConnectionError("the proxy closed the connection before answering CONNECT")
            reply += got
            wanted -= len(got)
        if end is not None:
            break
        if len(reply) > _PROXY_REPLY_MAX_BYTES:
            raise ProxyRefused(None, "a reply head longer than %d bytes" % _PROXY_REPLY_MAX_BYTES, authority)
    # The status line as http.client reads it: words split on any whitespace, any HTTP/ version
    version, code, reason = (bytes(reply).split(b"\n", 1)[0].decode("latin-1").split(None, 2) + ["", ""])[:3]
    if not version.startswith("HTTP/") or len(code) != 3 or not code.isdigit():
        raise ProxyRefused(None, "a reply that is not HTTP", authority)
    if not 200 <= int(code) < 300:
        raise ProxyRefused(int(code), reason, authority)


class ProxyRefused(OSError):
    """The proxy did not open the tunnel: `status` is its answer's code (None
    when it did not speak HTTP).  An OSError, like every other way a
    connection fails to be made."""

    def __init__(self, status, reason, authority):
        shown = "".join(c for c in str(reason) if " " <= c <= "~")[:64].strip()
        what = "HTTP %d %s" % (status, shown) if status is not None else shown
        OSError.__init__(self, "the proxy refused CONNECT %s: %s" % (authority, what.strip()))
        self.status = status


class _ForwardingConnection(http.client.HTTPConnection):
    """An http.client connection to a proxy that forwards plain-HTTP requests:
    the request target is absolute-form (http.client then sends the origin's
    Host), and every request carries the proxy's credentials, if any."""

    proxy_authorization = None

    def putrequest(self, method, url, skip_host=False, skip_accept_encoding=False):
        http.client.HTTPConnection.putrequest(self, method, url, skip_host, skip_accept_encoding)
        if self.proxy_authorization is not None:
            self.putheader("Proxy-Authorization", self.proxy_authorization)
# ---- END BLOCK proxy ----

# ---- BEGIN BLOCK atomic_write (nodes/blocks/atomic_write.py) ----
# atomic_write: a file appears whole under its final name or not at all, and
# no temporary name survives a failure.


def atomic_write(path, content, mode=0o600, durable=True):
    """Write `path` through a temporary name in the same directory.

    `content` is bytes, or a callable that receives the open file descriptor
    and writes to it.  A reader sees the old file or all of the new one, never
    a torn one; the temporary name is removed on every failure, including a
    KeyboardInterrupt or a stop raised by the callable.  With `durable` the
    data is fsynced before os.replace() and the directory entry after it (best
    effort), so a power loss leaves one or the other too; without, neither
    (for a file nothing read after a restart depends on).
    """
    directory, name = os.path.split(os.path.abspath(path))
    temporary = os.path.join(directory, ".%s.%s.partial" % (name, secrets.token_hex(6)))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temporary, flags, mode)
    try:
        try:
            if callable(content):
                content(fd)
            else:
                view = memoryview(content)
                while view:
                    view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    if not durable:
        return
    try:
        dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass  # some filesystems refuse to sync a directory; the rename stands
# ---- END BLOCK atomic_write ----

# ---- BEGIN BLOCK process (nodes/blocks/process.py) ----
# process: what a signal handler and every exit path share.  One Process per
# process (PROCESS, made at import, opened by main()): the wake pipe a handler
# writes a byte to, the buffers holding a secret (wiped on every exit path,
# the hard one too), and the final line, written once and whole with the exit
# code fixed beside it even when a second signal lands meanwhile.

HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def write_all(fd, data):
    """Write every byte with os.write: no buffer a signal handler could re-enter."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass  # a closed stream must not turn into a second failure


def install_handlers(on_signal, signals=HANDLED_SIGNALS):
    """Before the first request: as PID 1 a signal with no handler is dropped, so only SIGKILL ends the node."""
    for signum in signals:
        signal.signal(signum, on_signal)


class Process(object):
    """Wake pipe, secret registry and the once-only final line of one process."""

    def __init__(self):
        self.wake_r = self.wake_w = None  # the wake pipe; a select() includes wake_r to notice a signal
        self.signals = 0  # stop signals received (a node's handler counts them)
        self.secrets = []  # bytearrays holding a token, a capability or a raw answer
        self.exit_code = None  # fixed by settle(), once
        self.final_written = False
        self.settling = False  # settle() is writing the final line: a hard exit waits for it
        self.exit_pending = False  # a hard exit asked for meanwhile, taken right after
        self.before_exit = None  # the node's last act before a hard exit (kill a child's group)

    def open_wake(self, wakeup_fd=False):
        """Make the wake pipe (from main()).  wakeup_fd: the interpreter writes to it on any handled signal,
        for a main thread asleep in select() while the kernel delivered the signal to another thread."""
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        if wakeup_fd:
            signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        return self.wake_r

    def wake(self):
        if self.wake_w is not None:
            try:
                os.write(self.wake_w, b"\0")
            except OSError:
                pass  # a full pipe already wakes its reader

    def drain_wake(self):
        try:
            while self.wake_r is not None and os.read(self.wake_r, 512):
                pass
        except OSError:
            pass  # empty: the next select() waits again

    def hold_secret(self, buffer):
        self.secrets.append(buffer)
        return buffer

    def wipe(self, buffer):
        """Zero a secret buffer in place.  Best effort: a str copy cannot be wiped, so only raw buffers are kept."""
        if buffer is not None:
            buffer[:] = bytes(len(buffer))
            self.secrets[:] = [held for held in self.secrets if held is not buffer]

    def wipe_all(self):
        for buffer in list(self.secrets):
            self.wipe(buffer)

    def settle(self, fd, line, exit_code, signals=HANDLED_SIGNALS):
        """Write the final line (None: none) and fix the exit code; the first call wins; returns the code.

        Blocking the signals here does not keep a handler out (the kernel may
        pick another thread, and Python runs the handler here all the same), so
        a handler that wants a hard exit sees `settling` and only asks for it.
        """
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
        self.settling = True
        try:
            if self.exit_code is None:
                if line is not None:
                    write_all(fd, line)
                    self.final_written = True
                self.exit_code = exit_code
        finally:
            self.settling = False
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        if self.exit_pending:
            self.hard_exit(fd, None, self.exit_code)
        return self.exit_code

    def exit_now(self, fd, line, exit_code):
        """A hard exit from a handler: now, or right after the final line being written."""
        if self.settling:
            self.exit_pending = True
        else:
            self.hard_exit(fd, line, exit_code)

    def hard_exit(self, fd, line, exit_code):
        """The node's last act, every secret wiped, the final line once (a settled code stands), then _exit."""
        try:
            if self.before_exit is not None:
                self.before_exit()
        except Exception:
            pass  # the exit itself must still happen
        self.wipe_all()
        if self.exit_code is None:
            if line is not None and not self.final_written:
                write_all(fd, line)
            self.exit_code = exit_code
        os._exit(self.exit_code)
# ---- END BLOCK process ----

# Made at import, after section 9 defines their classes; they open nothing (start_process() does).
STOP = Stop(PROGRAM)  # the process's one stop flag and in-flight ledger
PROCESS = Process()  # the exit code, fixed once by finish()

if __name__ == "__main__":
    sys.exit(main())
