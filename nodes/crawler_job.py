#!/usr/bin/env python3
"""crawler_job.py: the reference crawler job (one crawler session, start to finish).

Mints a workload-identity token, redeems the session's single-use bootstrap
from the broker, fetches one public source under the egress policy into a
private spool, runs the normaliser (this same file, in child mode) in a
networkless seccomp sandbox, checks that the child's result restates exactly
what this process fetched, and stores it with one create-only signed PUT.

Run it:
    python3 nodes/crawler_job.py --help
    python3 nodes/crawler_job.py --crawler-session-id <uuid>   (environment: see --help)
Judge it against its contract:
    python3 -m conformance crawler nodes/crawler_job.py

Contract: contract/crawler.md, version 4.  A line that exists for a clause carries
its ID and what breaks without it (grep -n CRAWLER-STOP-3: clause, code, checks):
    ARGV      the upstream's argparse lines, usage errors that echo nothing, argv scrubbed
    CONFIG    start-up checks in the contract's order; no proxy; timeouts only lowered
    SECRET    not dumpable; tokens in bytearrays wiped after use; only the code leaves
    IDENTITY  a fresh metadata token per broker call, compact JWS only, bounded read
    BOOT CAP  one :redeem, a bounded strict answer, the capability's nine rules
    FAIL      the :fail report: three codes, one shape, one best-effort attempt
    FETCH     egress policy, resolve once, connect to the checked address, redirects by hand
    STREAM    source and result spooled in unlinked 0600 files under TMPDIR
    CHILD     what runs, its environment, the sandbox, bounded output, deadline, codes
    NORM      the reference normaliser (child mode): CSV or JSON lines to canonical rows
    RESULT    the child's result bound to what this process fetched, its summary to its content
    UPLOAD    the PUT on the wire, once, never with an expired URL
    REPORT    stderr-only, :fail or bundle; one status line; exit 0, 1, 2 or 143
    STOP      SIGTERM/SIGINT end every phase at once; a cancelled bundle; a second stop ends it
    PEER      read as the upstream reads: unknown request members, any JSON spelling, argparse forms

Layout (`grep -n '^# [0-9]' nodes/crawler_job.py` prints it; every node has banners 1-9):
    1 Imports  2 Configuration [EDIT]  (program name, chunk size, deployment constants)
    3 Your work [EDIT]             normalize(): the source's column names and rows
    ---- Below this line: contract machinery [KEEP] ----
    4 Limits  5 Errors             every number with its unit; codes, where each goes, outcomes
    6 Protocol: 6.1 process and output (handlers, status line), 6.2 documents and
      forms, 6.3 configuration (argv, environment), 6.4 identity (:redeem, :fail),
      6.5 HTTP exchanges, 6.6 state on disk (spools), 6.7 child framing (the
      normaliser's child mode), 6.8 progress (not used); then in run order 6.9 the
      bootstrap documents, 6.10 fetch, 6.11 sandbox, 6.12 the child, 6.13 result
      binding, 6.14 upload
    7 Lifecycle                    one Run, bootstrap to outcome; finish(): the status line
    8 main()                       child mode, configuration, handlers, run, exit status
    9 Shared blocks                copies of nodes/blocks/*.py: edit those instead

Edit sections 2 and 3, keep the rest.  Section 9 is rewritten from
nodes/blocks/ by `python3 -m conformance.sync`, and `--check` reports drift.
Nothing happens on import: configuration, handlers and files wait for main().
"""

# 1 Imports ====================================================================
# CRAWLER-NODE-1: standard library only, and nothing newer than the Python 3.9 grammar.

import argparse
import base64
import collections
import contextlib
import csv
import ctypes
import errno
import functools
import hashlib
import io
import ipaddress
import json
import math
import os
import re
import resource
import select
import signal
import socket
import struct
import sys
import threading
import time
import urllib.parse
import uuid


def job_imports():
    """Import what only a run past its configuration uses; lifecycle() calls it first.

    A refused configuration (CRAWLER-CONFIG-*) and the normaliser child (CRAWLER-CHILD-1) never
    need these, and importing them at the top cost every start about 10 ms of CPU (http.client
    with its email parsers, ssl, subprocess).  Each is bound as a global here, so the rest of
    the file names them as if imported above.
    """
    global datetime, http, selectors, ssl, subprocess, tempfile
    import datetime
    import http.client
    import selectors
    import ssl
    import subprocess
    import tempfile

# 2 Configuration [EDIT] =======================================================

PROGRAM = "crawler_job.py"  # the name the usage text shows
IO_CHUNK_BYTES = 64 * 1024  # unit of every streaming read and write: source, child pipes, PUT body

# Deployment constants (contract/crawler.md, D21).  The upstream job imports
# these from its platform's package without defining them, and compares what
# the broker and the child send with them by exact equality: if one differs
# from your platform's value, every real capability (or request, or child
# failure) is refused, or the store files what you send under a name nobody
# reads.  These are the contract's values.  Change them here to your
# platform's, and judge the node with the same values:
#   python3 -m conformance crawler my_node.py --deploy RESULT_MEDIA_TYPE=...
MAX_CRAWLER_RESULT_BYTES = 8 * 1024 * 1024  # the child's stdout and the stored object
# CONTRACT: fixed per release: it is signed into x-goog-content-length-range (CRAWLER-CAP-7).
RESULT_MEDIA_TYPE = "application/vnd.mostlyright.crawler-result+json"  # Content-Type of every PUT (CAP-7)
CHILD_ATTESTATION_ENV = "MOSTLYRIGHT_CRAWLER_EGRESS_POLICY_ATTESTATION"  # the child's one variable (CHILD-2)
CHILD_CODES = frozenset((  # CRAWLER-CHILD-8: the only codes a child may name; each a bundle code (section 5)
    "CRAWLER_NORMALIZATION_FAILED", "CRAWLER_SOURCE_ENCODING_UNSUPPORTED", "CRAWLER_LIMIT_EXCEEDED"))
REQUEST_SCHEMA = "mostlyright-crawler-request.v3"  # the crawl request's schema_version (CRAWLER-BOOT-5)
RESULT_SCHEMA = "mostlyright-crawler-result.v3"  # the result's schema_version (CRAWLER-RESULT-2)
FAILURE_SCHEMA = "mostlyright-crawler-failure.v1"  # the failure bundle's schema_version (CRAWLER-REPORT-2)
MAX_CRAWLER_REQUEST_BYTES = 64 * 1024  # the crawl request's canonical encoding (CRAWLER-BOOT-5)
# CONTRACT: the :redeem answer's bound is this plus 48 KiB, as upstream (CRAWLER-BOOT-3).

# 3 Your work [EDIT] ===========================================================
# +- The frame -----------------------------------------------------------------
# | Called, in order: normalize(data_format, source), once, in the child
# |     (section 6.7), read to its end or to the exception it raises.
# | Your code may use: the names below, section 1's modules (the child never
# |     runs job_imports(): import what you add there), and the source stream.
# | Uses from below KEEP: CrawlerError, CRAWLER_NORMALIZATION_FAILED,
# |     CRAWLER_SOURCE_ENCODING_UNSUPPORTED, parse_lenient, JsonError
# | To refuse work: raise CrawlerError(code, detail), code one of CHILD_CODES
# |     (section 2); anything else raised is CRAWLER_NORMALIZATION_FAILED.
# +-----------------------------------------------------------------------------
# The normaliser: what the child makes of the fetched bytes (CRAWLER-NORM-*).
# normalize() is all of it: replace it and the readers below to read the
# source your way.  The framing in section 6.7 turns what it yields into the
# result (JSON lines, the request's limits, the digests: CRAWLER-CHILD-11,
# CRAWLER-RESULT-10).  A deployment can also pin another program instead
# (MOSTLYRIGHT_CRAWLER_CHILD).

_UTF8_BOM = b"\xef\xbb\xbf"


def normalize(data_format, source):
    """[EDIT] Yield the column names (a list of 1 or more non-empty strings), then each row's values.

    `data_format` is the request's query.data_format ("csv" or "jsonl");
    `source` a binary stream of exactly the fetched bytes.  A row is a list
    of one value per column, each a str, an int, a bool or None.  Yield as
    you read: the framing holds one row and the content, never the whole
    source (CRAWLER-NORM-3).
    """
    records = read_csv(source) if data_format == "csv" else read_jsonl(source)
    try:
        yield from records
    except UnicodeDecodeError:
        # CRAWLER-NORM-1: invalid UTF-8 is the source's encoding, not a parse failure: its own code
        raise CrawlerError(CRAWLER_SOURCE_ENCODING_UNSUPPORTED, "not UTF-8") from None
    except csv.Error:
        # CRAWLER-NORM-1: what csv will not read (a field over its size limit, say) is a parse failure
        raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "not CSV the csv module reads") from None


def read_csv(source):
    """Column names, then each record's fields (CRAWLER-NORM-1: RFC 4180, default dialect)."""
    text = io.TextIOWrapper(source, encoding="utf-8", errors="strict", newline="")

    def lines():
        first = True
        for line in text:
            if first and line.startswith("\ufeff"):  # CRAWLER-NORM-1: a BOM is refused, not skipped
                raise CrawlerError(CRAWLER_SOURCE_ENCODING_UNSUPPORTED, "a byte-order mark")
            first = False
            yield line

    reader = csv.reader(lines())  # newline="" lets csv see quoted line breaks as they are
    header = next(reader, None)
    if not header or any(name == "" for name in header) or len(set(header)) != len(header):
        # CRAWLER-NORM-1: no header, or a blank or repeated name: a column no consumer could address
        raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "no usable header record")
    yield header
    for record in reader:
        if len(record) != len(header):  # CRAWLER-NORM-1: every record has exactly that many fields
            raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "a record with another field count")
        yield record


def read_jsonl(source):
    """Column names (the first object's keys, sorted), then each object's values in that order."""
    columns = None
    first = True
    while True:
        line = source.readline()  # bytes: only b"\n" ends a line, a lone \r stays in it
        if not line:
            break
        if first and line.startswith(_UTF8_BOM):  # CRAWLER-NORM-1: else the JSON parser calls a BOM a parse failure
            raise CrawlerError(CRAWLER_SOURCE_ENCODING_UNSUPPORTED, "a byte-order mark")
        first = False
        if line.endswith(b"\n"):
            line = line[:-1]
        if line.endswith(b"\r"):  # CRAWLER-NORM-1: one trailing \r is removed
            line = line[:-1]
        if not line:  # CRAWLER-NORM-1: an empty line is skipped
            continue
        line.decode("utf-8")  # CRAWLER-NORM-1: invalid UTF-8 is an encoding failure, not a parse failure
        try:
            record = parse_lenient(line)
        except JsonError:
            raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "a line that is not a JSON object") from None
        if not isinstance(record, dict) or not all(
                value is None or isinstance(value, (str, int)) for value in record.values()):
            # CRAWLER-NORM-1: a nested value or a line that is not an object has no row-line form (CRAWLER-RESULT-10)
            raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "a line that is not a flat object")
        if columns is None:
            columns = sorted(record)  # CRAWLER-NORM-1: the first object's keys, sorted
            if not columns or "" in columns:  # a result needs 1+ non-empty names (CRAWLER-RESULT-7)
                raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "no usable column names")
            yield columns
        elif len(record) != len(columns) or any(name not in record for name in columns):
            # CRAWLER-NORM-1: a row with other keys would not line up with the header line's columns
            raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "an object with other keys")
        yield [record[name] for name in columns]


# ---- Below this line: contract machinery [KEEP] ----

# 4 Limits =====================================================================
# Every number the contract fixes, with its unit and its reason: the bounds keep
# a hostile broker, source, store or child from making the node read, buffer or
# wait without end; a `# CONTRACT:` line says which clause breaks when one changes.

KiB = 1024

MAX_METADATA_IDENTITY_TOKEN_BYTES = 16 * KiB  # the metadata server's answer (CRAWLER-IDENTITY-4)
MAX_UPLOAD_CAPABILITY_BYTES = 32 * KiB  # only a term of the next bound
# CRAWLER-BOOT-3: the largest valid answer fits; a bigger one is refused, not buffered
MAX_BOOTSTRAP_RESPONSE_BYTES = MAX_CRAWLER_REQUEST_BYTES + MAX_UPLOAD_CAPABILITY_BYTES + 16 * KiB
MAX_CHILD_STDERR_BYTES = 512  # an admissible child failure line (CRAWLER-CHILD-8)
MAX_UPLOAD_RESPONSE_BYTES = 64 * KiB  # the store's answer to a PUT (CRAWLER-UPLOAD-3)
# MAX_JSON_DEPTH (32) and MAX_SAFE_INTEGER (2^53 - 1) come with the strict_json block (section 9).
# Child mode: the normalisation input's header line: the request, ETag and Last-Modified (64 KiB
# each at most, http.client's header line limit, and up to 6 times that once JSON escapes a control
# byte as \u0001), two URLs: the request and about 0.85 MiB at the very worst.
MAX_INPUT_HEADER_BYTES = MAX_CRAWLER_REQUEST_BYTES + 960 * KiB

BOOTSTRAP_TIMEOUT_S = 10.0  # elapsed, each metadata, :redeem and :fail exchange, whole
FETCH_TIMEOUT_S = 300.0  # elapsed, the whole source fetch, every hop
CHILD_TIMEOUT_S = 1800.0  # elapsed, the normaliser's run
UPLOAD_TIMEOUT_S = 600.0  # elapsed, each PUT from connect to the end of the answer
# CONTRACT: the four above can only be lowered, by environment (CRAWLER-CONFIG-6).
UPLOAD_RESERVE_S = 5.0  # upload window kept free for the final PUT (CRAWLER-FETCH-7, CRAWLER-CHILD-7)
UPLOAD_MIN_WINDOW_S = 1.0  # a PUT is not presented with less window than this (CRAWLER-UPLOAD-5)
CLOCK_SKEW_S = 300.0  # how far in the future X-Goog-Date may lie (CRAWLER-CAP-8)
MAX_URL_EXPIRES_S = 2100  # X-Goog-Expires, 1..2100 (CRAWLER-CAP-6)
CANCEL_GRACE_S = 8.0  # after a stop, time allowed for the failure bundle (CRAWLER-STOP-3, -5)
# CONTRACT: raised past a typical 10 s orchestrator grace, the SIGKILL comes before the status line.
HELPER_THREAD_JOIN_S = 1.0  # wait for finished lookup/watchdog threads before forking the child
CHILD_EXIT_POLL_S = 0.05  # how often a child that closed its pipes is checked for exit
CHILD_REAP_WAIT_S = 5.0  # wait for a SIGKILLed child to be reaped (it cannot refuse)


# 5 Errors =====================================================================
# The contract's codes, where each one goes (CRAWLER-REPORT-1) and the exit
# statuses: a code sent to the wrong place reaches nobody, or tells the broker
# of a failure it cannot act on.  An error's text is its code alone, so no URL,
# token or child output can leak into a status line, a bundle or a :fail body
# (CRAWLER-REPORT-6).

CRAWLER_RESULTS_BUCKET_REQUIRED = "CRAWLER_RESULTS_BUCKET_REQUIRED"
CRAWLER_PROCESS_HARDENING_UNAVAILABLE = "CRAWLER_PROCESS_HARDENING_UNAVAILABLE"
CRAWLER_JOB_ARGUMENT_INVALID = "CRAWLER_JOB_ARGUMENT_INVALID"
CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID = "CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID"
CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE = "CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE"
CRAWLER_UPLOAD_CAPABILITY_INVALID = "CRAWLER_UPLOAD_CAPABILITY_INVALID"
CRAWLER_UPLOAD_CAPABILITY_EXPIRED = "CRAWLER_UPLOAD_CAPABILITY_EXPIRED"
CRAWLER_UPLOAD_FAILED = "CRAWLER_UPLOAD_FAILED"
CRAWLER_BOOTSTRAP_REDEMPTION_FAILED = "CRAWLER_BOOTSTRAP_REDEMPTION_FAILED"
CRAWLER_BOOTSTRAP_RESPONSE_INVALID = "CRAWLER_BOOTSTRAP_RESPONSE_INVALID"
CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE = "CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE"
CRAWLER_EGRESS_POLICY_MISMATCH = "CRAWLER_EGRESS_POLICY_MISMATCH"
CRAWLER_SOURCE_URL_INVALID = "CRAWLER_SOURCE_URL_INVALID"
CRAWLER_EGRESS_DENIED = "CRAWLER_EGRESS_DENIED"
CRAWLER_SOURCE_REDIRECT_DENIED = "CRAWLER_SOURCE_REDIRECT_DENIED"
CRAWLER_SOURCE_HTTP_STATUS = "CRAWLER_SOURCE_HTTP_STATUS"
CRAWLER_SOURCE_ENCODING_UNSUPPORTED = "CRAWLER_SOURCE_ENCODING_UNSUPPORTED"
CRAWLER_SOURCE_TOO_LARGE = "CRAWLER_SOURCE_TOO_LARGE"
CRAWLER_SOURCE_TIMEOUT = "CRAWLER_SOURCE_TIMEOUT"
CRAWLER_SOURCE_UNAVAILABLE = "CRAWLER_SOURCE_UNAVAILABLE"
CRAWLER_EXECUTABLE_UNAVAILABLE = "CRAWLER_EXECUTABLE_UNAVAILABLE"
CRAWLER_SANDBOX_UNAVAILABLE = "CRAWLER_SANDBOX_UNAVAILABLE"
CRAWLER_CHILD_FAILED = "CRAWLER_CHILD_FAILED"
CRAWLER_CHILD_INVALID = "CRAWLER_CHILD_INVALID"
CRAWLER_CHILD_TIMEOUT = "CRAWLER_CHILD_TIMEOUT"
CRAWLER_NORMALIZATION_FAILED = "CRAWLER_NORMALIZATION_FAILED"
CRAWLER_LIMIT_EXCEEDED = "CRAWLER_LIMIT_EXCEEDED"
CRAWLER_UPLOAD_WINDOW_INSUFFICIENT = "CRAWLER_UPLOAD_WINDOW_INSUFFICIENT"
CRAWLER_CANCELLED = "CRAWLER_CANCELLED"
CRAWLER_JOB_FAILED = "CRAWLER_JOB_FAILED"

STDERR_ONLY = "stderr-only"  # the status line and nothing else
FAIL_ROUTE = ":fail"  # a best-effort POST to the broker, then the status line
BUNDLE = "bundle"  # a failure bundle PUT through the capability, then the status line

# CRAWLER-REPORT-1: where each code goes.  A code not in this table is never
# produced.  CANCELLED and JOB_FAILED go in a bundle once the capability
# exists and to stderr only before it (there is nowhere else, and FAIL-1 keeps
# :fail closed to its three codes).
REPORT_PLACE = dict(
    [(code, STDERR_ONLY) for code in (
        CRAWLER_RESULTS_BUCKET_REQUIRED, CRAWLER_PROCESS_HARDENING_UNAVAILABLE, CRAWLER_JOB_ARGUMENT_INVALID,
        CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID, CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE,
        CRAWLER_UPLOAD_CAPABILITY_INVALID, CRAWLER_UPLOAD_CAPABILITY_EXPIRED, CRAWLER_UPLOAD_FAILED)]
    + [(code, FAIL_ROUTE) for code in (
        CRAWLER_BOOTSTRAP_REDEMPTION_FAILED, CRAWLER_BOOTSTRAP_RESPONSE_INVALID,
        CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE)]
    + [(code, BUNDLE) for code in (
        CRAWLER_EGRESS_POLICY_MISMATCH, CRAWLER_SOURCE_URL_INVALID, CRAWLER_EGRESS_DENIED,
        CRAWLER_SOURCE_REDIRECT_DENIED, CRAWLER_SOURCE_HTTP_STATUS, CRAWLER_SOURCE_ENCODING_UNSUPPORTED,
        CRAWLER_SOURCE_TOO_LARGE, CRAWLER_SOURCE_TIMEOUT, CRAWLER_SOURCE_UNAVAILABLE,
        CRAWLER_EXECUTABLE_UNAVAILABLE, CRAWLER_SANDBOX_UNAVAILABLE, CRAWLER_CHILD_FAILED,
        CRAWLER_CHILD_INVALID, CRAWLER_CHILD_TIMEOUT, CRAWLER_NORMALIZATION_FAILED, CRAWLER_LIMIT_EXCEEDED,
        CRAWLER_UPLOAD_WINDOW_INSUFFICIENT, CRAWLER_CANCELLED, CRAWLER_JOB_FAILED)]
)

STATUS_FAILED = "failed"  # nothing was delivered (or the code went only to :fail)
STATUS_REPORTED = "reported"  # a failure bundle is in the store

EXIT_OK = 0  # the result, or a failure bundle, is stored
EXIT_FAILED = 1  # any other failure
EXIT_USAGE = 2  # a usage error
EXIT_CANCELLED = 143  # a stop ended the run before the result was stored (128 + SIGTERM)

# How a run ended: the status line's status and the exit status follow from it.
STORED = "stored"  # the result is in the store: no line (CRAWLER-REPORT-3)
REPORTED = "reported"  # a failure bundle is in the store
FAILED = "failed"  # nothing was delivered (or the code went only to :fail)
STOPPED = "stopped"  # a stop ended the run; nothing delivered
STOPPED_REPORTED = "stopped-reported"  # a stop ended the run; its bundle is in the store
# CRAWLER-REPORT-2, CRAWLER-REPORT-4 (D13): a stop always reads as a stop, bundle stored or not: 0 would read as done.
EXIT_STATUS = {STORED: EXIT_OK, REPORTED: EXIT_OK, FAILED: EXIT_FAILED,
               STOPPED: EXIT_CANCELLED, STOPPED_REPORTED: EXIT_CANCELLED}
Outcome = collections.namedtuple("Outcome", "kind code")  # kind: one of the five above; code: the line's

# The outcome after a failure bundle, by (bundle stored, stop requested).
BUNDLE_OUTCOME = {
    (True, False): REPORTED,  # the terminal artifact is in the store
    (False, False): FAILED,
    (True, True): STOPPED_REPORTED,
    (False, True): STOPPED,
}

# CRAWLER-UPLOAD-4, CRAWLER-STOP-4 (D12): what follows a result PUT that did
# not end in a stored answer, by (whole body sent, stop requested).
AFTER_FAILED_RESULT_PUT = {
    (False, False): "upload-failed",  # UPLOAD-4: never retried, no bundle
    (True, False): "upload-failed",  # UPLOAD-4
    (False, True): "cancelled-bundle",  # STOP-4: a short body cannot be committed, so a bundle is safe
    (True, True): "cancelled-unknown",  # STOP-4: the result's fate is unknown; create-only makes a bundle meaningless
}


class CrawlerError(Exception):
    """Root of every failure the node reports; `code` is the contract's code.

    Its text is its code (section 5's reason); `detail`, a fixed phrase for a
    debugger, is never printed, sent or stored.  A stop is the stop block's
    StopRequested, reported as CRAWLER_CANCELLED whatever was cut.
    """

    def __init__(self, code, detail=""):
        super().__init__(code)
        self.code = code
        self.detail = detail


class UsageError(CrawlerError):
    """Refused at start-up: `text` (USAGE, or a check's status line) goes to stderr, never a token or a value."""

    def __init__(self, code, text, exit_code):
        super().__init__(code, "refused at start-up")
        self.text = text
        self.exit_code = exit_code


class PutFailed(CrawlerError):
    """A PUT that did not end in a stored answer; `body_sent` says whether the whole body went out."""

    def __init__(self, body_sent, detail="the PUT was not stored"):
        super().__init__(CRAWLER_UPLOAD_FAILED, detail)
        self.body_sent = body_sent


# 6 Protocol ===================================================================
# First what every later part uses (6.1 to 6.8, numbered alike in every node),
# then the crawler's own, in the order a run goes through them.

# 6.1 Process and output =======================================================
# The status line and the handlers.  STOP and PROCESS, the objects a handler
# reaches, are made at the end of the file, after section 9 defines them.
# PROCESS writes the status line once and whole, even when a second stop or the
# grace timer lands meanwhile: two lines, or half of one, is a run the
# orchestrator cannot read (CRAWLER-REPORT-3, CRAWLER-STOP-5); and it wipes the
# secret buffers on every exit path, the hard one too (CRAWLER-SECRET-3).

# SIGALRM is the grace timer (CRAWLER-STOP-5): blocked with the stop signals while the line is written.
STATUS_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGALRM)


def status_line(code, status=STATUS_FAILED):
    """CRAWLER-REPORT-3: the one line the orchestrator reads: canonical, the code and the status only."""
    return canonical_bytes({"code": code, "status": status}) + b"\n"


def start_process():
    """The handlers, before the first request: as PID 1 an unhandled SIGTERM is dropped (STOP-1).

    Only Stop's wakeup pipe is opened: every wait here selects on it; the process block's would wake nobody.
    """
    STOP.open()  # inside main()'s guard: even a process out of descriptors ends in one status line
    install_handlers(on_signal, signals=STATUS_SIGNALS)  # SIGINT too: Ctrl-C is a stop, never a traceback


def on_signal(signum, frame):
    """The first SIGTERM or SIGINT stops the work; a second, or the grace running out, ends the process.

    CRAWLER-STOP-5: the hard exit kills the child's group (Run.kill_child), wipes every secret buffer and
    writes the cancelled line unless a line is out; one being written is finished first, its code kept.
    """
    if signum == signal.SIGALRM or STOP.requested:  # CRAWLER-STOP-5: CANCEL_GRACE_S after the first, or a second
        PROCESS.exit_now(2, status_line(CRAWLER_CANCELLED), EXIT_CANCELLED)
        return
    STOP.handle(signum, frame)  # flag; shutdown() of every in-flight socket; wake every select
    signal.setitimer(signal.ITIMER_REAL, CANCEL_GRACE_S)  # CRAWLER-STOP-5: so does the grace running out


# 6.2 Documents and forms ======================================================
# The canonical JSON and its strict parsers (contract: Canonical JSON;
# CRAWLER-REPORT-5) are the strict_json block's, the forms the session node
# shares the forms block's (section 9, each saying why one spelling); these are
# the crawler's own (CRAWLER-CONFIG-2, -4, CRAWLER-CAP-3, -5, CRAWLER-FETCH-2).

_EXECUTION_RE = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
_SOURCE_ID_RE = re.compile(r"[a-z0-9._-]{1,128}")
_GOOG_DATE_RE = re.compile(r"([0-9]{4})([0-9]{2})([0-9]{2})T([0-9]{2})([0-9]{2})([0-9]{2})Z")
_SIGNATURE_RE = re.compile(r"(?:[0-9a-f]{2}){64,512}")
_TIMEOUT_RE = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def parse_goog_date(value):
    """Epoch seconds of an X-Goog-Date (YYYYMMDDTHHMMSSZ, a real time), else None."""
    match = _GOOG_DATE_RE.fullmatch(value)
    if match is None:
        return None
    try:
        moment = datetime.datetime(*[int(part) for part in match.groups()], tzinfo=datetime.timezone.utc)
    except ValueError:
        return None
    return moment.timestamp()


def check_base(value):
    """A bootstrap base (CRAWLER-CONFIG-2), or None."""
    parts = split_https(value)
    if parts is None:
        return None
    path = parts[2]
    if not path.startswith("/") or path.endswith("/"):  # CRAWLER-CONFIG-2: at least one segment
        return None
    # CRAWLER-CONFIG-2 (D2): a base ending in /.. would send :redeem to a path the base does not name
    if any(bad in path for bad in _FORBIDDEN_IN_PATH) or path.endswith(("/.", "/..")):
        return None
    return value


# 6.3 Configuration ============================================================
# Read once, at start-up, in the contract's order: a bad variable fails before
# any request, with the code of the first check it breaks and never its value
# (CRAWLER-CONFIG-7).  Proxy and credential variables are never read: the
# node's only authority is the identity token and the capability (CONFIG-8).

RESULTS_BUCKET_ENV = "MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET"
AUDIENCE_BASE_ENV = "MOSTLYRIGHT_CRAWLER_BOOTSTRAP_AUDIENCE_BASE"
URL_BASE_ENV = "MOSTLYRIGHT_CRAWLER_BOOTSTRAP_URL_BASE"
EXECUTION_ENV = "CLOUD_RUN_EXECUTION"
METADATA_HOST_ENV = "GCE_METADATA_HOST"  # google-auth's override convention
STORAGE_ORIGIN_ENV = "STORAGE_EMULATOR_HOST"  # the Cloud Storage clients' override convention
EGRESS_POLICY_ENV = "MOSTLYRIGHT_CRAWLER_EGRESS_POLICY"
CHILD_PIN_ENV = "MOSTLYRIGHT_CRAWLER_CHILD"
TIMEOUT_ENVS = (  # (field, variable, the constant it may only lower)
    ("bootstrap", "MOSTLYRIGHT_CRAWLER_BOOTSTRAP_TIMEOUT_S", BOOTSTRAP_TIMEOUT_S),
    ("fetch", "MOSTLYRIGHT_CRAWLER_FETCH_TIMEOUT_S", FETCH_TIMEOUT_S),
    ("child", "MOSTLYRIGHT_CRAWLER_CHILD_TIMEOUT_S", CHILD_TIMEOUT_S),
    ("upload", "MOSTLYRIGHT_CRAWLER_UPLOAD_TIMEOUT_S", UPLOAD_TIMEOUT_S),
)

DEFAULT_METADATA_HOST = "169.254.169.254"  # plain HTTP, link-local, by platform design
DEFAULT_STORAGE_ORIGIN = "https://storage.googleapis.com"
POLICY_SCHEMA = "mostlyright-egress-policy.v1"
POLICY_KEYS = frozenset(("schema_version", "allowed_hosts", "allowed_ports", "allowed_addresses", "max_redirects"))

Policy = collections.namedtuple("Policy", "hosts ports addresses max_redirects attestation")
# D18: the policy of a deployment that sets no MOSTLYRIGHT_CRAWLER_EGRESS_POLICY,
# as the upstream job's platform does: its egress rules live in the network the
# job runs in.  What no network rule can do for the node stays: an https URL
# naming a DNS name on the standard port, no non-public address (the metadata
# server is link-local and always reachable, so a source resolving there would
# be an SSRF to the identity endpoint) and a bounded redirect chain.  With no
# deployed document there is no attestation to compare (CRAWLER-FETCH-1).
NETWORK_POLICY = Policy(hosts=None, ports=frozenset((443,)), addresses=frozenset(), max_redirects=5,
                        attestation=None)
Timeouts = collections.namedtuple("Timeouts", "bootstrap fetch child upload")
Config = collections.namedtuple(
    "Config", "bucket session_id audience_base url_base execution metadata_host storage_origin "
              "policy timeouts child_pin tmpdir")

PR_SET_DUMPABLE = 4  # a prctl(2) option (include/uapi/linux/prctl.h); the sandbox's are in section 9


@functools.lru_cache(maxsize=None)
def load_libc():
    """libc's prctl through ctypes, or None off Linux (loaded once)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return libc


def disable_dumpability():
    """prctl(PR_SET_DUMPABLE, 0), before any secret exists (CRAWLER-SECRET-1).

    Not dumpable: no core file, /proc/<pid>/environ and /proc/<pid>/mem owned
    by root, no ptrace attach by another process of the same user.
    """
    libc = load_libc()
    if libc is None or libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise CrawlerError(CRAWLER_PROCESS_HARDENING_UNAVAILABLE, "prctl(PR_SET_DUMPABLE) failed")


def check_policy(value):
    """The deployed egress policy (CRAWLER-CONFIG-5), or None."""
    if not isinstance(value, str):
        return None
    try:
        data = value.encode("utf-8")  # strict: a variable holding undecodable bytes is refused
        document = parse_canonical(data)
    except (UnicodeEncodeError, JsonError):
        return None
    if not isinstance(document, dict) or set(document) != POLICY_KEYS or not same(document["schema_version"],
                                                                                    POLICY_SCHEMA):
        return None
    hosts, ports = document["allowed_hosts"], document["allowed_ports"]
    addresses, max_redirects = document["allowed_addresses"], document["max_redirects"]
    if not isinstance(hosts, list) or not 1 <= len(hosts) <= 64 or not all(is_dns_name(h) for h in hosts):
        return None
    if not isinstance(ports, list) or not 1 <= len(ports) <= 16 or not all(
            is_int(p) and 1 <= p <= 65535 for p in ports):
        return None
    if not isinstance(addresses, list) or len(addresses) > 16 or not all(isinstance(a, str) for a in addresses):
        return None
    try:
        allowed = frozenset(ipaddress.ip_address(a) for a in addresses)
    except ValueError:
        return None
    if any("%" in a or str(ipaddress.ip_address(a)) != a for a in addresses):  # CRAWLER-CONFIG-5: one spelling, no zone
        return None
    if not is_int(max_redirects) or not 0 <= max_redirects <= 10:
        return None
    return Policy(frozenset(hosts), frozenset(ports), allowed, max_redirects, sha256_hex(data))  # the attestation


def check_timeouts(environ):
    """The four timeouts, each lowered by its variable when set (CRAWLER-CONFIG-6), or None."""
    values = {}
    for field, variable, ceiling in TIMEOUT_ENVS:
        text = environ.get(variable)
        if text is None:
            values[field] = ceiling
            continue
        if not _TIMEOUT_RE.fullmatch(text):  # CRAWLER-CONFIG-6: decimal seconds, nothing else
            return None
        seconds = float(text)
        if not 0 < seconds <= ceiling:  # CRAWLER-CONFIG-6: above 0, never raised
            return None
        values[field] = seconds
    return Timeouts(**values)


def load_config(environ, session_id):
    """Every start-up check, in the order CRAWLER-CONFIG-7 fixes (process hardening second, so here too);
    the first failure names the code.  The one place the environment is read (CONFIG-8: see 6.3)."""
    def invalid(what):
        return CrawlerError(CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID, what)

    bucket = environ.get(RESULTS_BUCKET_ENV)
    if bucket is None or not _BUCKET_RE.fullmatch(bucket):  # CRAWLER-CONFIG-1: first, whatever else is wrong
        raise CrawlerError(CRAWLER_RESULTS_BUCKET_REQUIRED, "the results bucket is missing or malformed")
    disable_dumpability()  # CRAWLER-SECRET-1: right after the bucket, before any secret exists
    if not is_canonical_uuid(session_id):  # CRAWLER-ARGV-2: pasted into every route: only the one UUID spelling
        raise CrawlerError(CRAWLER_JOB_ARGUMENT_INVALID, "the session id is not a canonical UUID")
    audience_base = check_base(environ.get(AUDIENCE_BASE_ENV))  # CRAWLER-CONFIG-2: the audience base first
    if audience_base is None:
        raise invalid("the audience base")
    url_base = check_base(environ.get(URL_BASE_ENV))  # CRAWLER-CONFIG-2: then the URL base
    if url_base is None:
        raise invalid("the URL base")
    execution = environ.get(EXECUTION_ENV)
    if execution is None or not _EXECUTION_RE.fullmatch(execution):  # CRAWLER-CONFIG-3: sent as a header: no CR or LF
        raise invalid("the execution coordinate")
    metadata_host = environ.get(METADATA_HOST_ENV)
    if metadata_host is None:
        metadata_host = DEFAULT_METADATA_HOST  # CRAWLER-CONFIG-4: unset is the platform's server, not an error
    elif check_metadata_host(metadata_host) is None:  # CRAWLER-CONFIG-4: set means set, an empty value included
        raise invalid("the metadata host")
    storage_origin = environ.get(STORAGE_ORIGIN_ENV)
    if storage_origin is None:
        storage_origin = DEFAULT_STORAGE_ORIGIN  # CRAWLER-CONFIG-4: unset is the real store, not an error
    elif check_storage_origin(storage_origin) is None:  # CRAWLER-CONFIG-4: CAP-5 matches upload URLs against it exactly
        raise invalid("the storage origin")
    elif storage_origin.startswith("http://"):
        # CRAWLER-CONFIG-4 (D19): once, so a plain-HTTP store is never taken for a production setting
        write_all(2, ("%s: development setting: %s names a plain-HTTP store; results travel unencrypted\n"
                      % (PROGRAM, STORAGE_ORIGIN_ENV)).encode("ascii"))
    policy_text = environ.get(EGRESS_POLICY_ENV)
    if policy_text is None:
        policy = NETWORK_POLICY  # CRAWLER-CONFIG-5 (D18): unset, as upstream: else the upstream's platform cannot start us
    else:
        policy = check_policy(policy_text)  # CRAWLER-CONFIG-5: set means set: a loose policy lets the fetch go anywhere
        if policy is None:
            raise invalid("the egress policy")
    timeouts = check_timeouts(environ)  # CRAWLER-CONFIG-6: last
    if timeouts is None:
        raise invalid("a timeout")
    return Config(bucket, session_id, audience_base, url_base, execution, metadata_host, storage_origin,
                  policy, timeouts,
                  environ.get(CHILD_PIN_ENV),  # CRAWLER-CHILD-1: judged before the fetch, where its code is reported
                  environ.get("TMPDIR") or None)  # CRAWLER-STREAM-3: an empty TMPDIR would put scratch in the cwd


# The command line is parsed as the upstream's argparse parses it (a platform's
# launch line for the upstream works here too) and echoed nowhere
# (CRAWLER-ARGV-1, CRAWLER-PEER-2).

OPTION = "--crawler-session-id"
ARGV_REDACTED = "[redacted]"  # CRAWLER-ARGV-3: sys.argv is overwritten with this, so nothing later prints the argument


class _HelpAsked(CrawlerError):
    """-h or --help (or an abbreviation) was met: argparse's own moment, its own text replaced by USAGE."""


class _ArgumentParser(argparse.ArgumentParser):
    """The upstream's argparse, with every message replaced by the fixed USAGE text (D1)."""

    def error(self, message):
        raise UsageError(None, USAGE, EXIT_USAGE)  # CRAWLER-ARGV-1 (D1): argparse's message names the tokens it refused

    def exit(self, status=0, message=None):
        raise UsageError(None, USAGE, EXIT_USAGE)

    def print_help(self, file=None):
        raise _HelpAsked(None)  # argparse's own -h: acted on where it stands, whatever follows


def parse_argv(tokens):
    """The session id, or None for help: the command lines the upstream's argparse takes (CRAWLER-ARGV-1, CRAWLER-PEER-2).

    argparse itself decides (`--crawler-session-id=V`, `--crawler V`, the last
    of two, `-h` anywhere), so every form and refusal is the upstream's; only
    what it would print is replaced (D1).
    """
    parser = _ArgumentParser(prog=PROGRAM, add_help=True, allow_abbrev=True)
    parser.add_argument(OPTION, dest="session_id", required=True)
    try:
        return parser.parse_args(tokens).session_id
    except _HelpAsked:
        return None


def configure(tokens, environ):
    """The run's Config, or None for help; UsageError: USAGE (exit 2) or the first failed check's status line (exit 1).

    Before the handlers: no check here makes a request (CRAWLER-STOP-1 wants them before the first one).
    """
    session_id = parse_argv(tokens)
    if session_id is None:
        return None
    if tokens == sys.argv[1:]:
        sys.argv[1:] = [ARGV_REDACTED] * len(tokens)  # CRAWLER-ARGV-3: no later log prints it (cmdline still does)
    try:
        return load_config(environ, session_id)
    except CrawlerError as exc:
        code = exc.code
    except Exception:  # CRAWLER-REPORT-5 (D15): unforeseen, still one status line
        code = CRAWLER_JOB_FAILED
    raise UsageError(code, status_line(code).decode("ascii"), EXIT_FAILED)


# 6.4 Identity =================================================================
# A fresh token for each broker call, one :redeem that is never retried (the
# bootstrap is single-use: the first attempt may have spent it), and :fail kept
# to its three codes: anything else misleads the control plane about what
# happened (CRAWLER-IDENTITY-2, CRAWLER-BOOT-2, CRAWLER-FAIL-1, -2).

METADATA_IDENTITY_PATH = "/computeMetadata/v1/instance/service-accounts/default/identity"


def mint_identity_token(config, audience):
    """A fresh identity token for `audience`: (buffer, length); the caller wipes it.

    CRAWLER-IDENTITY-1..4.  Every failure, a redirect included (never
    followed), is CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE: stderr-only, since
    without a token there is nobody to tell.
    """
    # CRAWLER-IDENTITY-1: the exact audience the broker compares, escaped as urlencode does
    query = urllib.parse.urlencode((("audience", audience), ("format", "full")))
    url = "http://%s%s?%s" % (config.metadata_host, METADATA_IDENTITY_PATH, query)  # CRAWLER-IDENTITY-1: plain HTTP
    budget = Deadline(config.timeouts.bootstrap)
    buffer = None
    try:
        with http_exchange(url, budget) as session:
            conn = session.conn
            conn.putrequest("GET", session.target.request_target, skip_accept_encoding=True)
            conn.putheader("Metadata-Flavor", "Google")  # CRAWLER-IDENTITY-1: no body, no Authorization
            conn.putheader("Connection", "close")
            conn.endheaders()
            response = conn.getresponse()
            if response.status != 200:  # CRAWLER-IDENTITY-3: a redirect is never followed
                raise CrawlerError(CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE, "metadata status")
            declared = announced_length(response)
            if declared is not None and declared > MAX_METADATA_IDENTITY_TOKEN_BYTES:  # CRAWLER-IDENTITY-4: unread
                raise CrawlerError(CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE, "metadata answer too large")  # D4
            # CRAWLER-IDENTITY-4: at most the bound + 1 bytes: a flooding server cannot fill memory
            buffer, count = read_body(response, MAX_METADATA_IDENTITY_TOKEN_BYTES, budget)
            with memoryview(buffer) as view:
                whole = count <= MAX_METADATA_IDENTITY_TOKEN_BYTES  # CRAWLER-IDENTITY-4: a byte past it: too large
                if not whole or not _JWS_RE.fullmatch(view[:count]):  # CRAWLER-IDENTITY-3: no padding, no newline
                    raise CrawlerError(CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE, "not a compact JWS")
            return buffer, count
    except Exception as exc:
        PROCESS.wipe(buffer)
        raise exchange_failure(exc, CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE, budget) from None


def bearer(token, length):
    """`Bearer <token>` as a bytearray the caller wipes (CRAWLER-SECRET-3)."""
    with memoryview(token) as view:
        return PROCESS.hold_secret(bytearray(b"Bearer ") + view[:length])


def redeem(config, token, length):
    """The one :redeem POST (CRAWLER-BOOT-1..3): (buffer, count) of the answer; the caller wipes it."""
    url = "%s/%s:redeem" % (config.url_base, config.session_id)
    budget = Deadline(config.timeouts.bootstrap)
    authorization = bearer(token, length)
    buffer = None
    try:
        with http_exchange(url, budget) as session:
            conn = session.conn
            conn.putrequest("POST", session.target.request_target, skip_accept_encoding=True)
            conn.putheader("Accept", "application/json")  # CRAWLER-BOOT-1: asks for the JSON the parser expects
            conn.putheader("Authorization", authorization)  # CRAWLER-SECRET-2: the only place the token goes
            # CRAWLER-BOOT-1: without it the broker cannot tell which execution spent the bootstrap
            conn.putheader("X-Mostlyright-Cloud-Run-Execution", config.execution)
            conn.putheader("Content-Length", "0")  # CRAWLER-BOOT-1: no body
            conn.putheader("Connection", "close")
            conn.endheaders()  # CRAWLER-BOOT-2: sent once, never retried
            response = conn.getresponse()
            # CRAWLER-BOOT-3: the size first, whatever the status, as upstream: else an oversized
            # error answer reaches the broker's :fail as another code than the upstream's
            declared = announced_length(response)
            if declared is not None and declared > MAX_BOOTSTRAP_RESPONSE_BYTES:  # CRAWLER-BOOT-3: refused unread
                raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE, "announced too large")
            # CRAWLER-BOOT-3: at most the bound + 1 bytes: a broker's answer cannot fill memory
            buffer, count = read_body(response, MAX_BOOTSTRAP_RESPONSE_BYTES, budget)
            if count > MAX_BOOTSTRAP_RESPONSE_BYTES:  # CRAWLER-BOOT-3: else the cut answer is parsed: the wrong code
                raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE, "too large")
            if response.status != 200:  # CRAWLER-BOOT-2: a redirect included, never followed
                raise CrawlerError(CRAWLER_BOOTSTRAP_REDEMPTION_FAILED, "redeem status")
            if count == 0:  # CRAWLER-BOOT-2: an empty body
                raise CrawlerError(CRAWLER_BOOTSTRAP_REDEMPTION_FAILED, "empty answer")
            return buffer, count
    except Exception as exc:
        PROCESS.wipe(buffer)
        raise exchange_failure(exc, CRAWLER_BOOTSTRAP_REDEMPTION_FAILED, budget) from None
    finally:
        PROCESS.wipe(authorization)  # CRAWLER-SECRET-3: used once


def report_failure(config, code):
    """The :fail report, once, best effort (CRAWLER-FAIL-1, -2): True when delivered, the outcome the same either way."""
    if REPORT_PLACE.get(code) != FAIL_ROUTE:  # CRAWLER-FAIL-1: only three codes, ever
        return False
    token = authorization = None
    try:
        audience = "%s/%s:fail" % (config.audience_base, config.session_id)
        token, length = mint_identity_token(config, audience)  # CRAWLER-IDENTITY-2: its own token and audience
        authorization = bearer(token, length)
        PROCESS.wipe(token)
        body = canonical_bytes({"failure_code": code})  # CRAWLER-FAIL-1: the code and nothing else
        budget = Deadline(config.timeouts.bootstrap)  # CRAWLER-FAIL-2: gives up at the bootstrap timeout
        with http_exchange("%s/%s:fail" % (config.url_base, config.session_id), budget) as session:
            conn = session.conn
            conn.putrequest("POST", session.target.request_target, skip_accept_encoding=True)
            conn.putheader("Accept", "application/json")  # CRAWLER-FAIL-1: one exact shape, headers included
            conn.putheader("Authorization", authorization)  # CRAWLER-FAIL-1: :redeem's token has another audience
            conn.putheader("Content-Type", "application/json")  # CRAWLER-FAIL-1: and no execution header
            conn.putheader("Content-Length", str(len(body)))
            conn.putheader("Connection", "close")
            conn.endheaders(body)  # CRAWLER-FAIL-2: once, never retried
            return conn.getresponse().status == 204  # CRAWLER-FAIL-2: a 204 has no body; nothing else is read
    except Exception:
        return False  # CRAWLER-FAIL-2: best effort
    finally:
        PROCESS.wipe(token)
        PROCESS.wipe(authorization)


# 6.5 HTTP exchanges ===========================================================
# Each exchange with the metadata server, the broker or the store runs under
# one elapsed deadline whose watchdog shuts the socket: with per-read timeouts
# a peer that drips a byte a second holds the node for ever (D9).  The source
# is fetched its own way (section 6.10).


@functools.lru_cache(maxsize=None)
def tls_context():
    """The process's one TLS context: verified certificates and host names; SSL_CERT_FILE read when it is made."""
    return ssl.create_default_context()


@contextlib.contextmanager
def http_exchange(url, budget):
    """An open HttpExchange whose whole life, connect to last byte, is bounded by `budget` (D9: the Watchdog)."""
    session = HttpExchange(url, STOP, timeout_s=max(0.05, budget.remaining()),
                           connect_deadline_s=budget.remaining(), budget=budget, ssl_context_factory=tls_context)
    try:
        with Watchdog(budget, STOP.abandon_all):  # one exchange at a time: its socket is the ledger's only one
            session.open()
            yield session
    finally:
        session.close()


def announced_length(response):
    """The first Content-Length as an int; None when absent or not plain digits."""
    value = response.headers.get("Content-Length")
    value = value.strip() if value is not None else ""
    return int(value) if value and len(value) <= 19 and _DIGITS_RE.fullmatch(value) else None


def read_body(response, limit, budget):
    """(buffer, count): at most limit + 1 body bytes, in one buffer registered up front.

    No chunk object nobody can wipe, and a hard exit mid-read still wipes it
    (CRAWLER-SECRET-3).  A body that ends before its Content-Length, or that a
    stop or the deadline cut (each reads as an end of file), raises OSError.
    """
    declared = announced_length(response)
    buffer = PROCESS.hold_secret(bytearray(limit + 1))
    count = 0
    with memoryview(buffer) as view:
        while count <= limit:
            got = response.readinto(view[count:])
            if not got:
                break
            count += got
    cut = STOP.should_abandon() or (declared is not None and count < declared) or (
        declared is None and budget.expired())
    if cut and count <= limit:
        PROCESS.wipe(buffer)
        raise OSError(errno.EPIPE, "the answer ended early")
    return buffer, count


def exchange_failure(exc, code, budget):
    """The failure a broken exchange stands for: a stop explains it first (CRAWLER-STOP-2); then the
    exchange's own CrawlerError; anything else is `code`."""
    if STOP.should_abandon():
        return StopRequested("stop requested during the exchange")
    if isinstance(exc, CrawlerError):
        return exc
    return CrawlerError(code, "deadline" if budget.expired() else "transport error")


# 6.6 State on disk ============================================================
# Nothing outlives the run: the source and the child's result are spooled in
# unlinked 0600 files under TMPDIR, not held in memory (CRAWLER-STREAM-1..3).


def make_spool(directory):
    """An unlinked, 0600 scratch file under TMPDIR (CRAWLER-STREAM-1, -3): nothing to clean up, even after SIGKILL.

    TemporaryFile: nameless where O_TMPFILE works, else unlinked at once.
    """
    return tempfile.TemporaryFile(mode="w+b", buffering=0, prefix="crawler-", dir=directory)


def write_all_checked(fd, view):
    """Write every byte to a spool; unlike write_all, a full disk is an error.

    The node's own error, CRAWLER_JOB_FAILED: a full scratch disk while the
    source streams in must not read as the source's fault (SOURCE_UNAVAILABLE)
    and send whoever is on call to look at the wrong machine.
    """
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        raise CrawlerError(CRAWLER_JOB_FAILED, "a spool write failed") from None


def read_spool(fd, size):
    """The whole spool, at most MAX_CRAWLER_RESULT_BYTES (CRAWLER-STREAM-2 allows this one copy)."""
    return b"".join(body_pieces(fd, size))


# 6.7 Child framing ============================================================
# Child mode: this file, started by the node as its own normaliser
# (CRAWLER-CHILD-1, D8), reads the normalisation input on stdin and writes the
# result on stdout.  The framing around normalize() (section 3) keeps that
# protocol whatever it yields: a limit gives its own code rather than a result
# the node would refuse, the input must match its header, and the summary is
# computed from the content it describes (CRAWLER-CHILD-11, CRAWLER-RESULT-10).

CHILD_ARGS = ["--input-fd", "0", "--result-fd", "1"]  # CRAWLER-CHILD-1: the child protocol's argv tail


class FramedSource(io.RawIOBase):
    """The raw_size_bytes that follow the input header on stdin, hashed as they pass."""

    def __init__(self, stream, size):
        super().__init__()
        self.stream = stream
        self.left = size
        self.digest = hashlib.sha256()

    def readable(self):
        return True

    def readinto(self, buffer):
        if self.left <= 0:
            return 0
        data = self.stream.read(min(len(buffer), self.left))
        if not data:
            raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "the input ended early")
        buffer[:len(data)] = data
        self.left -= len(data)
        self.digest.update(data)
        return len(data)


Normalized = collections.namedtuple("Normalized", "column_names content row_count row_digest")


def normalized_content(records, limits):
    """The JSON lines of what normalize() yields, within the request's limits: a Normalized.

    Raises CrawlerError with a child code (CRAWLER-CHILD-11) when the records
    go past a limit or are not one flat value per column.
    """
    columns = next(records, None)
    if not (isinstance(columns, list) and columns and all(isinstance(name, str) and name for name in columns)):
        raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "no column names")  # CRAWLER-RESULT-7: 1+ non-empty names
    if len(columns) > limits["max_columns"]:
        # CRAWLER-CHILD-11: its own code; the node would refuse the result as CHILD_INVALID, cause unnamed
        raise CrawlerError(CRAWLER_LIMIT_EXCEEDED, "more columns than max_columns")
    content = bytearray(canonical_bytes(columns) + b"\n")  # CRAWLER-RESULT-10: the header line
    row_hash = hashlib.sha256()
    row_count = 0
    while True:
        if len(content) > limits["max_normalized_bytes"]:
            # CRAWLER-CHILD-11: stop at the cap, before the content grows without bound
            raise CrawlerError(CRAWLER_LIMIT_EXCEEDED, "content over max_normalized_bytes")
        values = next(records, None)
        if values is None:
            break
        row_count += 1
        if row_count > limits["max_rows"]:
            # CRAWLER-CHILD-11: a LIMIT_EXCEEDED now, not a result the node refuses later
            raise CrawlerError(CRAWLER_LIMIT_EXCEEDED, "more rows than max_rows")
        if not (isinstance(values, list) and len(values) == len(columns) and all(map(is_row_value, values))):
            # CRAWLER-RESULT-10: else the node refuses the result as CHILD_INVALID, naming no cause
            raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "a row that is not one flat value per column")
        line = canonical_bytes(values) + b"\n"  # CRAWLER-RESULT-10: values in column order
        row_hash.update(line)  # CRAWLER-RESULT-10: row_digest covers the row lines only
        content += line
    return Normalized(columns, content, row_count, row_hash.hexdigest())


def normalizer_result(stdin):
    """The canonical result for the normalisation input read from `stdin` (CRAWLER-CHILD-11)."""
    line = stdin.readline(MAX_INPUT_HEADER_BYTES + 1)
    if not line.endswith(b"\n"):
        raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "no input header")
    header = parse_canonical(line[:-1])
    request, retrieval, clean_room = header["request"], header["retrieval"], header["clean_room"]
    query = request["query"]
    framed = FramedSource(stdin, retrieval["raw_size_bytes"])
    records = normalize(query["data_format"], io.BufferedReader(framed, IO_CHUNK_BYTES))
    normalized = normalized_content(records, query["limits"])
    if framed.left or stdin.read(1) or framed.digest.hexdigest() != retrieval["raw_content_sha256"]:
        raise CrawlerError(CRAWLER_NORMALIZATION_FAILED, "the input is not what its header describes")
    content = bytes(normalized.content)
    content_sha256 = sha256_hex(content)
    evidence = {  # restated from the input: the node checks every one of these (CRAWLER-RESULT-4)
        "raw_content_sha256": retrieval["raw_content_sha256"],
        "normalized_content_sha256": content_sha256,
        "row_count": normalized.row_count,
        "row_digest": normalized.row_digest,
        "http_status_code": retrieval["http_status_code"],
        "etag_digest": optional_digest(retrieval["etag"]),
        "last_modified_digest": optional_digest(retrieval["last_modified"]),
    }
    receipt = dict(evidence)
    receipt.update({
        "schema_version": RECEIPT_SCHEMA,
        "source_id": request["source_id"], "adapter_id": request["adapter_id"],
        "adapter_version": request["adapter_version"], "request_digest": header["request_digest"],
        "source_url": retrieval["source_url"], "final_url": retrieval["final_url"],
        "fetched_media_type": retrieval["media_type"],
        "normalized_media_type": NORMALIZED_MEDIA_TYPE,
        "normalized_data_format": query["data_format"], "normalized_filename": query["filename"],
        "acquired_at": request["requested_at"],  # CRAWLER-RESULT-6: time comes from the request
        "raw_size_bytes": retrieval["raw_size_bytes"],
        "normalized_size_bytes": len(content),
        "column_names": normalized.column_names,
        "parsed_schema_digest": digest_of({"column_names": normalized.column_names,
                                           "data_format": query["data_format"]}),  # CRAWLER-RESULT-10: the parent recomputes it
        "family_id": None, "family_version": None, "decode_options_digest": None, "decode_flags": [],
        "resource_caps": None, "reader_budgets": None,  # CRAWLER-RESULT-9: no Reader
        "transport_evidence_digest": retrieval["transport_evidence_digest"],
        "egress_policy_attestation": request["egress_policy_attestation"],
        "clean_room": clean_room,  # CRAWLER-RESULT-8: what the node installed, restated
    })
    observation = dict(evidence)
    observation.update({
        "schema_version": OBSERVATION_SCHEMA, "source_id": request["source_id"],
        "request_digest": header["request_digest"], "observed_at": request["requested_at"],
    })
    data = canonical_bytes({
        "schema_version": RESULT_SCHEMA,
        "request_digest": header["request_digest"], "source_id": request["source_id"],
        "adapter_id": request["adapter_id"], "adapter_version": request["adapter_version"],
        "acquisition_receipt": receipt, "observation": observation,
        "normalized_content": base64.b64encode(content).decode("ascii"),
        "next_watermark": None,
    })
    if len(data) > MAX_CRAWLER_RESULT_BYTES:  # base64 grows the content by a third: say so rather than be killed
        raise CrawlerError(CRAWLER_LIMIT_EXCEEDED, "the result would exceed MAX_CRAWLER_RESULT_BYTES")
    return data


def normalizer_main(rest):
    """Child mode: the result on fd 1 and exit 0, or one failure line on fd 2 and exit 1 (CRAWLER-CHILD-11)."""
    if rest:  # not the child protocol's argv, which is exact: argparse would refuse it too
        write_all(2, USAGE.encode("ascii"))
        return EXIT_USAGE
    try:
        stdin = io.open(0, "rb", buffering=IO_CHUNK_BYTES, closefd=False)
        write_all_checked(1, memoryview(normalizer_result(stdin)))  # CRAWLER-CHILD-11: nothing on stderr
        return EXIT_OK
    except BaseException as exc:  # CRAWLER-CHILD-11: never a traceback, whatever the input
        code = exc.code if isinstance(exc, CrawlerError) and exc.code in CHILD_CODES else CRAWLER_NORMALIZATION_FAILED
        # CRAWLER-CHILD-8: the one line the node admits; anything else becomes CHILD_FAILED
        write_all(2, status_line(code))
        return EXIT_FAILED


CHILD_MODES = ((tuple(CHILD_ARGS), normalizer_main),)  # CRAWLER-CHILD-1 (D8): this file as its own normaliser


# 6.8 Progress (not used by this node) =========================================
# The crawler reports nothing while it runs: its one report is the status line (CRAWLER-REPORT-3).


# 6.9 The bootstrap documents ==================================================
# The :redeem answer is parsed strictly and the capability checked rule by rule
# before any fetch: a fault found only at the PUT wastes the crawl, and a
# capability read loosely could send the result, or the signed URL, elsewhere
# (CRAWLER-BOOT-4, -5, CRAWLER-CAP-1..9).  The bootstrap and the capability
# have exact key sets, as the upstream compares them; the request keeps what
# it does not know (CRAWLER-PEER-1).

BOOTSTRAP_SCHEMA = "mostlyright-crawler-bootstrap.v1"
BOOTSTRAP_KEYS = frozenset(("schema_version", "crawler_session_id", "request", "upload_capability"))

ADAPTER_ID = "public.https"
ADAPTER_VERSION = "1.0.0"
DATA_FORMATS = ("csv", "jsonl")
REQUEST_KEYS = frozenset(("schema_version", "source_id", "adapter_id", "adapter_version", "requested_at",
                          "egress_policy_attestation", "query"))
QUERY_KEYS = frozenset(("url", "data_format", "filename", "limits"))


def limit_ranges():
    """(key, lowest, highest) of query.limits (made on call: MAX_SAFE_INTEGER is section 9's)."""
    return (
        ("max_source_bytes", 1, 4294967296),  # D27: the scratch spool's ceiling, so a deployment can size its disk
        ("max_normalized_bytes", 1, MAX_CRAWLER_RESULT_BYTES),  # more could never be delivered
        # D27: any count the requester chooses: the content's bytes, not these, bound the node's memory
        ("max_rows", 0, MAX_SAFE_INTEGER),
        ("max_columns", 1, MAX_SAFE_INTEGER),
    )


CAPABILITY_SCHEMA = "mostlyright-crawler-upload-capability.v1"
CAPABILITY_KEYS = frozenset(("schema_version", "crawler_session_id", "request_digest", "method", "upload_url",
                             "required_headers", "max_result_bytes", "expires_at", "redirect_policy",
                             "single_use"))
SIGNED_QUERY_FIELDS = frozenset(("X-Goog-Algorithm", "X-Goog-Credential", "X-Goog-Date", "X-Goog-Expires",
                                 "X-Goog-SignedHeaders", "X-Goog-Signature"))
SIGNED_HEADERS = ("content-type;host;x-goog-content-length-range;x-goog-content-sha256;"
                  "x-goog-if-generation-match;x-goog-meta-mostlyright-crawler-session;"
                  "x-goog-meta-mostlyright-egress-policy;x-goog-meta-mostlyright-request-digest")
SIGNING_ALGORITHM = "GOOG4-RSA-SHA256"
RESULT_OBJECT_PREFIX = "crawler-quarantine/v2/"

Capability = collections.namedtuple("Capability", "session_id path query headers window_end")


def check_request(value):
    """The crawl request (CRAWLER-BOOT-5): the members this node reads, each in shape; else False.

    Members it does not know are left in, at every level (CRAWLER-PEER-1,
    D25): the upstream reads `query` with .get(), and a later broker may add
    members; the digest covers them and the child is given the whole request.
    """
    if not isinstance(value, dict) or not REQUEST_KEYS <= set(value):
        return False
    if not (same(value["schema_version"], REQUEST_SCHEMA) and same(value["adapter_id"], ADAPTER_ID)
            and same(value["adapter_version"], ADAPTER_VERSION)):  # CRAWLER-BOOT-5 (D5): no other adapter
        return False
    if not isinstance(value["source_id"], str) or not _SOURCE_ID_RE.fullmatch(value["source_id"]):
        return False
    if parse_timestamp(value["requested_at"]) is None:
        return False
    attestation = value["egress_policy_attestation"]
    if not isinstance(attestation, str) or not _DIGEST_RE.fullmatch(attestation):
        return False
    query = value["query"]
    if not isinstance(query, dict) or not QUERY_KEYS <= set(query):
        return False
    # CRAWLER-BOOT-5 (D22): a Reader runs upstream only inside its exact memory cgroup, after a
    # warm-up; neither exists here.  A null reader_pin is the upstream's own "no Reader".
    if query.get("reader_pin") is not None:
        return False
    if not isinstance(query["url"], str) or not 1 <= len(query["url"]) <= 2048:
        return False
    if not isinstance(query["data_format"], str) or query["data_format"] not in DATA_FORMATS:
        return False
    filename = query["filename"]
    if not isinstance(filename, str) or not 1 <= len(filename) <= 255 or "/" in filename or "\x00" in filename:
        return False
    limits = query["limits"]
    if not isinstance(limits, dict) or not set(key for key, _lo, _hi in limit_ranges()) <= set(limits):
        return False
    return all(is_int(limits[key]) and low <= limits[key] <= high for key, low, high in limit_ranges())


def strict_query_pairs(query):
    """(name, value) pairs of a query, parsed strictly; ValueError on `&&` or a field without `=`.

    Written out rather than parse_qsl(strict_parsing=True) so that it splits
    on `&` alone on every 3.9 release (3.9.0 and 3.9.1 also split on `;`).
    """
    pairs = []
    for field in query.split("&"):
        name, equals, value = field.partition("=")
        if not equals:
            raise ValueError("a field without =")
        pairs.append((urllib.parse.unquote_plus(name, errors="strict"),
                      urllib.parse.unquote_plus(value, errors="strict")))
    return pairs


def required_headers(session_id, request_digest, attestation):
    """The seven headers, in capability order (contract: Upload capability)."""
    return [
        ("Content-Type", RESULT_MEDIA_TYPE),
        ("x-goog-content-length-range", "1,%d" % MAX_CRAWLER_RESULT_BYTES),
        ("x-goog-content-sha256", "UNSIGNED-PAYLOAD"),
        ("x-goog-if-generation-match", "0"),  # create-only: a second PUT of the same object gets 412
        ("x-goog-meta-mostlyright-crawler-session", session_id),
        ("x-goog-meta-mostlyright-request-digest", request_digest),
        ("x-goog-meta-mostlyright-egress-policy", attestation),
    ]


def check_capability(capability, request, request_digest, config, now):
    """The upload capability, by CRAWLER-CAP-1..9 in that order; the first failure names the code."""
    def invalid(what):
        return CrawlerError(CRAWLER_UPLOAD_CAPABILITY_INVALID, what)

    # CRAWLER-CAP-1: an extra key could be a rule this node would silently ignore
    if not isinstance(capability, dict) or set(capability) != CAPABILITY_KEYS:
        raise invalid("keys")
    if not (same(capability["schema_version"], CAPABILITY_SCHEMA) and same(capability["method"], "PUT")
            and same(capability["redirect_policy"], "deny")):  # CRAWLER-CAP-1: case-sensitive
        raise invalid("constants")
    if not is_int(capability["max_result_bytes"]) or capability["max_result_bytes"] != MAX_CRAWLER_RESULT_BYTES:
        raise invalid("max_result_bytes")  # CRAWLER-CAP-1: an integer, not true
    if capability["single_use"] is not True:  # CRAWLER-CAP-1: not 1, not "true"
        raise invalid("single_use")
    bound = capability["request_digest"]
    # CRAWLER-CAP-2: a capability for another request would file this result under the wrong one
    if not isinstance(bound, str) or not _DIGEST_RE.fullmatch(bound) or bound != request_digest:
        raise invalid("request_digest")
    session_id = capability["crawler_session_id"]
    if not is_canonical_uuid(session_id):  # CRAWLER-CAP-3: CAP-9 then compares strings: one spelling per session
        raise invalid("crawler_session_id")
    expires_at = parse_timestamp(capability["expires_at"])
    if expires_at is None:  # CRAWLER-CAP-3: an expiry that is not a real instant cannot bound the window
        raise invalid("expires_at")
    if now >= expires_at:  # CRAWLER-CAP-4: after CAP-1..3, before CAP-5..9
        raise CrawlerError(CRAWLER_UPLOAD_CAPABILITY_EXPIRED, "expires_at has passed")

    url = capability["upload_url"]
    # CRAWLER-CAP-5: sent on the request line: a space would split it, a CR or LF add headers
    if not isinstance(url, str) or not 1 <= len(url) <= 16384 or not _PRINTABLE_RE.fullmatch(url):
        raise invalid("upload_url")  # (printable ASCII: the query is sent on the request line as received)
    try:
        parts, origin = urllib.parse.urlsplit(url), urllib.parse.urlsplit(config.storage_origin)
        port = parts.port
    except ValueError:
        raise invalid("upload_url port") from None
    # CRAWLER-CAP-5: scheme, host and port those of the origin the PUT goes to, read as the upstream
    # reads them (urlsplit: scheme and host in any case, CRAWLER-PEER-1); the PUT connects to the
    # origin whatever the URL says, so this only keeps a capability for another store out
    if (parts.scheme != origin.scheme or parts.hostname != origin.hostname or port != origin.port
            or parts.username is not None or parts.password is not None or "#" in url):
        raise invalid("upload_url origin")
    path, query = parts.path, parts.query
    prefix = "/%s/%s" % (config.bucket, RESULT_OBJECT_PREFIX)
    # CRAWLER-CAP-5: the quarantine, and nothing else: a bucket of [a-z0-9._-] and 64 hex
    # leave no room for %, \, // or a dot segment.
    if not path.startswith(prefix) or not _DIGEST_RE.fullmatch(path[len(prefix):]):
        raise invalid("upload_url path")

    try:
        pairs = strict_query_pairs(query)  # CRAWLER-CAP-6: read as the store reads it: & only, no blank field
    except ValueError:
        raise invalid("query") from None
    fields = dict(pairs)
    if len(pairs) != len(SIGNED_QUERY_FIELDS) or set(fields) != SIGNED_QUERY_FIELDS or not all(fields.values()):
        raise invalid("query fields")  # CRAWLER-CAP-6: exactly six, none repeated, none empty
    if fields["X-Goog-Algorithm"] != SIGNING_ALGORITHM or fields["X-Goog-SignedHeaders"] != SIGNED_HEADERS:
        raise invalid("query values")  # CRAWLER-CAP-6: other signed headers leave the seven outside the signature
    expires = fields["X-Goog-Expires"]
    if not _DIGITS_RE.fullmatch(expires) or len(expires.lstrip("0")) > 4 or not (
            1 <= int(expires) <= MAX_URL_EXPIRES_S):  # CRAWLER-CAP-6 (D6): ASCII digits, 1..2100
        raise invalid("X-Goog-Expires")
    signed_at = parse_goog_date(fields["X-Goog-Date"])
    if signed_at is None:  # CRAWLER-CAP-6: a real time
        raise invalid("X-Goog-Date")
    # CRAWLER-CAP-6: not an RSA signature in hex: refused now, not at the PUT after the crawl
    if not _SIGNATURE_RE.fullmatch(fields["X-Goog-Signature"]):
        raise invalid("X-Goog-Signature")

    headers = capability["required_headers"]
    if not isinstance(headers, list) or len(headers) != 7:  # CRAWLER-CAP-7: the PUT sends these verbatim: nothing extra
        raise invalid("required_headers")
    header_pairs = []
    for entry in headers:
        # CRAWLER-CAP-7: an entry with more keys carries something this node would ignore
        if not isinstance(entry, dict) or set(entry) != {"name", "value"}:
            raise invalid("required_headers entry")
        name, value = entry["name"], entry["value"]
        if not isinstance(name, str) or not isinstance(value, str) or any(
                c in name + value for c in "\r\n"):  # CRAWLER-CAP-7: no header injection
            raise invalid("required_headers entry")
        header_pairs.append((name, value))
    # Header 5 may name the capability's session or the argv session: CAP-9
    # below accepts only a capability whose session is the argv session, so
    # what passes is the same either way, but a capability for another
    # session always reaches CAP-9's code (and :fail), however it was built.
    attestation = request["egress_policy_attestation"]
    if all(header_pairs != required_headers(sid, request_digest, attestation)
           for sid in (session_id, config.session_id)):  # CRAWLER-CAP-7: e.g. generation-match 0 keeps it create-only
        raise invalid("required_headers values")

    url_expires_at = signed_at + int(expires)
    # CRAWLER-CAP-8 (D7): else the run would count on time the signed URL does not give; whole
    # seconds, as X-Goog-Date is written: else a broker stamping both from one clock reading is refused
    if signed_at > now + CLOCK_SKEW_S or int(expires_at) > url_expires_at:
        raise invalid("inconsistent window")
    if session_id != config.session_id:  # CRAWLER-CAP-9: after CAP-1..8, and reported on :fail
        raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_INVALID, "a capability for another session")
    window_end = min(expires_at, url_expires_at)  # CRAWLER-CAP-8: the upload window
    return Capability(session_id, path, query, header_pairs, window_end)


def parse_bootstrap(buffer, count, config):
    """(request, request digest, capability) from the :redeem answer (CRAWLER-BOOT-4, -5, CRAWLER-CAP-*)."""
    def invalid(what):
        return CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_INVALID, what)

    try:
        with memoryview(buffer) as view:
            document = parse_lenient(view[:count])  # CRAWLER-BOOT-4: the lenient parser
    except JsonError:
        raise invalid("not acceptable JSON") from None
    if not isinstance(document, dict) or set(document) != BOOTSTRAP_KEYS:  # CRAWLER-BOOT-4: exact keys
        raise invalid("keys")
    if not same(document["schema_version"], BOOTSTRAP_SCHEMA):  # CRAWLER-BOOT-4: another version may mean other rules
        raise invalid("schema_version")
    if not same(document["crawler_session_id"], config.session_id):  # CRAWLER-BOOT-4: as a string, case included
        raise invalid("crawler_session_id")
    request = document["request"]
    if not check_request(request):  # CRAWLER-BOOT-5 (D5): before any fetch
        raise invalid("request")
    request_bytes = canonical_bytes(request)
    if not 1 <= len(request_bytes) <= MAX_CRAWLER_REQUEST_BYTES:  # CRAWLER-BOOT-5: the child's header bound assumes it
        raise invalid("request size")
    request_digest = sha256_hex(request_bytes)  # the request's digest: of its canonical bytes
    try:
        capability = check_capability(document["upload_capability"], request, request_digest, config, time.time())
    except CrawlerError:
        raise
    except Exception:  # CRAWLER-REPORT-5: whatever the input, a capability fault stays a capability fault
        raise CrawlerError(CRAWLER_UPLOAD_CAPABILITY_INVALID, "unforeseen shape") from None
    return request, request_digest, capability


# 6.10 Fetch ===================================================================
# The egress policy, enforced here hop by hop: each URL checked before it is
# contacted, each address before it is connected to, and the connection made
# to the checked address (a second lookup would let DNS rebinding answer);
# redirects followed by hand, evidence recorded (CRAWLER-FETCH-2, -3, -5, -8).
# The body streams into an unlinked spool, never into memory (CRAWLER-STREAM-1).

USER_AGENT = "mostlyright-crawler/1"  # CRAWLER-FETCH-4: the only identification a source sees
REDIRECT_STATUSES = frozenset((301, 302, 303, 307, 308))  # CRAWLER-FETCH-5: any other 3xx is final, never followed
EVIDENCE_SCHEMA = "mostlyright-transport-evidence.v1"

SourceUrl = collections.namedtuple("SourceUrl", "url host port request_target")
Retrieval = collections.namedtuple(
    "Retrieval", "source_url final_url media_type raw_sha256 raw_size evidence_digest status etag last_modified")


def check_source_url(url, policy):
    """The parts of a URL the egress policy lets this node contact (CRAWLER-FETCH-2), else None."""
    if not isinstance(url, str) or not 1 <= len(url) <= 2048 or not _PRINTABLE_RE.fullmatch(url):
        return None  # (printable ASCII: the path and query go on the request line as they are)
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme != "https" or "@" in parts.netloc or "#" in url:  # CRAWLER-FETCH-2: no userinfo, no fragment
        return None
    host = parts.hostname
    if not is_dns_name(host) or (policy.hosts is not None and host not in policy.hosts):
        # CRAWLER-FETCH-2: a DNS name (listed, when a policy is deployed), never an IP literal: else no host rule holds
        return None
    port = 443 if port is None else port
    if port not in policy.ports:  # CRAWLER-FETCH-2: a listed host on an unlisted port is another service
        return None
    return SourceUrl(url, host, port, (parts.path or "/") + ("?" + parts.query if parts.query else ""))


def is_public(address):
    """Not loopback, private, link-local, multicast, reserved or unspecified (CRAWLER-FETCH-3).

    An IPv4-mapped IPv6 address is judged as the IPv4 address it carries
    (ipaddress calls ::ffff:127.0.0.1 not loopback before Python 3.13).
    """
    address = getattr(address, "ipv4_mapped", None) or address
    return address.is_global and not (address.is_loopback or address.is_private or address.is_link_local
                                      or address.is_multicast or address.is_reserved or address.is_unspecified)


def checked_addresses(infos, policy):
    """The resolved addresses (getaddrinfo() entries, in order, each once) when every one is allowed (CRAWLER-FETCH-3)."""
    checked, seen = [], set()
    for info in infos:
        text = info[4][0].split("%", 1)[0]
        address = ipaddress.ip_address(text)
        allowed = address in policy.addresses or getattr(address, "ipv4_mapped", None) in policy.addresses
        if not is_public(address) and not allowed:  # CRAWLER-FETCH-3: any one bad address refuses the hop
            raise CrawlerError(CRAWLER_EGRESS_DENIED, "a non-public address")
        if text not in seen:
            seen.add(text)
            checked.append(info)
    if not checked:
        raise CrawlerError(CRAWLER_SOURCE_UNAVAILABLE, "no address")
    return checked


def connect_checked(source, addresses, deadline, context):
    """(TLS socket, peer address): a verified connection to the first checked address that answers.

    CRAWLER-FETCH-3: the host is not looked up again (DNS rebinding); SNI and the certificate use its name.
    """
    target = Target("https", source.host, source.port, source.request_target)
    sock = open_socket(target, STOP, deadline, context, addresses=addresses)
    try:
        return sock, sock.getpeername()[0].split("%", 1)[0]
    except OSError:  # reset as soon as it was made
        close_hop(None, sock)
        raise


def close_hop(conn, sock):
    for thing in (conn, sock):
        if thing is not None:
            try:
                thing.close()
            except Exception:
                pass
    if sock is not None:
        STOP.untrack(sock)


def hop_evidence(url, response, peer, sock):
    """One hop of the transport evidence: header values as received, the first of a repeat (CRAWLER-FETCH-8)."""
    headers = response.headers
    length = announced_length(response)
    return {
        "url": url,
        "status": response.status,
        "location": headers.get("Location"),
        "content_type": headers.get("Content-Type"),
        "content_length": length if length is not None and length <= MAX_SAFE_INTEGER else None,
        "etag": headers.get("ETag"),
        "last_modified": headers.get("Last-Modified"),
        "peer_address": peer,
        "tls_version": sock.version(),
    }


def stream_body(response, limit, deadline, spool_fd):
    """Copy the body into the spool, hashing and counting as it goes: (sha256 hex, size).

    CRAWLER-FETCH-6, CRAWLER-STREAM-1: never more than limit + 1 bytes read,
    never more than one chunk in memory.
    """
    declared = response.length  # http.client's Content-Length; None when absent or chunked
    digest = hashlib.sha256()
    size = 0
    buffer = bytearray(IO_CHUNK_BYTES)
    with memoryview(buffer) as view:
        while True:
            if STOP.should_abandon():
                raise StopRequested("stop requested during the fetch")  # CRAWLER-STOP-1: checked after every chunk
            count = response.readinto(view[:min(len(view), limit + 1 - size)])
            if not count:
                break
            size += count
            if size > limit:  # CRAWLER-FETCH-6: stopped at max_source_bytes + 1
                raise CrawlerError(CRAWLER_SOURCE_TOO_LARGE, "over max_source_bytes")
            digest.update(view[:count])  # CRAWLER-FETCH-8: hashed as it streams
            write_all_checked(spool_fd, view[:count])
    if STOP.should_abandon():  # a stop's shutdown() reads as the end of the body
        raise StopRequested("stop requested during the fetch")
    if (declared is None or size < declared) and deadline.expired():  # so does the watchdog's
        raise CrawlerError(CRAWLER_SOURCE_TIMEOUT, "the fetch deadline")
    if declared is not None and size < declared:  # CRAWLER-FETCH-6: the server closed early
        raise CrawlerError(CRAWLER_SOURCE_UNAVAILABLE, "shorter than its Content-Length")
    return digest.hexdigest(), size


def fetch_source(request, policy, deadline, spool_fd):
    """Follow the request's URL to its final answer and spool its body (CRAWLER-FETCH-2..8)."""
    query = request["query"]
    source = check_source_url(query["url"], policy)
    if source is None:  # CRAWLER-FETCH-2: no connection is made to it
        raise CrawlerError(CRAWLER_SOURCE_URL_INVALID, "the request's URL")
    context = tls_context()
    hops = []
    while True:
        infos = resolve(source.host, source.port, STOP, deadline)  # CRAWLER-FETCH-3: resolved once per hop
        addresses = checked_addresses(infos, policy)  # CRAWLER-FETCH-3: before anything is contacted
        conn = sock = None
        try:
            sock, peer = connect_checked(source, addresses, deadline, context)
            sock.settimeout(max(0.05, deadline.remaining()))
            conn = http.client.HTTPSConnection(source.host, source.port, context=context)  # Host: the name
            conn.sock = sock
            conn.auto_open = 0  # never let http.client open a connection behind our back
            conn.putrequest("GET", source.request_target, skip_accept_encoding=True)  # CRAWLER-FETCH-4: Host first
            conn.putheader("User-Agent", USER_AGENT)  # CRAWLER-FETCH-4: fixed, so a source learns nothing of the run
            conn.putheader("Accept-Encoding", "identity")  # CRAWLER-FETCH-4: else a gzip answer, refused by FETCH-6
            conn.putheader("Connection", "close")  # CRAWLER-FETCH-4: and nothing else, no credential ever
            conn.endheaders()
            response = conn.getresponse()
            hop = hop_evidence(source.url, response, peer, sock)
            hops.append(hop)  # CRAWLER-FETCH-8: every hop, redirects too: the evidence the result restates
            location = hop["location"]
            if 300 <= response.status < 400 and not location:  # CRAWLER-FETCH-5: a 3xx without Location
                raise CrawlerError(CRAWLER_SOURCE_REDIRECT_DENIED, "a redirect without Location")
            if response.status in REDIRECT_STATUSES:  # CRAWLER-FETCH-5: followed by hand, as a new GET
                if len(hops) > policy.max_redirects:  # CRAWLER-FETCH-5: one more than allowed
                    raise CrawlerError(CRAWLER_SOURCE_REDIRECT_DENIED, "too many redirects")
                # CRAWLER-FETCH-2: a redirect may point anywhere: its target meets the policy like the first URL
                source = check_source_url(urllib.parse.urljoin(source.url, location), policy)
                if source is None:
                    raise CrawlerError(CRAWLER_SOURCE_REDIRECT_DENIED, "a redirect the policy refuses")
                continue
            if response.status != 200:  # CRAWLER-FETCH-6: an error page is not the source
                raise CrawlerError(CRAWLER_SOURCE_HTTP_STATUS, "final status")
            encoding = response.headers.get("Content-Encoding")
            if encoding is not None and encoding.strip().lower() != "identity":  # CRAWLER-FETCH-6: nothing decoded
                raise CrawlerError(CRAWLER_SOURCE_ENCODING_UNSUPPORTED, "Content-Encoding")
            limit = query["limits"]["max_source_bytes"]
            if response.length is not None and response.length > limit:  # CRAWLER-FETCH-6: before the body
                raise CrawlerError(CRAWLER_SOURCE_TOO_LARGE, "announced over max_source_bytes")
            raw_sha256, raw_size = stream_body(response, limit, deadline, spool_fd)
            break
        finally:
            close_hop(conn, sock)
    evidence = {"schema_version": EVIDENCE_SCHEMA, "hops": hops,
                "raw_content_sha256": raw_sha256, "raw_size_bytes": raw_size}  # CRAWLER-FETCH-8: never the child's word
    last = hops[-1]
    media_type = last["content_type"]
    if media_type is not None:
        media_type = media_type.split(";", 1)[0].strip().lower()  # the media type: parameters removed
    return Retrieval(query["url"], last["url"], media_type, raw_sha256, raw_size, digest_of(evidence),
                     last["status"], last["etag"], last["last_modified"])


# 6.11 Sandbox =================================================================
# The child parses untrusted bytes: without the filter it could open a socket
# or start a process and use the node's network.  Where the filter cannot be
# installed no child runs, and so nothing is fetched (CRAWLER-CHILD-4, D16).


class Sandbox(object):
    """Everything the child's preexec_fn needs, built before the fork.

    Between fork and exec the child may only make system calls: no
    allocation-heavy Python, no locks another thread could hold.  So the
    filter is assembled here, and enter() only calls prctl and setrlimit.
    """

    def __init__(self, libc, spec):
        self.prctl = libc.prctl
        self.spec = spec
        blob = seccomp_program(spec)
        self._filter = ctypes.create_string_buffer(blob, len(blob))  # kept alive as long as the Sandbox
        self._program = SockFprog(len(blob) // 8, ctypes.addressof(self._filter))
        self._address = ctypes.addressof(self._program)

    def clean_room(self):
        """The clean-room claim: what enter() installs, restated (CRAWLER-RESULT-8)."""
        return {"host_platform": self.spec.host_platform, "no_new_privs": True,
                "parser_network_syscalls": "denied", "parser_process_creation": "denied"}

    def enter(self, parent_pid):
        """In the child, after fork, before exec (CRAWLER-CHILD-3, -4).  Any failure stops the exec."""
        if self.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:  # CRAWLER-CHILD-3: dies with the node
            raise OSError("PR_SET_PDEATHSIG")
        if os.getppid() != parent_pid:  # the node died before the line above took effect
            raise OSError("orphaned")
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # CRAWLER-CHILD-4: no core file
        if self.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:  # CRAWLER-CHILD-4: unprivileged seccomp requires it
            raise OSError("PR_SET_NO_NEW_PRIVS")
        # CRAWLER-CHILD-4: no filter, no exec: the parser never runs with the network
        if self.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self._address, 0, 0) != 0:
            raise OSError("PR_SET_SECCOMP")


def prepare_sandbox():
    """A Sandbox for this machine, or CRAWLER_SANDBOX_UNAVAILABLE (CRAWLER-CHILD-4, D16).

    Checked before the fetch: Linux, a 64-bit process on an architecture in
    SECCOMP_ARCHES, prctl reachable, and a kernel that knows seccomp and
    no_new_privs (each PR_GET_* fails with EINVAL otherwise).
    """
    spec = SECCOMP_ARCHES.get(os.uname().machine) if sys.platform.startswith("linux") else None
    libc = load_libc()
    if spec is None or libc is None or struct.calcsize("P") != 8:
        raise CrawlerError(CRAWLER_SANDBOX_UNAVAILABLE, "no seccomp filter for this platform")
    if libc.prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 or libc.prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) < 0:
        raise CrawlerError(CRAWLER_SANDBOX_UNAVAILABLE, "the kernel has no seccomp or no_new_privs")
    return Sandbox(libc, spec)


# 6.12 The child ===============================================================
# The child gets only what it needs and can neither outlive nor flood the
# node: an environment built from nothing, descriptors 0-2, bounded stdout and
# stderr, a deadline, and its group killed and reaped on every path
# (CRAWLER-CHILD-2, -3, -6, -7, -10).

CHILD_THREAD_PINS = (  # the seccomp filter denies clone: native libraries must not start threads
    ("JE_ARROW_MALLOC_CONF", "background_thread:false"),
    ("MKL_NUM_THREADS", "1"),
    ("NUMEXPR_NUM_THREADS", "1"),
    ("OMP_NUM_THREADS", "1"),
    ("OPENBLAS_NUM_THREADS", "1"),
)
INPUT_SCHEMA = "mostlyright-normalization-input.v1"  # the header line the child reads first (CRAWLER-CHILD-5)

ChildOutput = collections.namedtuple("ChildOutput", "returncode stdout_size stderr overflow")


def node_file():
    """This file's absolute path, for the child's argv (CRAWLER-CHILD-1); None when there is no file."""
    try:
        return os.path.abspath(__file__)
    except NameError:
        return None


def child_argv(pin, node_file):
    """The normaliser's argv (CRAWLER-CHILD-1, D8), or CRAWLER_EXECUTABLE_UNAVAILABLE."""
    if pin is not None:
        # CRAWLER-CHILD-1: a relative pin would depend on the cwd; a bad one is found before the fetch
        if not os.path.isabs(pin) or not os.path.isfile(pin) or not os.access(pin, os.X_OK):
            raise CrawlerError(CRAWLER_EXECUTABLE_UNAVAILABLE, "the pinned normaliser")
        return [pin] + CHILD_ARGS
    executable = sys.executable
    if not executable or not os.path.isabs(executable) or not os.access(executable, os.X_OK) or (
            node_file is None or not os.path.isfile(node_file)):
        raise CrawlerError(CRAWLER_EXECUTABLE_UNAVAILABLE, "this file or its interpreter")
    return [executable, "-I", "-S", node_file] + CHILD_ARGS  # CRAWLER-CHILD-1 (D8): -I -S, no PATH lookup


def child_environment(attestation):
    """Exactly six variables, nothing inherited (CRAWLER-CHILD-2)."""
    environment = dict(CHILD_THREAD_PINS)
    environment[CHILD_ATTESTATION_ENV] = attestation
    return environment


def join_helper_threads(bound_s):
    """True once this is the only thread: fork with a preexec_fn is safe only then.

    The transport's lookup threads end on their own and the watchdog thread once retired; this
    waits for them.
    """
    Watchdog.retire()
    until = time.monotonic() + bound_s
    for thread in threading.enumerate():
        if thread is not threading.current_thread():
            thread.join(max(0.0, until - time.monotonic()))
    return threading.active_count() == 1


def spawn_child(argv, environment, sandbox):
    """Start the normaliser in its sandbox (CRAWLER-CHILD-3, -4)."""
    parent = os.getpid()
    try:
        return subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=environment,  # CRAWLER-CHILD-2: nothing inherited: no variable of the node's reaches the parser
            close_fds=True,  # CRAWLER-CHILD-3: descriptors 0, 1 and 2 only
            start_new_session=True,  # CRAWLER-CHILD-3: its own session and process group, for killpg
            cwd="/",  # CRAWLER-CHILD-3: not the node's directory: relative paths reach nothing of the node's
            preexec_fn=lambda: sandbox.enter(parent))  # CRAWLER-CHILD-4: before its program starts
    except subprocess.SubprocessError:  # the preexec_fn failed: the program never ran
        raise CrawlerError(CRAWLER_SANDBOX_UNAVAILABLE, "the sandbox could not be installed") from None
    except OSError:
        raise CrawlerError(CRAWLER_EXECUTABLE_UNAVAILABLE, "exec failed") from None


def kill_group(proc):
    """SIGKILL the child's whole process group, before it is reaped (a zombie keeps the group id)."""
    if proc is not None and proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass


def child_exited(pid):
    """True when the child has exited; it is not reaped, so its group can still be killed."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def end_child(proc):
    """Kill the group, reap, close the pipes: on every path (CRAWLER-CHILD-10)."""
    kill_group(proc)
    try:
        proc.wait(timeout=CHILD_REAP_WAIT_S)
    except subprocess.TimeoutExpired:
        pass
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass


class ChildPipes(object):
    """The child's stdin, stdout and stderr on one selector, one handler per stream (as Popen._communicate).

    Unlike communicate(), stdin is fed from the spool in blocks, stdout is
    spooled as it comes, and an output past its bound sets `overflow`, which
    ends the loop so the caller kills the child at once (CRAWLER-CHILD-5, -6,
    CRAWLER-STREAM-1, -2).
    """

    def __init__(self, proc, header, source_fd, source_size, result_fd):
        self.proc = proc
        self.source_fd, self.source_size, self.result_fd = source_fd, source_size, result_fd
        self.stdin_fd, self.stdout_fd, self.stderr_fd = proc.stdin.fileno(), proc.stdout.fileno(), proc.stderr.fileno()
        for fd in (self.stdin_fd, self.stdout_fd, self.stderr_fd):
            os.set_blocking(fd, False)
        self.pending, self.offset = memoryview(header), 0  # stdin: bytes in hand, then the spool from `offset`
        self.stdout_size, self.stderr, self.overflow, self.open_outputs = 0, bytearray(), None, 2
        self.selector = selectors.DefaultSelector()

    def register(self, wake):
        """Each stream with its handler; `wake`, the stop wakeup fd (None when not abandonable), too."""
        self.selector.register(self.stdin_fd, selectors.EVENT_WRITE, self.feed_stdin)
        self.selector.register(self.stdout_fd, selectors.EVENT_READ, self.drain_stdout)
        self.selector.register(self.stderr_fd, selectors.EVENT_READ, self.drain_stderr)
        if wake is not None:
            self.selector.register(wake, selectors.EVENT_READ, self.notice_stop)

    def feed_stdin(self):
        """Write what is in hand; when it is gone, the next block of the spool, or close stdin at its end."""
        if not self.pending:
            left = self.source_size - self.offset
            chunk = os.pread(self.source_fd, min(IO_CHUNK_BYTES, left), self.offset) if left > 0 else b""
            if not chunk:
                self.close_stdin()  # CRAWLER-CHILD-5: exactly raw_size_bytes after the header
                return
            self.offset += len(chunk)
            self.pending = memoryview(chunk)  # CRAWLER-STREAM-1: fed from the spool in blocks
        try:
            self.pending = self.pending[os.write(self.stdin_fd, self.pending):]
        except BlockingIOError:
            pass
        except OSError:  # EPIPE: the child stopped reading; its exit status will say why
            self.pending = memoryview(b"")
            self.offset = self.source_size
            self.close_stdin()

    def close_stdin(self):
        self.selector.unregister(self.stdin_fd)
        try:
            self.proc.stdin.close()  # the end of the input, or a child that stopped reading
        except OSError:
            pass

    def drain_stdout(self):
        """Spool what the child wrote, never reading past MAX_CRAWLER_RESULT_BYTES + 1."""
        data = os.read(self.stdout_fd, min(IO_CHUNK_BYTES, MAX_CRAWLER_RESULT_BYTES + 1 - self.stdout_size))
        if not data:
            self.selector.unregister(self.stdout_fd)
            self.open_outputs -= 1
            return
        write_all_checked(self.result_fd, memoryview(data))  # CRAWLER-STREAM-2: spooled as it arrives
        self.stdout_size += len(data)
        if self.stdout_size > MAX_CRAWLER_RESULT_BYTES:  # CRAWLER-CHILD-6: killed at once
            self.overflow = "stdout"

    def drain_stderr(self):
        """Keep what the child wrote on stderr, never reading past MAX_CHILD_STDERR_BYTES + 1."""
        data = os.read(self.stderr_fd, MAX_CHILD_STDERR_BYTES + 1 - len(self.stderr))
        if not data:
            self.selector.unregister(self.stderr_fd)
            self.open_outputs -= 1
            return
        self.stderr += data
        if len(self.stderr) > MAX_CHILD_STDERR_BYTES:  # CRAWLER-CHILD-6: 513 bytes is already inadmissible
            self.overflow = "stderr"

    def notice_stop(self):
        """The stop wakeup fd: nothing to do here; the next watch() raises StopRequested."""

    def watch(self, deadline):
        """Before each wait: the stop, the deadline and the child's exit; how long to wait, or None once it exited."""
        if STOP.should_abandon():
            raise StopRequested("stopped while the child ran")  # CRAWLER-STOP-1: killed at once by the caller
        wait = deadline.remaining()
        if wait <= 0:
            # CRAWLER-CHILD-7 (D10): past this the upload window would run out before the PUT
            raise CrawlerError(CRAWLER_CHILD_TIMEOUT, "the child's deadline")
        if self.open_outputs == 0:  # it closed both outputs: wait for its exit, still watching stop and deadline
            if child_exited(self.proc.pid):
                return None
            wait = min(wait, CHILD_EXIT_POLL_S)
        return wait


def drive_child(proc, header, source_fd, source_size, result_fd, deadline):
    """(stdout size, stderr bytes, overflow) once the child exits or must be killed; the caller kills and reaps."""
    pipes = ChildPipes(proc, header, source_fd, source_size, result_fd)
    try:
        pipes.register(STOP.wait_fd())
        while pipes.overflow is None:
            wait = pipes.watch(deadline)
            if wait is None:  # exited, both outputs closed and drained
                break
            for key, _mask in pipes.selector.select(wait):
                key.data()  # feed_stdin, drain_stdout, drain_stderr or notice_stop
        return pipes.stdout_size, bytes(pipes.stderr), pipes.overflow
    finally:
        pipes.selector.close()


def admitted_code(stderr, overflowed):
    """The code a failing child names, if its stderr is admissible; else CHILD_FAILED (CRAWLER-CHILD-8)."""
    if overflowed or not 1 <= len(stderr) <= MAX_CHILD_STDERR_BYTES:
        return CRAWLER_CHILD_FAILED
    # CRAWLER-CHILD-8 (D14), CRAWLER-PEER-1: whitespace around the line is dropped, as the upstream
    # strips it; the code is still only ever one of CHILD_CODES, so nothing of the child's text leaves
    line = stderr.strip()
    try:
        document = parse_canonical(line)
    except JsonError:
        return CRAWLER_CHILD_FAILED
    if (isinstance(document, dict) and set(document) == {"code", "status"}
            and same(document["status"], STATUS_FAILED) and isinstance(document["code"], str)
            and document["code"] in CHILD_CODES):  # CRAWLER-CHILD-8: a closed set
        return document["code"]
    return CRAWLER_CHILD_FAILED


def judge_child(output):
    """Raise the code a finished child stands for; return when its stdout may be a result."""
    if output.overflow == "stdout":  # CRAWLER-CHILD-6: checked first: the kill that cut it made the exit code non-zero
        raise CrawlerError(CRAWLER_CHILD_INVALID, "stdout over MAX_CRAWLER_RESULT_BYTES")
    if output.returncode != 0:  # CRAWLER-CHILD-8: non-zero, or killed by a signal (negative)
        raise CrawlerError(admitted_code(output.stderr, output.overflow == "stderr"), "the child failed")
    if output.stderr or output.overflow == "stderr":  # CRAWLER-CHILD-9: silent on stderr
        raise CrawlerError(CRAWLER_CHILD_INVALID, "exit 0 with stderr")
    if not 1 <= output.stdout_size <= MAX_CRAWLER_RESULT_BYTES:  # CRAWLER-CHILD-9: exit 0 with no output is no result
        raise CrawlerError(CRAWLER_CHILD_INVALID, "no result")


# 6.13 Result binding ==========================================================
# The child's word is never stored unchecked: everything it restates must equal
# what this process fetched or the request says, and its summary what its
# content gives; otherwise the stored receipt could describe bytes nobody
# fetched (CRAWLER-RESULT-1..10, D17).  The names and keys below are also what
# the framing (section 6.7) writes.

RECEIPT_SCHEMA = "hosted-public-https-acquisition-receipt.v3"
OBSERVATION_SCHEMA = "hosted-public-https-source-observation.v3"
NORMALIZED_MEDIA_TYPE = "application/x-ndjson"

RESULT_KEYS = frozenset(("schema_version", "request_digest", "source_id", "adapter_id", "adapter_version",
                         "acquisition_receipt", "observation", "normalized_content", "next_watermark"))
RECEIPT_KEYS = frozenset((
    "schema_version", "source_id", "adapter_id", "adapter_version", "request_digest", "source_url",
    "final_url", "fetched_media_type", "normalized_media_type", "normalized_data_format",
    "normalized_filename", "acquired_at", "raw_content_sha256", "raw_size_bytes",
    "normalized_content_sha256", "normalized_size_bytes", "row_count", "column_names",
    "parsed_schema_digest", "family_id", "family_version", "decode_options_digest", "decode_flags",
    "resource_caps", "reader_budgets", "transport_evidence_digest", "egress_policy_attestation",
    "clean_room", "row_digest", "http_status_code", "etag_digest", "last_modified_digest"))
OBSERVATION_KEYS = frozenset((
    "schema_version", "source_id", "request_digest", "observed_at", "raw_content_sha256",
    "normalized_content_sha256", "row_count", "row_digest", "http_status_code", "etag_digest",
    "last_modified_digest"))
READER_FIELDS = ("family_id", "family_version", "decode_options_digest", "resource_caps", "reader_budgets")


def optional_digest(text):
    """SHA-256 of a header value as UTF-8, or None when the header was absent (CRAWLER-RESULT-4)."""
    return None if text is None else sha256_hex(text.encode("utf-8"))


def is_row_value(value):
    """A value a row line may hold: a string, an integer, a boolean or null (CRAWLER-RESULT-10)."""
    return value is None or isinstance(value, (str, int))  # bool is an int


def content_summary(content, data_format):
    """[row_count, column_names, row_digest, parsed_schema_digest] as the content itself gives them,
    or None when it is not the JSON lines of CRAWLER-RESULT-10."""
    header_end = content.find(b"\n")
    if header_end < 0 or not content.endswith(b"\n"):
        return None
    try:
        columns = parse_canonical(content[:header_end])
        width = len(columns) if isinstance(columns, list) else -1
        rows, start, row_hash = 0, header_end + 1, hashlib.sha256()
        while start < len(content):  # one line at a time: a list of every line would double the memory
            end = content.index(b"\n", start)
            values = parse_canonical(content[start:end])  # CRAWLER-RESULT-10: each row line canonical on its own
            if not (isinstance(values, list) and len(values) == width and all(map(is_row_value, values))):
                return None
            row_hash.update(content[start:end + 1])
            rows, start = rows + 1, end + 1
    except JsonError:
        return None
    return [rows, columns, row_hash.hexdigest(),
            digest_of({"column_names": columns, "data_format": data_format})]


def check_result(data, request, request_digest, retrieval, clean_room):
    """The child's stdout, bound to what this process fetched (CRAWLER-RESULT-1..10).

    Every fault is CRAWLER_CHILD_INVALID: the child computes only the content,
    and its summary (rows, columns, digests) is read off it again here and
    must fit the request's limits.
    """
    def require(ok):
        if not ok:
            raise CrawlerError(CRAWLER_CHILD_INVALID, "the result does not restate what was fetched")

    try:
        result = parse_canonical(data)  # CRAWLER-RESULT-1 (D11): any non-canonical byte is the same fault
    except JsonError:
        raise CrawlerError(CRAWLER_CHILD_INVALID, "not canonical JSON") from None
    require(isinstance(result, dict) and set(result) == RESULT_KEYS)  # CRAWLER-RESULT-2: no key is stored unchecked
    receipt, observation = result["acquisition_receipt"], result["observation"]
    # CRAWLER-RESULT-2: exact keys at every level: no field is stored unchecked
    require(isinstance(receipt, dict) and set(receipt) == RECEIPT_KEYS)
    require(isinstance(observation, dict) and set(observation) == OBSERVATION_KEYS)
    require(same(result["schema_version"], RESULT_SCHEMA) and same(receipt["schema_version"], RECEIPT_SCHEMA)
            and same(observation["schema_version"], OBSERVATION_SCHEMA))  # CRAWLER-RESULT-2: the rules here are v3's

    query, limits = request["query"], request["query"]["limits"]
    for document in (result, receipt):  # CRAWLER-RESULT-3: else a result could be filed under another request or source
        require(same(document["request_digest"], request_digest) and same(document["source_id"], request["source_id"])
                and same(document["adapter_id"], request["adapter_id"])
                and same(document["adapter_version"], request["adapter_version"]))
    require(same(observation["source_id"], request["source_id"])
            and same(observation["request_digest"], request_digest))  # CRAWLER-RESULT-3: it must name the same request

    require(same(receipt["source_url"], query["url"]) and same(receipt["final_url"], retrieval.final_url)
            and same(receipt["fetched_media_type"], retrieval.media_type))  # CRAWLER-RESULT-4: never the child's claim
    # CRAWLER-RESULT-4: size and evidence as this process measured them, the attestation the request's
    require(same(receipt["raw_size_bytes"], retrieval.raw_size)
            and same(receipt["transport_evidence_digest"], retrieval.evidence_digest)
            and same(receipt["egress_policy_attestation"], request["egress_policy_attestation"]))
    for document in (receipt, observation):  # CRAWLER-RESULT-4: both documents
        require(same(document["raw_content_sha256"], retrieval.raw_sha256)
                and same(document["http_status_code"], retrieval.status)
                and same(document["etag_digest"], optional_digest(retrieval.etag))
                and same(document["last_modified_digest"], optional_digest(retrieval.last_modified)))

    encoded = result["normalized_content"]
    require(isinstance(encoded, str))
    try:
        content = base64.b64decode(encoded, validate=True)
    except ValueError:  # binascii.Error
        content = None
    # CRAWLER-RESULT-5: one base64 spelling per content (zero padding bits), as re-encoding gives
    require(content is not None and base64.b64encode(content).decode("ascii") == encoded)
    require(len(content) <= limits["max_normalized_bytes"])  # CRAWLER-RESULT-5: never more than the requester allowed
    content_sha256 = sha256_hex(content)  # CRAWLER-RESULT-5: the node's own hash, never the child's
    require(same(receipt["normalized_content_sha256"], content_sha256)
            and same(observation["normalized_content_sha256"], content_sha256)
            and same(receipt["normalized_size_bytes"], len(content)))  # CRAWLER-RESULT-5: the receipt must describe it
    require(same(receipt["normalized_media_type"], NORMALIZED_MEDIA_TYPE)
            and same(receipt["normalized_data_format"], query["data_format"])
            and same(receipt["normalized_filename"], query["filename"]))  # CRAWLER-RESULT-5: as the request named them

    require(same(receipt["acquired_at"], request["requested_at"])
            and same(observation["observed_at"], request["requested_at"]))  # CRAWLER-RESULT-6: same input, same bytes

    rows, columns = receipt["row_count"], receipt["column_names"]
    require(is_int(rows) and 0 <= rows <= limits["max_rows"])  # CRAWLER-RESULT-7: an integer, not true
    require(same(observation["row_count"], rows))  # CRAWLER-RESULT-7: else the receipt and the observation disagree
    require(isinstance(columns, list) and 1 <= len(columns) <= limits["max_columns"]
            and all(isinstance(name, str) and name for name in columns))  # CRAWLER-RESULT-7: capped, no blank name
    for digest in (receipt["parsed_schema_digest"], receipt["row_digest"]):
        # CRAWLER-RESULT-7: lowercase hex only, so equal digests are equal strings
        require(isinstance(digest, str) and bool(_DIGEST_RE.fullmatch(digest)))
    require(same(observation["row_digest"], receipt["row_digest"]))  # CRAWLER-RESULT-7: else the two documents disagree
    # CRAWLER-RESULT-10 (D17): the summary is recomputed from the content, else a normaliser's word is stored
    require(same(content_summary(content, query["data_format"]),
                 [rows, columns, receipt["row_digest"], receipt["parsed_schema_digest"]]))

    require(same(receipt["clean_room"], clean_room))  # CRAWLER-RESULT-8: only what this node installed may be claimed
    require(all(receipt[field] is None for field in READER_FIELDS))  # CRAWLER-RESULT-9: no Reader ran, none claimed
    require(same(receipt["decode_flags"], []))  # CRAWLER-RESULT-9: no Reader, so no decode flags to claim
    require(result["next_watermark"] is None)  # CRAWLER-RESULT-9: one-shot: no watermark for a next run to trust


# 6.14 Upload ==================================================================
# One create-only PUT of the spooled bytes, never retried and never with an
# expired URL: a second PUT only adds an ambiguous record (D12).  Once its last
# byte is going out the store may commit it, so a stop waits for the answer
# instead of reporting a cancellation over a stored result (CRAWLER-STOP-4).
# The failure bundle goes through the same capability (CRAWLER-REPORT-2).


def body_pieces(body, size):
    """The PUT body in pieces: `body` itself when it is bytes, else `size` bytes of a spool fd."""
    if isinstance(body, (bytes, bytearray)):
        yield body
        return
    offset = 0
    while offset < size:
        chunk = os.pread(body, min(IO_CHUNK_BYTES, size - offset), offset)
        if not chunk:
            raise OSError(errno.EIO, "the spool is shorter than its Content-Length")
        yield chunk
        offset += len(chunk)


def send_body(sock, body, size, before_last_byte):
    """Send the PUT body, in pieces a stop can cut between (CRAWLER-STOP-4).

    Every byte but the last goes out while a stop may still cut the
    connection: the store commits nothing shorter than the Content-Length.
    `before_last_byte()` runs just before the last byte is sent (it may raise
    to keep it back): taken after the last send instead, a stop landing in
    between would abort a PUT the store then commits, and the node would
    report a cancellation over a stored result.
    """
    sent = 0
    for piece in body_pieces(body, size):
        if STOP.should_abandon():  # CRAWLER-STOP-4: a body still going out is aborted
            raise StopRequested("stop requested during the PUT body")
        view = memoryview(piece)
        if sent + len(view) == size:
            sock.sendall(view[:-1])
            before_last_byte()  # CRAWLER-STOP-4: from here the body counts as sent
            sock.sendall(view[-1:])  # CRAWLER-UPLOAD-2: the child's bytes, never re-encoded
        else:
            sock.sendall(view)  # CRAWLER-UPLOAD-2: the spool's bytes unchanged: what was checked is what is stored
        sent += len(view)
    if size == 0:
        before_last_byte()  # an empty body went out with the headers (no result or bundle is empty)


def put_object(config, capability, body, size, on_body_sent=None):
    """One PUT through the capability (CRAWLER-UPLOAD-1..3, -6): return when stored, else PutFailed."""
    request_target = capability.path + "?" + capability.query  # CRAWLER-UPLOAD-1: byte for byte as received
    budget = Deadline(config.timeouts.upload)  # CRAWLER-UPLOAD-6: connect to the end of the answer
    body_sent = False
    try:
        with http_exchange(config.storage_origin + request_target, budget) as session:  # CRAWLER-UPLOAD-1: the origin
            conn = session.conn
            conn.putrequest("PUT", request_target, skip_accept_encoding=True)  # CRAWLER-UPLOAD-1: Host first
            conn.putheader("Content-Length", str(size))  # CRAWLER-UPLOAD-1: exact, never chunked, no Expect
            for name, value in capability.headers:  # CRAWLER-UPLOAD-1: the seven, in capability order
                conn.putheader(name, value)
            conn.endheaders()

            def whole_body_going_out():
                nonlocal body_sent
                if on_body_sent is not None:
                    on_body_sent()  # may raise to keep the last byte back
                body_sent = True  # CRAWLER-STOP-4: from here a failure leaves the result's fate unknown
            send_body(session.sock, body, size, whole_body_going_out)
            response = conn.getresponse()
            if response.status not in (200, 201):  # CRAWLER-UPLOAD-3: a 3xx is never followed
                raise PutFailed(True, "store status")
            declared = announced_length(response)
            # CRAWLER-UPLOAD-3: an answer announced too large is refused before a byte is read
            if declared is not None and declared > MAX_UPLOAD_RESPONSE_BYTES:
                raise PutFailed(True, "answer too large")
            # CRAWLER-UPLOAD-3: at most the bound + 1 bytes, whatever the store sends
            answer, count = read_body(response, MAX_UPLOAD_RESPONSE_BYTES, budget)
            PROCESS.wipe(answer)  # not a secret, but registered like every answer buffer
            if count > MAX_UPLOAD_RESPONSE_BYTES:
                raise PutFailed(True, "answer too large")
    except PutFailed:
        raise
    except Exception:  # transport error, TLS failure, the deadline, a stop
        raise PutFailed(body_sent) from None


def failure_bundle(request, request_digest, code):
    """The failure bundle's canonical bytes: the code and the request's identity, nothing else."""
    return canonical_bytes({"schema_version": FAILURE_SCHEMA, "request_digest": request_digest,
                            "source_id": request["source_id"], "adapter_id": request["adapter_id"],
                            "adapter_version": request["adapter_version"], "failure_code": code})


# 7 Lifecycle ==================================================================
# One Run, bootstrap to outcome, then finish(): the status line and the exit
# status.  A failure reported in the wrong place reaches nobody, and one
# reported twice contradicts itself (CRAWLER-REPORT-1..4).


class Run(object):
    """One crawler session, from the bootstrap to its Outcome.

    Where a failure goes depends on how far the run got (CRAWLER-REPORT-1):
        identity, :redeem, the capability                    end_before_capability
            (stderr-only, or :fail for the three bootstrap codes)
        checks before the fetch, fetch, child, result        end_with_bundle
            (a failure bundle through the capability)
        the result PUT                                        upload_result
            (stderr-only; after a stop, a cancelled bundle or nothing)
    Every path ends in an Outcome, from which finish() writes the one status line.
    A stop (StopRequested) lands in the generic branches: STOP.requested makes it CANCELLED.
    """

    def __init__(self, config):
        self.config = config  # read once by configure() (section 6.3), before the handlers
        self.child = None  # the running child (a Popen) until it is reaped: the hard exit kills its group
        self.request = None
        self.request_digest = None
        self.capability = None  # set once CRAWLER-CAP-1..9 passed: from then on failures go in a bundle
        self.source_spool = None
        self.result_spool = None

    def execute(self):
        """Run every phase; return the Outcome.  Never raises for anything a peer or child does."""
        try:
            try:
                STOP.check("the bootstrap")  # abandonable until the bundle or the result's last byte
                self.bootstrap()
            except CrawlerError as exc:
                return self.end_before_capability(exc.code)
            except Exception:  # CRAWLER-REPORT-5 (D15): unforeseen, still one status line
                return self.end_before_capability(CRAWLER_JOB_FAILED)
            try:
                result_size = self.crawl()
            except CrawlerError as exc:
                return self.end_with_bundle(exc.code)
            except Exception:  # CRAWLER-REPORT-5 (D15): unforeseen, reported like its phase's failures
                return self.end_with_bundle(CRAWLER_JOB_FAILED)
            return self.upload_result(result_size)
        finally:
            self.clean_up()

    def window_left(self):
        """Seconds left of the upload window (CRAWLER-CAP-8): wall clock, as the store judges it."""
        return self.capability.window_end - time.time()

    def work_budget(self, limit_s):
        """A phase's time: its timeout, shortened to keep UPLOAD_RESERVE_S of the window free."""
        # CRAWLER-FETCH-7, CRAWLER-CHILD-7: else a slow phase leaves the result PUT no window
        budget = min(limit_s, self.window_left() - UPLOAD_RESERVE_S)
        if budget <= 0:  # CRAWLER-CHILD-7: reported now, while the capability still works
            raise CrawlerError(CRAWLER_UPLOAD_WINDOW_INSUFFICIENT, "no time left before the upload reserve")
        return budget

    # -- bootstrap --

    def bootstrap(self):
        """Identity token, one :redeem, the strict parse (CRAWLER-IDENTITY-*, CRAWLER-BOOT-*, CRAWLER-CAP-*)."""
        config = self.config
        token = answer = None
        try:
            # CRAWLER-IDENTITY-1: the token names the one route it may be used on
            audience = "%s/%s:redeem" % (config.audience_base, config.session_id)
            token, length = mint_identity_token(config, audience)  # CRAWLER-IDENTITY-2: minted just before the call
            answer, count = redeem(config, token, length)
            PROCESS.wipe(token)  # CRAWLER-SECRET-3: as soon as it is used
            try:
                self.request, self.request_digest, self.capability = parse_bootstrap(answer, count, config)
            except CrawlerError:
                raise
            except Exception:  # CRAWLER-REPORT-5: whatever the answer holds
                raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_INVALID, "unforeseen shape") from None
        finally:
            PROCESS.wipe(token)  # CRAWLER-SECRET-3: on every path
            PROCESS.wipe(answer)

    def end_before_capability(self, code):
        """Status line (and :fail for its three codes) for a run that never got a capability."""
        if STOP.requested:  # CRAWLER-STOP-2: no :fail, no retry, whatever else went wrong
            return Outcome(STOPPED, CRAWLER_CANCELLED)
        if REPORT_PLACE.get(code) == FAIL_ROUTE:
            report_failure(self.config, code)  # CRAWLER-FAIL-2: best effort; the outcome is the same either way
            if STOP.requested:  # CRAWLER-STOP-2: a stop cut the report short
                return Outcome(STOPPED, CRAWLER_CANCELLED)
        return Outcome(FAILED, code)  # CRAWLER-REPORT-1: JOB_FAILED is stderr-only here

    # -- the crawl --

    def crawl(self):
        """Checks before the fetch, the fetch, the child, the result binding: the result's size."""
        config, request = self.config, self.request
        STOP.check("the fetch")  # CRAWLER-STOP-3: a stop since the capability validated ends here, in a cancelled bundle
        argv = child_argv(config.child_pin, node_file())  # CRAWLER-CHILD-1: found before the fetch
        sandbox = prepare_sandbox()  # CRAWLER-CHILD-4 (D16): a child never runs without it, so no fetch either
        attestation = config.policy.attestation  # None under the network's policy (D18): nothing to compare
        if attestation is not None and attestation != request["egress_policy_attestation"]:
            # CRAWLER-FETCH-1: before any source: a request meant for another policy would fetch under ours
            raise CrawlerError(CRAWLER_EGRESS_POLICY_MISMATCH, "the request names another egress policy")
        fetch_deadline = Deadline(self.work_budget(config.timeouts.fetch))  # CRAWLER-FETCH-7: keeps the PUT's reserve
        self.source_spool = make_spool(config.tmpdir)  # CRAWLER-STREAM-1: a source in memory risks an OOM kill
        retrieval = self.fetch(fetch_deadline)
        STOP.check("the child")
        child_deadline = Deadline(self.work_budget(config.timeouts.child))  # CRAWLER-CHILD-7: keeps the PUT's reserve
        self.result_spool = make_spool(config.tmpdir)  # CRAWLER-STREAM-2: stdout drained as it comes, sent from here
        output = self.run_child(argv, sandbox, retrieval, child_deadline)
        judge_child(output)
        data = read_spool(self.result_spool.fileno(), output.stdout_size)
        try:
            check_result(data, request, self.request_digest, retrieval, sandbox.clean_room())
        except CrawlerError:
            raise
        except Exception:  # CRAWLER-REPORT-5: whatever the child wrote
            raise CrawlerError(CRAWLER_CHILD_INVALID, "unforeseen shape") from None
        return output.stdout_size

    def fetch(self, deadline):
        """fetch_source() under one elapsed deadline, every failure mapped to a fetch code."""
        try:
            with Watchdog(deadline, STOP.abandon_all):  # CRAWLER-FETCH-7 (D9): a drip is cut like a stall
                return fetch_source(self.request, self.config.policy, deadline, self.source_spool.fileno())
        except CrawlerError:
            raise
        except Exception as exc:
            if STOP.should_abandon() or isinstance(exc, StopRequested):
                raise StopRequested("stopped during the fetch") from None  # CRAWLER-STOP-3: a stop's cut, not a bad source
            if deadline.expired() or isinstance(exc, (TimeoutError, socket.timeout)):
                # CRAWLER-FETCH-7: the watchdog cut it: a slow source, not a broken one
                raise CrawlerError(CRAWLER_SOURCE_TIMEOUT, "the fetch deadline") from None
            # CRAWLER-FETCH-7: refused, reset, TLS or a malformed answer: the source is unavailable
            raise CrawlerError(CRAWLER_SOURCE_UNAVAILABLE, "transport error") from None

    def run_child(self, argv, sandbox, retrieval, deadline):
        """Start the child, feed and drain it, always kill and reap it: its ChildOutput."""
        request = self.request
        header = canonical_bytes({  # CRAWLER-CHILD-5: the normalisation input; no token, capability or URL
            "schema_version": INPUT_SCHEMA,
            "request": request,
            "request_digest": self.request_digest,
            "retrieval": {
                "source_url": retrieval.source_url, "final_url": retrieval.final_url,
                "media_type": retrieval.media_type, "raw_content_sha256": retrieval.raw_sha256,
                "raw_size_bytes": retrieval.raw_size, "transport_evidence_digest": retrieval.evidence_digest,
                "http_status_code": retrieval.status, "etag": retrieval.etag,
                "last_modified": retrieval.last_modified},
            "clean_room": sandbox.clean_room(),
        }) + b"\n"
        if not join_helper_threads(HELPER_THREAD_JOIN_S):  # a preexec_fn after fork is safe only single-threaded
            raise CrawlerError(CRAWLER_SANDBOX_UNAVAILABLE, "a helper thread is still alive")
        STOP.check("the child")
        proc = spawn_child(argv, child_environment(request["egress_policy_attestation"]), sandbox)
        self.child = proc
        try:
            stdout_size, stderr, overflow = drive_child(
                proc, header, self.source_spool.fileno(), retrieval.raw_size, self.result_spool.fileno(), deadline)
        finally:
            end_child(proc)  # CRAWLER-CHILD-10: killed and reaped on every path, a stop and a timeout included
            self.child = None
        return ChildOutput(proc.returncode, stdout_size, stderr, overflow)

    # -- endings after the capability --

    def end_with_bundle(self, code):
        """Report a failure by PUTting the failure bundle through the capability (CRAWLER-REPORT-2)."""
        if code == CRAWLER_JOB_FAILED and STOP.requested:
            code = CRAWLER_CANCELLED  # an unforeseen error during a stop is the stop's doing
        stopped = STOP.requested
        # CRAWLER-UPLOAD-5: never present an expired URL; the bundle is then simply not
        # delivered, and the line keeps its own code (CRAWLER-REPORT-2). (Every code that
        # reaches this point is a bundle code; the first test only keeps it so.)
        if REPORT_PLACE.get(code) != BUNDLE or self.window_left() < UPLOAD_MIN_WINDOW_S:
            return Outcome(STOPPED if stopped else FAILED, code)  # (a stop: 143, D13)
        STOP.abandonable = False  # CRAWLER-STOP-3: the bundle is what a stop asks for; only STOP-5 cuts it
        body = failure_bundle(self.request, self.request_digest, code)  # CRAWLER-REPORT-6: the code, nothing else
        try:
            put_object(self.config, self.capability, body, len(body))  # CRAWLER-REPORT-2: the same seven headers
            delivered = True
        except Exception:
            delivered = False
        # CRAWLER-REPORT-2, CRAWLER-STOP-3 (D13): a stop exits 143, bundle stored or not: 0 would read as done
        return Outcome(BUNDLE_OUTCOME[(delivered, STOP.requested)], code)

    def upload_result(self, size):
        """The result PUT, attempted once (CRAWLER-UPLOAD-*); exit 0, silent, when stored."""
        if STOP.requested:  # CRAWLER-STOP-3: a stop before the result PUT began
            return self.end_with_bundle(CRAWLER_CANCELLED)
        if self.window_left() < UPLOAD_MIN_WINDOW_S:  # CRAWLER-UPLOAD-5: the store would refuse an expired URL
            return Outcome(FAILED, CRAWLER_UPLOAD_CAPABILITY_EXPIRED)

        def body_sent():
            STOP.abandonable = False  # CRAWLER-STOP-4: the body's last piece is going out: wait for the answer
            if STOP.requested:  # a stop that came first, its handler perhaps cutting the connection already
                raise StopRequested("stop requested before the last byte of the body")

        try:
            put_object(self.config, self.capability, self.result_spool.fileno(), size,
                       on_body_sent=body_sent)  # CRAWLER-UPLOAD-2: from the spool, exact Content-Length
        except Exception as exc:
            action = AFTER_FAILED_RESULT_PUT[(getattr(exc, "body_sent", True), STOP.requested)]
            if action == "cancelled-bundle":  # CRAWLER-STOP-4: an aborted body is followed by a cancelled bundle
                return self.end_with_bundle(CRAWLER_CANCELLED)
            if action == "cancelled-unknown":  # CRAWLER-STOP-4: fate unknown, no bundle
                return Outcome(STOPPED, CRAWLER_CANCELLED)
            # CRAWLER-UPLOAD-4 (D12): no retry, no bundle: create-only refuses a second PUT if the first was stored
            return Outcome(FAILED, CRAWLER_UPLOAD_FAILED)
        return Outcome(STORED, None)  # CRAWLER-REPORT-3: success is silent, even after a stop (STOP-4)

    def clean_up(self):
        """No child, no scratch file, no secret left, whatever happened (CRAWLER-CHILD-10, CRAWLER-STREAM-3)."""
        if self.child is not None:
            end_child(self.child)
            self.child = None
        for spool in (self.source_spool, self.result_spool):
            if spool is not None:
                try:
                    spool.close()  # already unlinked: closing frees the space
                except OSError:
                    pass
        PROCESS.wipe_all()  # CRAWLER-SECRET-3: a buffer an error path skipped is wiped here

    def kill_child(self):
        """PROCESS.before_exit: a hard exit kills the child's group first (CRAWLER-CHILD-10, CRAWLER-STOP-5)."""
        kill_group(self.child)  # now, with its group; the parent-death signal is only the backstop


def lifecycle(config):
    """The run: its Outcome, which finish() turns into the status line and exit status."""
    job_imports()  # 1: the modules a refused configuration and the normaliser never need
    run = Run(config)
    PROCESS.before_exit = run.kill_child
    return run.execute()


def defect_outcome(exc):
    """A defect in this file still ends in one status line (CRAWLER-REPORT-5, D15); after a stop, the stop's."""
    if STOP.requested:
        return Outcome(STOPPED, CRAWLER_CANCELLED)
    return Outcome(FAILED, CRAWLER_JOB_FAILED)


def finish(outcome):
    """Write the status line (none for a stored result) and fix the exit status, once (CRAWLER-REPORT-3)."""
    status = STATUS_REPORTED if outcome.kind in (REPORTED, STOPPED_REPORTED) else STATUS_FAILED
    line = None if outcome.kind == STORED else status_line(outcome.code, status)
    return PROCESS.settle(2, line, EXIT_STATUS[outcome.kind], signals=STATUS_SIGNALS)


# 8 main() =====================================================================
# The same entry point in every node.  A usage error is exit 2, a start-up
# check's failure its status line and exit 1 (CRAWLER-ARGV-1, CRAWLER-STOP-1,
# CRAWLER-REPORT-5).

USAGE = """usage: %(prog)s --crawler-session-id UUID
       %(prog)s --help

The reference crawler job.  With the platform's workload identity it redeems
the session's single-use bootstrap, fetches the session's public source under
the egress policy, normalises it in a networkless child and stores the result
with one create-only signed PUT.  Silent on success; otherwise one line
{"code":"...","status":"failed"|"reported"} on stderr.

Environment:
  MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET           the bucket results go to
  MOSTLYRIGHT_CRAWLER_BOOTSTRAP_AUDIENCE_BASE  identity audience base (https URL)
  MOSTLYRIGHT_CRAWLER_BOOTSTRAP_URL_BASE       broker route base (https URL)
  CLOUD_RUN_EXECUTION                          the execution name (Cloud Run sets it)
  MOSTLYRIGHT_CRAWLER_EGRESS_POLICY            optional: the egress policy, canonical JSON
                                               (unset: any host, port 443, public addresses)
  MOSTLYRIGHT_CRAWLER_CHILD                    optional: absolute path of another normaliser
  MOSTLYRIGHT_CRAWLER_BOOTSTRAP_TIMEOUT_S, _FETCH_TIMEOUT_S, _CHILD_TIMEOUT_S,
  _UPLOAD_TIMEOUT_S                            optional: lower a timeout (seconds)
  GCE_METADATA_HOST, STORAGE_EMULATOR_HOST     optional: metadata server, storage origin
  SSL_CERT_FILE, TMPDIR                        CA bundle; scratch directory

Exit status: 0 stored (the result, or a failure bundle), 1 failed, 2 usage
error, 143 stopped (SIGTERM or SIGINT).  Contract: contract/crawler.md.
""" % {"prog": PROGRAM}


def main(argv=None):
    """Run the node, or the child mode its command line names; return the exit status.  Never raises."""
    tokens = list(sys.argv[1:] if argv is None else argv)
    for prefix, child_main in CHILD_MODES:  # 6.7: this file, started again as its own child
        if tokens[:len(prefix)] == list(prefix):
            return child_main(tokens[len(prefix):])
    try:
        config = configure(tokens, os.environ)  # 6.3: argv and environment, read once; None: --help
    except UsageError as exc:  # CRAWLER-ARGV-1: a fixed text naming the option, never its value
        write_all(2, exc.text.encode("ascii", "replace"))
        return exc.exit_code
    if config is None:  # CRAWLER-NODE-2: the usage, with nothing read and nothing sent
        write_all(1, USAGE.encode("ascii"))
        return EXIT_OK
    try:
        start_process()  # 6.1: wake pipes and stop handlers, before the first request (CRAWLER-STOP-1)
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

# ---- BEGIN BLOCK strict_json (nodes/blocks/strict_json.py) ----
# strict_json: one canonical encoding per document, so a node, its child and
# the platform compute the same digests; parsers that refuse duplicate keys,
# NaN, out-of-range integers and deep nesting in time linear in the input, so
# a hostile answer is refused, neither misread nor waited on.  Floats are
# refused unless the caller's document may hold them (floats=True).

MAX_JSON_DEPTH = 32  # nesting of any JSON a node or its child parses
MAX_SAFE_INTEGER = 2 ** 53 - 1  # the canonical integer range, +-(2^53 - 1)

# A string is skipped whole (brackets inside do not count); one that never
# closes runs to the end of the text in one match, so the scan stays linear:
# with a closing quote required, each of N unclosed quotes rescans to the end.
_JSON_TOKEN_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)
_JSON_BOM = b"\xef\xbb\xbf"  # the parser's own copy: a node's section 3 may drop or change its own


class JsonError(ValueError):
    """The parsers' only error, whatever the input; callers re-raise it with their phase's code."""

    def __init__(self, detail="not acceptable JSON"):
        super().__init__(detail)
        self.detail = detail


def canonical_bytes(value, ascii=False):
    """The canonical encoding of a JSON value.

    Sorted keys, no whitespace, UTF-8 (strict: a lone surrogate raises), and
    NaN or Infinity refused (ValueError); a finite float is written as
    Python writes it.  `ascii` writes every non-ASCII character as a \\u
    escape, for a contract whose digests are taken over that spelling.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii,
                      allow_nan=False).encode("utf-8")


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def digest_of(value, ascii=False):
    """A document's digest: lowercase hex SHA-256 of its canonical bytes."""
    return sha256_hex(canonical_bytes(value, ascii))


def _unique_pairs(pairs):
    document = {}
    for key, value in pairs:
        if key in document:
            raise ValueError("duplicate key")  # the parser refuses duplicate keys
        document[key] = value
    return document


def _refuse_float(text):
    raise ValueError("a float")


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):  # 1e999 reads as infinity: out of range, like NaN
        raise ValueError("a number out of range")
    return value


def _refuse_constant(text):
    raise ValueError("NaN or Infinity")


def _checked_int(text):
    digits = text[1:] if text.startswith("-") else text
    if text == "-0" or len(digits) > 16:  # 2^53 - 1 has 16 digits: no 4000-digit int() is ever built
        raise ValueError("an integer out of range")
    value = int(text)
    if abs(value) > MAX_SAFE_INTEGER:
        raise ValueError("an integer out of range")
    return value


def parse_lenient(data, floats=False):
    """A JSON value from UTF-8 bytes, under the value rules; JsonError otherwise.

    Whitespace and key order are free.  Refused: a BOM, invalid UTF-8,
    duplicate keys, NaN/Infinity, integers outside +-(2^53 - 1), -0, lone
    surrogates, nesting deeper than MAX_JSON_DEPTH, and floats unless
    `floats` (then only finite ones).  The depth is counted by a linear scan
    before json.loads runs, so a 100,000-deep document costs one pass
    instead of a RecursionError.  Nothing but JsonError ever escapes.
    """
    try:
        if bytes(data[:3]) == _JSON_BOM:
            raise ValueError("a byte-order mark")
        text = str(data, "utf-8")  # strict: invalid UTF-8 raises
        check_depth(text)
        value = json.loads(text, object_pairs_hook=_unique_pairs,
                           parse_float=_finite_float if floats else _refuse_float,
                           parse_constant=_refuse_constant, parse_int=_checked_int)
        canonical_bytes(value)  # a lone surrogate from a \ud800 escape cannot be encoded
    except Exception:  # RecursionError and MemoryError included: the parser's only error is its own
        raise JsonError() from None
    return value


def check_depth(text):
    """ValueError when the JSON `text` nests deeper than MAX_JSON_DEPTH: one linear scan, before any parser."""
    depth = 0
    for match in _JSON_TOKEN_RE.finditer(text):  # strings are skipped whole, so brackets in them do not count
        token = match.group()
        if token == "[" or token == "{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise ValueError("nested too deep")
        elif token == "]" or token == "}":
            depth -= 1


def parse_canonical(data, floats=False, ascii=False):
    """The lenient parser, plus: re-encoding the value gives back `data` exactly."""
    value = parse_lenient(data, floats)
    if canonical_bytes(value, ascii) != data:
        raise JsonError("not the canonical encoding")
    return value


def same(value, expected):
    """Equal as JSON: the same canonical encoding, so True is not 1 and "1" is not 1."""
    try:
        return canonical_bytes(value) == canonical_bytes(expected)
    except (TypeError, ValueError):
        return False


def is_int(value):
    """A JSON integer; True and False are not integers here."""
    return isinstance(value, int) and not isinstance(value, bool)
# ---- END BLOCK strict_json ----

# ---- BEGIN BLOCK forms (nodes/blocks/forms.py) ----
# forms: one spelling for every value that ends up in a URL, a header or a
# route.  A second spelling slips past an exact comparison, a space or CR
# splits a request line, and a numeric host name reaches an address no policy
# listed.  Each test returns a value or None (False), never raises.  The rules
# are the crawler contract's (CRAWLER-CONFIG-2, -4); the session contract takes
# them over (its section URLs, D32).

_DIGEST_RE = re.compile(r"[0-9a-f]{64}")
_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]")
_DIGITS_RE = re.compile(r"[0-9]+")  # ASCII digits only: \d would take Arabic-Indic digits
_JWS_RE = re.compile(rb"[A-Za-z0-9_-]{1,8192}\.[A-Za-z0-9_-]{1,8192}\.[A-Za-z0-9_-]{1,8192}")
_PRINTABLE_RE = re.compile(r"[\x21-\x7e]+")  # what a request line can carry: no space, control or non-ASCII
_TIMESTAMP_RE = re.compile(
    r"([0-9]{4})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r"T([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:\.([0-9]{1,6}))?Z")
_DNS_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_DNS_NAME_RE = re.compile(r"(?=.{1,253}\Z)%s(?:\.%s)*" % (_DNS_LABEL, _DNS_LABEL))
_NUMERIC_LABEL_RE = re.compile(r"[0-9]+|0x[0-9a-f]*")
_HOSTPORT_RE = re.compile(
    r"(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::([1-9][0-9]{0,4}))?")
_FORBIDDEN_IN_PATH = ("%", "\\", "//", "/./", "/../")


def is_canonical_uuid(value):
    """str(uuid.UUID(v)) == v: lowercase, hyphenated, 36 characters, any version."""
    if not isinstance(value, str) or len(value) != 36:
        return False
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


def parse_timestamp(value):
    """Epoch seconds of a canonical UTC timestamp (a real date, Z, 0-6 fraction digits), else None."""
    match = _TIMESTAMP_RE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction = match.groups()
    try:
        moment = datetime.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                                   int((fraction or "0").ljust(6, "0")), tzinfo=datetime.timezone.utc)
    except ValueError:  # February 30, year 0
        return None
    return moment.timestamp()


def is_dns_name(host):
    """A lowercase DNS name that no resolver reads as an IP literal.

    Resolvers read a name whose last label is all digits or 0x-hex as an
    address (127.1, 0x7f.1, 2130706433), so such a name could reach any IP
    past a check that only lists names.
    """
    return (isinstance(host, str) and bool(_DNS_NAME_RE.fullmatch(host))
            and not _NUMERIC_LABEL_RE.fullmatch(host.rsplit(".", 1)[-1]))


def origin_text(host, port, scheme="https"):
    """scheme://host[:port], with an IPv6 host in brackets."""
    shown = "[%s]" % host if ":" in host else host
    return scheme + "://" + shown + ("" if port is None else ":%d" % port)


def split_https(value, scheme="https"):
    """(host, port, path) of an https URL written in its one spelling, else None.

    The whole value must equal https:// + lowercase host + (:port) + path: so
    an uppercase host, an empty or zero-padded port, `:443`, userinfo, a
    query or fragment (even empty ones) are all refused.
    """
    if not isinstance(value, str) or not 1 <= len(value) <= 2048 or not _PRINTABLE_RE.fullmatch(value):
        return None  # the value goes on a request line: no space, control character or non-ASCII
    try:
        parts = urllib.parse.urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if parts.scheme != scheme or not host or "@" in parts.netloc or parts.query or parts.fragment:
        return None
    default_port = 443 if scheme == "https" else 80
    if port is not None and (port == default_port or not 1 <= port <= 65535):  # CRAWLER-CONFIG-2 (D3): never :443
        return None
    if value != origin_text(host, port, scheme) + parts.path:  # CRAWLER-CONFIG-2: one spelling per URL
        return None
    return host, port, parts.path


def check_storage_origin(value):
    """The storage origin: exactly https://host[:port] or http://host[:port], or None.

    Plain http is for a stock Cloud Storage emulator on a developer's machine:
    it is accepted here and nowhere else, and the node says so on stderr.
    """
    scheme = "http" if isinstance(value, str) and value.startswith("http://") else "https"
    parts = split_https(value, scheme)
    if parts is None or parts[2] != "":  # CRAWLER-CONFIG-4: nothing after the authority
        return None
    return value


def check_metadata_host(value):
    """The metadata server's host[:port], or None."""
    match = _HOSTPORT_RE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    host, port = match.groups()
    if port is not None and int(port) > 65535:
        return None
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
    return value
# ---- END BLOCK forms ----

# ---- BEGIN BLOCK seccomp (nodes/blocks/seccomp.py) ----
# seccomp: the filter a node's networkless child runs under.  A child that
# parses untrusted bytes could otherwise open a socket or start a process and
# use the node's network.  This block only builds the program; installing it
# (prctl PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP) is the node's, in the child.

# Linux prctl(2) and seccomp(2) numbers (include/uapi/linux/prctl.h, seccomp.h, filter.h).
PR_SET_PDEATHSIG = 1
PR_GET_SECCOMP = 21
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
SECCOMP_MODE_FILTER = 2
BPF_LD_W_ABS = 0x20
BPF_JMP_JEQ_K = 0x15
BPF_JMP_JGE_K = 0x35
BPF_RET_K = 0x06
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_DATA_NR = 0  # offsetof(struct seccomp_data, nr)
SECCOMP_DATA_ARCH = 4  # offsetof(struct seccomp_data, arch)
X32_SYSCALL_BIT = 0x40000000

ArchSpec = collections.namedtuple("ArchSpec", "audit_arch host_platform denied enosys")
# The architectures the sandbox knows.  Only a table read off the kernel's own
# syscall list belongs here: a wrong number silently lets a syscall through.
SECCOMP_ARCHES = {
    "x86_64": ArchSpec(
        audit_arch=0xC000003E,  # AUDIT_ARCH_X86_64; i386 (int 0x80) has another and is killed
        host_platform="linux-amd64",  # CRAWLER-RESULT-8: restated in the clean-room claim: the ABI this table filters
        denied=(41, 42, 43, 44, 45,  # socket connect accept sendto recvfrom
                46, 47, 48, 49, 50,  # sendmsg recvmsg shutdown bind listen
                51, 52, 53, 54, 55,  # getsockname getpeername socketpair setsockopt getsockopt
                56, 57, 58,  # clone fork vfork
                101,  # ptrace
                288, 299, 307,  # accept4 recvmmsg sendmmsg
                310, 311,  # process_vm_readv process_vm_writev
                322,  # execveat
                425),  # io_uring_setup
        enosys=(435,),  # clone3: ENOSYS makes libc fall back to clone, which is denied
    ),
    # arm64 uses the generic table (include/uapi/asm-generic/unistd.h): no
    # fork or vfork there, only clone. From 424 on, numbers are the same on
    # every architecture (io_uring_setup 425, clone3 435). Read off the
    # kernel's list; not run on an arm64 machine by the harness yet.
    "aarch64": ArchSpec(
        audit_arch=0xC00000B7,  # AUDIT_ARCH_AARCH64; the 32-bit arm ABI has another and is killed
        host_platform="linux-arm64",  # CRAWLER-RESULT-8: restated in the clean-room claim: the ABI this table filters
        denied=(198, 199, 200, 201, 202,  # socket socketpair bind listen accept
                203, 204, 205, 206, 207,  # connect getsockname getpeername sendto recvfrom
                208, 209, 210, 211, 212,  # setsockopt getsockopt shutdown sendmsg recvmsg
                220,  # clone
                117,  # ptrace
                242, 243, 269,  # accept4 recvmmsg sendmmsg
                270, 271,  # process_vm_readv process_vm_writev
                281,  # execveat
                425),  # io_uring_setup
        enosys=(435,),  # clone3
    ),
}


class SockFprog(ctypes.Structure):
    """struct sock_fprog: the filter program prctl(PR_SET_SECCOMP) takes."""

    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def seccomp_program(spec):
    """The BPF filter as bytes of struct sock_filter (CRAWLER-CHILD-4).

    Layout: a foreign ABI (i386 through int 0x80 on x86_64, 32-bit arm on
    arm64) or a number with the x32 bit is killed; each denied syscall
    jumps to ERRNO(EPERM), clone3 to ERRNO(ENOSYS); anything else is
    allowed, execve included (a filter installed in a preexec_fn must
    let the one exec that follows it through).
    """
    def op(code, k, jt=0, jf=0):
        return struct.pack("=HBBI", code, jt, jf, k)

    denied, enosys = spec.denied, spec.enosys
    n, m = len(denied), len(enosys)
    program = [
        op(BPF_LD_W_ABS, SECCOMP_DATA_ARCH),
        op(BPF_JMP_JEQ_K, spec.audit_arch, 1, 0),  # the expected ABI skips the kill below
        op(BPF_RET_K, SECCOMP_RET_KILL_PROCESS),  # CRAWLER-CHILD-4: a foreign system-call ABI
        op(BPF_LD_W_ABS, SECCOMP_DATA_NR),
        op(BPF_JMP_JGE_K, X32_SYSCALL_BIT, 0, 1),
        op(BPF_RET_K, SECCOMP_RET_KILL_PROCESS),  # CRAWLER-CHILD-4: x32 is a foreign ABI too
    ]
    program += [op(BPF_JMP_JEQ_K, nr, n + m - i, 0) for i, nr in enumerate(denied)]  # to ERRNO(EPERM)
    program += [op(BPF_JMP_JEQ_K, nr, m - j + 1, 0) for j, nr in enumerate(enosys)]  # to ERRNO(ENOSYS)
    program += [
        op(BPF_RET_K, SECCOMP_RET_ALLOW),
        op(BPF_RET_K, SECCOMP_RET_ERRNO | errno.EPERM),  # CRAWLER-CHILD-4: sockets, processes, ptrace, io_uring
        op(BPF_RET_K, SECCOMP_RET_ERRNO | errno.ENOSYS),  # CRAWLER-CHILD-4: clone3 answers ENOSYS
    ]
    return b"".join(program)
# ---- END BLOCK seccomp ----

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

# The blocks' objects (6.1 says what each is for): made here, at import, because
# their classes are defined in section 9 above; they open nothing (CRAWLER-NODE-3).
STOP = Stop(PROGRAM, stderr_fd=None)  # Stop's courtesy line would be a second stderr line (CRAWLER-REPORT-3)
PROCESS = Process()


if __name__ == "__main__":  # CRAWLER-NODE-3: importing the file runs nothing
    sys.exit(main())
