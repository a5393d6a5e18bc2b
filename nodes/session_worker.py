#!/usr/bin/env python3
"""session_worker.py: the reference session worker (one research session, start to stop).

Trades a dispatch id for a fenced lease, tells the control plane it is there,
keeps a heartbeat, and answers probes (small read-only questions about one data
source) from verified bytes in a networkless sandboxed child, until the session
closes, the capability expires or a stop arrives.  It never completes a run.

Run it:
    python3 nodes/session_worker.py --help
    python3 nodes/session_worker.py --session-dispatch-id <uuid4> \\
        --session-dispatch-exchange-url <url> --session-dispatch-audience <origin>
Judge it against its contract:
    python3 -m conformance session nodes/session_worker.py

Contract: contract/session.md, version 1.  Each line that exists because of a
clause carries its ID and what breaks without it (grep -n SESSION-STOP-3 finds
the clause, this code and its checks):
    ARGV CONFIG  six cells or none; the environment read once, nothing clamped
    ISOLATION    monitor and capability process; probe children in a seccomp sandbox
    DISPATCH     the URL and audience pinned to the origin; one token; one exchange
    LEASE        fifteen keys, a capability-shaped bearer, a window of 30 minutes at most
    CALLBACK     the verbs, only the allowed paths, fenced canonical bodies, keys, bounds
    START HEARTBEAT CLAIM   start once; beats on their own thread; the claim loop
    PROBE WORK   the vocabulary, scope and channel before any read; the answer in a child
    ACQUIRE      create, poll, one re-open, the descriptor, an anonymous verified download
    REPORT BACKOFF PROGRESS  reports retried with the same bytes; jitter; events in batches
    DEADLINE STOP EXIT SECRET SERVICE   two clocks; a drain; one summary; no secret anywhere
    PEER         documents read as the upstream reads them; bundles as its crawler stores them

Layout (`grep -n '^# [0-9]' nodes/session_worker.py` prints it; every node has banners 1-9):
    1 Imports                  standard library only
    2 Configuration [EDIT]     program name, chunk size; the deployment constants (D38)
    3 Your work [EDIT]         answer_probe(): a probe's answer, in the probe child (3.2)
    ---- Below this line: contract machinery [KEEP] ----
    4 Limits, 5 Errors         every number with its unit and reason; codes, error classes
    6 Protocol                 6.1 process and output, 6.2 documents and forms, 6.3 argv and
                               environment, 6.4 identity, 6.5 HTTP exchanges, 6.7 the probe
                               child's framing, 6.8 progress events; 6.9 the lease,
                               6.10 callbacks, 6.11 sandbox, 6.12 probe children,
                               6.13 acquisition, 6.14 the probe vocabulary
    7 Lifecycle                the session (capability process), the monitor, Service mode;
                               7.4 the outcome, the final line and the exit status
    8 main()                   child modes, configuration, handlers, lifecycle, finish
    9 Shared blocks            copies of nodes/blocks/*.py: edit those instead

Edit sections 2 and 3, keep the rest.  Section 9 is rewritten from
nodes/blocks/ by `python3 -m conformance.sync`, and `--check` reports drift.
Nothing happens on import: configuration, handlers, files, threads and
processes wait for main().
"""

# 1 Imports ====================================================================
# SESSION-NODE-1: standard library only, and nothing newer than the Python 3.9 grammar.

import collections
import contextlib
import csv
import ctypes
import errno
import hashlib
import io
import itertools
import json
import math
import os
import random
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


def worker_imports():
    """Import what only the worker's own paths use; configure() calls it first: only a child mode runs before.

    A probe child is this file started again (SESSION-ISOLATION-5), two of them ahead of
    every session and one more after each probe.  Importing these at the top cost each
    child about 19 ms of CPU (http.server and http.client with their email parsers, ssl,
    subprocess: 20 ms of its 40 ms of imports) for modules it never touches.  Each is
    bound as a global here, so the rest of the file names them as if imported above.
    """
    global base64, datetime, decimal, glob, http, importlib, ipaddress, marshal, secrets, selectors, shutil, ssl
    global subprocess, tempfile
    import base64
    import datetime
    import decimal
    import glob
    import http.client
    import http.server
    import importlib.util
    import ipaddress
    import marshal
    import secrets
    import selectors
    import shutil
    import ssl
    import subprocess
    import tempfile

# 2 Configuration [EDIT] =======================================================

PROGRAM = "session_worker.py"  # the name the usage text and stderr lines show
IO_CHUNK_BYTES = 64 * 1024  # unit of every streaming read and write: downloads, child pipes

# Deployment constants (contract: D38): guesses at the upstream's values.  A
# platform whose values differ changes them here and judges the node with the
# same ones: python3 -m conformance session NODE --deploy NAME=VALUE.
# The producer callbacks' paths, each under /internal/v3/producer/ (the lease's rule).
START_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}:start"
HEARTBEAT_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}:heartbeat"
EVENTS_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/events:append"
CLAIM_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/probes:claim"
RESULT_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/probes/{probe_id}:result"
ACQUISITIONS_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/session-acquisitions"
ACQUISITION_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/session-acquisitions/{crawler_session_id}"
# The capability's length, `mr_cap_` included (hosted_worker's bounds); the
# characters after the prefix stay [A-Za-z0-9_-], so a header can carry it.
MIN_CAPABILITY_BYTES = 39
MAX_CAPABILITY_BYTES = 263
# The probe vocabulary's version and bounds (session_probes).
PROBE_SCHEMA_VERSION = "1.0.0"  # every probe result's schema_version
PROBE_RESULT_MAX_BYTES = 64 * 1024  # bytes of a result's canonical encoding
MAX_PROFILE_COLUMNS = 64  # columns a request names, and a result lists by default
MAX_SCAN_ROWS = 100000  # rows: the ceiling of a request's scan_rows
MAX_SAMPLE_OFFSET = 1000000  # rows: the furthest a sample window may start
MAX_SAMPLE_LIMIT = 200  # rows: the ceiling of a sample window's limit
# The event stream's success code and cap (progress_events).
PROBE_OK_CODE = "OK"
MAX_PROGRESS_EVENTS_PER_ATTEMPT = 256  # events one attempt makes
# The schema strings of a crawler result a session accepts as a bundle
# (hosted_crawler_protocol's CRAWLER_RESULT_SCHEMA_V3 and _V1).
CRAWLER_RESULT_SCHEMAS = ("mostlyright-crawler-result.v3", "mostlyright-crawler-result.v1")

# 3 Your work [EDIT] ===========================================================
# +- The frame -----------------------------------------------------------------
# | Called, in order: answer_probe(probe_kind, request, columns, rows, envelope),
# |     once per probe, in the probe child (networkless, sandboxed: 6.7), after its
# |     input and request were checked; the node judges the result it returns
# |     (result_problems(), 6.14: else PROBE_RESULT_INVALID) before reporting it.
# | Your code may use: the arguments (answer_probe's docstring), section 2's
# |     constants, PREVIEW_MARKER, section 1's modules (the child never runs
# |     worker_imports(): import what you add there), and the four names below
# | Uses from below KEEP: ProbeFailure, canonical_bytes, request_columns,
# |     MAX_PREVIEW_CHARS
# | To refuse work: raise ProbeFailure(code): PROBE_AGGREGATE_NOT_NUMERIC or
# |     PROBE_FAILED; the probe is reported failed and the session goes on
# +-----------------------------------------------------------------------------

# 3.1 Hooks [EDIT] =============================================================
# The reference prober does the contract's example work (SESSION-WORK-1 to -7);
# replace it with your own (D28).  The vocabulary, the result shapes and the
# relations of SESSION-PROBE-7 stay below the KEEP line, whatever you compute.

PREVIEW_MARKER = "\u2026"  # SESSION-WORK-1: "…" ends a string cut to MAX_PREVIEW_CHARS


def answer_probe(probe_kind, request, columns, rows, envelope):
    """Return the kind's result keys (everything but the envelope), rows_scanned and truncated included.  [EDIT]

    columns: the content's column names; rows: a lazy iterator of rows (one
    value per column): pull only what the answer needs.  envelope: the common
    keys but `truncated`, to measure the whole result.  Raises ProbeFailure
    (`rows` itself raises PROBE_PARSE_EMPTY for a bad row line).
    """
    typed = csv_cell if envelope["data_format"] == "csv" else _as_held  # SESSION-WORK-1: only CSV strings are typed
    if probe_kind == "sample_rows":
        keys = _sample_rows(request, columns, rows, envelope, typed)
    else:
        scanned = itertools.islice(rows, request["scan_rows"])  # SESSION-WORK-*: the first scan_rows rows, no more
        answer = {"source_inspect": _source_inspect, "profile_columns": _profile_columns,
                  "evaluate_expression": _evaluate_expression}[probe_kind]
        keys = answer(request, columns, scanned, typed)
        keys["truncated"] = False  # SESSION-PROBE-7: only sample_rows ever drops anything
    if len(canonical_bytes(dict(envelope, **keys))) > PROBE_RESULT_MAX_BYTES:
        raise ProbeFailure("PROBE_FAILED")  # SESSION-WORK-7: never a result the node must refuse
    return keys


# 3.2 The reference work: replace it whole [EDIT] ==============================
# answer_probe()'s helpers: cells typed, columns profiled, rows sampled,
# expressions evaluated, as SESSION-WORK-1 to -7 describe the example work.

_CSV_INTEGER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)")  # SESSION-WORK-1, used with fullmatch
_CSV_FLOAT_RE = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+(?:[eE][-+]?[0-9]+)?")
_MAX_INTEGER_DIGITS = 16  # 2^53 - 1 has 16 digits: longer text is out of range without int() (3.11 refuses 4300+ digits)
_MAX_CELL_INTEGER = 2 ** 53 - 1  # SESSION-WORK-1, -6: a result's integers stay within +-(2^53 - 1)
_ORDER_CLASS = {"boolean": "boolean", "integer": "number", "number": "number", "string": "string"}


def csv_cell(value):
    """A CSV string typed as SESSION-WORK-1 says; any other value as the content holds it."""
    if not isinstance(value, str):
        return value
    if value == "":
        return None
    if value == "true" or value == "false":
        return value == "true"
    if _CSV_INTEGER_RE.fullmatch(value):
        if len(value) - value.startswith("-") <= _MAX_INTEGER_DIGITS:
            number = int(value)
            if -_MAX_CELL_INTEGER <= number <= _MAX_CELL_INTEGER:
                return number
        return value  # SESSION-WORK-1: an integer out of range stays text, never a rounded float
    if _CSV_FLOAT_RE.fullmatch(value):
        number = float(value)
        if math.isfinite(number):  # SESSION-WORK-1: "1.0e999" stays text; results hold finite numbers only
            return number
    return value


def _as_held(value):
    return value  # SESSION-WORK-1: JSON-lines values are taken as the content holds them


def preview(cell):
    """SESSION-WORK-1: a long string is cut to MAX_PREVIEW_CHARS and marked, so a cell stays a cell."""
    if isinstance(cell, str) and len(cell) > MAX_PREVIEW_CHARS:
        return cell[:MAX_PREVIEW_CHARS] + PREVIEW_MARKER
    return cell


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)  # SESSION-WORK-1: booleans are never numbers


def _type_of(cell):
    """The inferred type of one non-null cell; `number` here means a float."""
    if isinstance(cell, bool):  # before int: True is an int to Python
        return "boolean"
    if isinstance(cell, int):
        return "integer"
    if isinstance(cell, float):
        return "number"
    return "string" if isinstance(cell, str) else "mixed"


def _inferred_type(types):
    """SESSION-WORK-1: the type of a column from the set of its non-null cells' types."""
    if not types:
        return "null"
    if len(types) == 1:
        return next(iter(types))
    return "number" if types == {"integer", "number"} else "mixed"  # integers with floats are numbers


def _distinct_key(cell):
    """A key equal for two cells exactly when their previews' canonical encodings are (SESSION-WORK-4).

    No json.dumps per cell: 1, 1.0, True and "1" stay four values, 0.0 and -0.0 two.
    """
    return preview(cell) if isinstance(cell, str) else (type(cell), repr(cell))


class _Column:
    """What a scan learns of one column: types, counts, distinct previews, extremes."""

    __slots__ = ("types", "non_null", "keys", "order", "low", "high")

    def __init__(self, distinct):
        self.types, self.non_null, self.order, self.low, self.high = set(), 0, None, None, None
        self.keys = set() if distinct else None

    def add(self, cell):
        if cell is None:
            return
        kind = _type_of(cell)
        self.types.add(kind)
        self.non_null += 1
        if self.keys is not None:
            self.keys.add(_distinct_key(cell))
        order = _ORDER_CLASS.get(kind)
        if self.non_null == 1:
            self.order, self.low, self.high = order, cell, cell
        elif order is None or order != self.order:
            self.order = None  # SESSION-WORK-1: cells of two classes are not ordered (and Python would raise)
        elif cell < self.low:  # strict: among equal cells (1 and 1.0) the first in row order is kept
            self.low = cell
        elif cell > self.high:
            self.high = cell

    def extremes(self):
        """(minimum, maximum) previews, or None when there is no cell or no order."""
        if self.non_null and self.order is not None:
            return preview(self.low), preview(self.high)
        return None


def _positions(columns):
    positions = {}
    for index, name in enumerate(columns):
        positions.setdefault(name, index)
    return positions


def _selected(request, columns):
    """The requested columns, or the content's first MAX_PROFILE_COLUMNS (SESSION-WORK intro)."""
    names = request.get("columns") or columns[:MAX_PROFILE_COLUMNS]
    positions = _positions(columns)
    return list(names), [positions[name] for name in names]


def _source_inspect(request, columns, scanned, typed):
    """SESSION-WORK-2: names and types only; never a value (SESSION-PROBE-8)."""
    types = [set() for _ in columns]
    count = 0
    for row in scanned:
        count += 1
        for found, value in zip(types, row):
            cell = typed(value)
            if cell is not None:
                found.add(_type_of(cell))
    pairs = [[name, _inferred_type(found)] for name, found in zip(columns, types)]
    return {"rows_scanned": count,
            "schema_digest": hashlib.sha256(canonical_bytes(pairs)).hexdigest(),  # over all the columns
            "columns": [{"name": name, "inferred_type": kind} for name, kind in pairs[:MAX_PROFILE_COLUMNS]]}


def _profile_columns(request, columns, scanned, typed):
    """SESSION-WORK-4: per selected column, counts, distinct previews and, when ordered, extremes."""
    names, picks = _selected(request, columns)
    stats = [_Column(distinct=True) for _ in names]
    count = 0
    for row in scanned:
        count += 1
        for column, index in zip(stats, picks):
            column.add(typed(row[index]))
    entries = []
    for name, column in zip(names, stats):
        entry = {"name": name, "inferred_type": _inferred_type(column.types), "non_null": column.non_null,
                 "nulls": count - column.non_null, "distinct": len(column.keys)}
        extremes = column.extremes()
        if extremes is not None:  # SESSION-WORK-4: both or neither, and the probe still succeeds
            entry["minimum"], entry["maximum"] = extremes
        entries.append(entry)
    return {"rows_scanned": count, "columns": entries}


def _sample_rows(request, columns, rows, envelope, typed):
    """SESSION-WORK-3: the window's previews, the last rows dropped while the result is too big."""
    offset, limit = request["offset"], request["limit"]
    names, picks = _selected(request, columns)
    skipped = sum(1 for _ in itertools.islice(rows, offset))  # scan_rows plays no part: the window is over all rows
    window = [[preview(typed(row[index])) for index in picks] for row in itertools.islice(rows, limit)]
    keys = {"rows_scanned": skipped + len(window),  # D10: rows read, counted before any is dropped
            "columns": names, "rows": window, "truncated": False}
    # The size with k rows is the size with none, plus each row's encoding, plus k - 1 commas:
    # one encoding per row rather than one of the whole result per dropped row.
    sizes = [len(canonical_bytes(row)) for row in window]
    bare = len(canonical_bytes(dict(envelope, **dict(keys, rows=[]))))
    if not window or bare + sum(sizes) + len(sizes) - 1 <= PROBE_RESULT_MAX_BYTES:
        return keys  # what still does not fit fails in answer_probe (SESSION-WORK-7)
    keys["truncated"] = True  # SESSION-WORK-3: at least the last row goes, and truncated says so
    budget = PROBE_RESULT_MAX_BYTES - len(canonical_bytes(dict(envelope, **dict(keys, rows=[]))))
    kept, used = 0, 0
    while kept < len(window) - 1 and used + sizes[kept] + (kept > 0) <= budget:
        used += sizes[kept] + (kept > 0)
        kept += 1
    del window[kept:]
    return keys


def _evaluate_expression(request, columns, scanned, typed):
    """SESSION-WORK-5, -6: the matched rows, then one aggregate over the collected cells."""
    expression = request["expression"]
    aggregate, column = expression["aggregate"], expression.get("column")
    names = request_columns("evaluate_expression", request)
    slot = {name: index for index, name in enumerate(names)}
    positions = _positions(columns)
    picks = [positions[name] for name in names]  # only the named columns are typed
    where = _compile(expression["where"], slot) if "where" in expression else None
    target = slot[column] if column is not None and aggregate != "count" else None
    stats = _Column(distinct=False)
    count = matched = collected = 0
    total = None
    not_numeric = False
    for row in scanned:
        count += 1
        cells = [typed(row[index]) for index in picks]
        if where is not None and not where(cells):
            continue
        matched += 1
        cell = cells[target] if target is not None else None
        if cell is None:
            continue  # SESSION-WORK-6: the collected cells are the non-null ones
        collected += 1
        if aggregate in ("min", "max"):
            stats.add(cell)
        elif not _is_number(cell):
            not_numeric = True  # judged after the scan: a later row's parse failure comes first
        elif total is None:
            total = cell  # "the cells added": -0.0 alone sums to -0.0, not 0 + -0.0
        elif not not_numeric:
            total = total + cell  # row order; ints stay exact until a float joins
    if aggregate == "count":
        value = matched  # SESSION-PROBE-7: a count's value is rows_matched
    elif aggregate in ("min", "max"):
        extremes = stats.extremes()  # SESSION-WORK-6: null when not ordered, null with no cell
        value = None if extremes is None else extremes[1 if aggregate == "max" else 0]
    elif not_numeric:
        raise ProbeFailure("PROBE_AGGREGATE_NOT_NUMERIC")
    elif total is None:
        value = None  # SESSION-WORK-6: nothing collected is null, never 0
    else:
        if isinstance(total, int) and not -_MAX_CELL_INTEGER <= total <= _MAX_CELL_INTEGER:
            total = float(total)  # SESSION-WORK-6: an integer only within the JSON range
        value = float(total) / collected if aggregate == "avg" else total
        if isinstance(value, float) and not math.isfinite(value):
            raise ProbeFailure("PROBE_FAILED")  # SESSION-WORK-6: canonical JSON has no Infinity
    keys = {"rows_scanned": count, "aggregate": aggregate, "value": value, "rows_matched": matched}
    if column is not None:
        keys["column"] = column  # SESSION-PROBE-7: echoed exactly when the request names one
    return keys


def _equal(cell, literal):
    """SESSION-WORK-5 `eq`: numbers by value, strings by code point, booleans as themselves."""
    if _is_number(cell) and _is_number(literal):
        return cell == literal
    if isinstance(cell, str) and isinstance(literal, str):
        return cell == literal
    return isinstance(cell, bool) and isinstance(literal, bool) and cell == literal


def _ordered(cell, literal):
    """SESSION-WORK-5: lt, le, gt and ge compare two numbers or two strings, nothing else."""
    return ((_is_number(cell) and _is_number(literal))
            or (isinstance(cell, str) and isinstance(literal, str)))


_COMPARE = {  # SESSION-WORK-5: a null cell makes every comparison false, ne included
    "eq": lambda cell, literal: cell is not None and _equal(cell, literal),
    "ne": lambda cell, literal: cell is not None and not _equal(cell, literal),
    "lt": lambda cell, literal: _ordered(cell, literal) and cell < literal,
    "le": lambda cell, literal: _ordered(cell, literal) and cell <= literal,
    "gt": lambda cell, literal: _ordered(cell, literal) and cell > literal,
    "ge": lambda cell, literal: _ordered(cell, literal) and cell >= literal,
}


def _compile(predicate, slot):
    """A predicate as a function of the named cells (SESSION-PROBE-3: interpreted here, never run as code).

    Recursion is bounded: normalize_request() admitted at most 8 levels.
    """
    op = predicate["op"]
    if op in ("and", "or"):
        parts = [_compile(arg, slot) for arg in predicate["args"]]
        if op == "and":
            return lambda cells: all(part(cells) for part in parts)
        return lambda cells: any(part(cells) for part in parts)
    if op == "not":
        inner = _compile(predicate["arg"], slot)
        return lambda cells: not inner(cells)
    index = slot[predicate["column"]]
    if op == "is_null":
        return lambda cells: cells[index] is None
    if op == "not_null":
        return lambda cells: cells[index] is not None
    compare, literal = _COMPARE[op], predicate["value"]
    return lambda cells: compare(cells[index], literal)


# ---- Below this line: contract machinery [KEEP] ----

# 4 Limits =====================================================================
# Every number the contract fixes, with its unit and its reason: the bounds
# keep a hostile peer or child from making the node read, buffer or wait
# without end; a `# CONTRACT:` line says which clause breaks when changed.

KiB = 1024
MiB = 1024 * KiB

MAX_START_REQUEST_BYTES = 8 * KiB  # a Service-mode start body (SESSION-SERVICE-2), and the bootstrap document
MAX_SESSION_DISPATCH_RESPONSE_BYTES = 64 * KiB  # the exchange's or legacy lease's answer, whatever its status
MAX_METADATA_IDENTITY_TOKEN_BYTES = 16 * KiB  # the metadata server's answer (SESSION-DISPATCH-2)
MAX_CONTROL_RESPONSE_BYTES = 1 * MiB  # any other success answer of the control plane (SESSION-CALLBACK-5)
MAX_ERROR_BODY_BYTES = 4 * KiB  # what is read of a refusal's body: only its code is wanted
MIN_NONCE_CHARS, MAX_NONCE_CHARS = 32, 128  # the Service-mode lease nonce (SESSION-SERVICE-2, D15)
MAX_SESSION_CAPABILITY_REMAINING_SECONDS = 1800  # a capability's window at admission: refused above, never clamped
# MAX_JSON_DEPTH (32) and MAX_SAFE_INTEGER (2^53 - 1), the bounds of every document, are strict_json's.
MAX_SOURCE_IDS = 32  # the lease's source allowlist (SESSION-LEASE-7)
MIN_INTERVAL_S = 0.1  # the floor of the heartbeat and claim intervals (D24)
# CONTRACT: above 0.1 the node is slower than the server asked (SESSION-HEARTBEAT-2, SESSION-CLAIM-3).
MAX_CONSECUTIVE_CLAIM_FAILURES = 10  # failed claims in a row before the session ends (SESSION-CLAIM-7)
BACKOFF_CAP_FACTOR = 16  # a retry delay is at most 16 x its base (D25)
REPORT_ATTEMPTS = 3  # sends of one result report in all (SESSION-REPORT-4, D7)
MAX_RETRY_AFTER_SECONDS = 3600  # a Retry-After the node honours (SESSION-BACKOFF-2)
IDENTITY_TIMEOUT_S = 10.0  # elapsed, the metadata request, whole (SESSION-DISPATCH-2)
EXCHANGE_TIMEOUT_S = 10.0  # elapsed, the exchange or the legacy lease request, whole (SESSION-DISPATCH-3)
CALLBACK_TIMEOUT_S = 10.0  # elapsed, one capability call, whole (SESSION-CALLBACK-6)
EVENTS_TIMEOUT_S = 2.0  # elapsed, one event append: it sits in a probe's latency path (D33)
ACQUISITION_POLL_S = 1.0  # between reads of a pending acquisition (SESSION-ACQUIRE-4, D33)
DEFAULT_ACQUISITION_TIMEOUT_SECONDS = 90  # create to download's end, per probe; at most 600
MAX_ACQUISITION_TIMEOUT_SECONDS = 600
DEFAULT_PROBE_TIMEOUT_SECONDS = 45  # a probe child's run; at most 300
MAX_PROBE_TIMEOUT_SECONDS = 300
MAX_PROBE_ACQUISITION_BUNDLE_BYTES = 32 * MiB  # a downloaded bundle, judged on its declared size
MAX_SOURCE_BYTES = 16 * MiB  # the decoded content a probe reads
MAX_PROBE_REQUEST_BYTES = 16 * KiB  # a probe's request, canonical (SESSION-PROBE-2)
MAX_PREVIEW_CHARS = 256  # a string cell in a result, before its marker
MAX_PREVIEW_MARKER_CHARS = 16  # the room after it for section 3's PREVIEW_MARKER (SESSION-PROBE-6)
DEFAULT_WARM_POOL_SIZE = 2  # probe children started ahead (SESSION-ISOLATION-8); 0..8
MAX_WARM_POOL_SIZE = 8
WARM_POOL_START_S = 2.0  # how long the pool may delay attempt:start (SESSION-ISOLATION-8)
DEFAULT_SHUTDOWN_GRACE_SECONDS = 30  # an idle Service before it exits; at most 600
MAX_SHUTDOWN_GRACE_SECONDS = 600
LEGACY_BOOTSTRAP_READY_TIMEOUT_SECONDS = 5.0  # a Service-mode session process's start (SESSION-SERVICE-4)
STOP_GRACE_S = 5.0  # after a stop, time for the last report and events (SESSION-STOP-5)
# CONTRACT: with the kill at STOP_GRACE_S + 0.5 s, every process is gone within 6 s of a stop (STOP-5).
STOP_KILL_S = STOP_GRACE_S + 0.5  # the monitor kills the capability process's group this long after a stop
DESCENDANT_CLEANUP_S = 5.0  # the monitor's reaping of leftover processes (SESSION-ISOLATION-4)
PROBE_CHILD_ADDRESS_SPACE_BYTES = 512 * MiB  # a probe child's RLIMIT_AS (SESSION-ISOLATION-5)
PROBE_CHILD_CORE_BYTES = 0  # a probe child's RLIMIT_CORE: no core file of a child that read a source
PROBE_CHILD_OPEN_FILES = 16  # a probe child's RLIMIT_NOFILE: it needs 0, 1, 2 and a few module files

MAX_PROBE_CHILD_STDERR_BYTES = 512  # an admissible failure line; the node reads one byte more (ISOLATION-7)
MAX_PROBE_INPUT_HEADER_BYTES = 64 * KiB  # the probe-input header line: a 16 KiB request and the envelope
MAX_MONITOR_MESSAGE_BYTES = 128 * KiB  # one message between the monitor and the capability process
MAX_SERVICE_OUTPUT_BYTES = 128 * KiB  # what the Service reads of a session process's stdout
LEGACY_TERMINATE_WAIT_S = 1.0  # SIGTERM, this long, then SIGKILL (SESSION-SERVICE-4)
SERVICE_READ_TIMEOUT_S = 10.0  # a Service connection's silence: a client that stops sending is dropped
CHILD_EXIT_POLL_S = 0.05  # how often, at most, a child that closed its pipes is checked for exit
CHILD_EXIT_POLL_FIRST_S = 0.002  # the first such check: a child exits right after its output; doubling to the above
CHILD_REAP_WAIT_S = 5.0  # wait for a SIGKILLed child to be reaped (it cannot refuse)
WARM_POOL_POLL_S = 0.02  # how often a starting pool is looked at, for WARM_POOL_START_S at most
CLEANUP_POLL_S = 0.01  # how often the monitor looks for leftover descendants while it cleans up
WALL_CLOCK_RECHECK_S = 1.0  # a long wait wakes this often to see a wall clock stepped forward (DEADLINE-1)


# 5 Errors =====================================================================
# An error's text is its code: no body received, no URL and no secret is ever
# put in one (SESSION-SECRET-3), and never an exception's class (D20).

SESSION_DISPATCH_ARGUMENTS_INVALID = "SESSION_DISPATCH_ARGUMENTS_INVALID"
SESSION_DISPATCH_INVALID = "SESSION_DISPATCH_INVALID"
SESSION_WORKER_CONFIG_INVALID = "SESSION_WORKER_CONFIG_INVALID"
SESSION_DISPATCH_URL_UNRECOGNIZED = "SESSION_DISPATCH_URL_UNRECOGNIZED"
SESSION_DISPATCH_AUDIENCE_UNRECOGNIZED = "SESSION_DISPATCH_AUDIENCE_UNRECOGNIZED"
SESSION_IDENTITY_UNAVAILABLE = "SESSION_IDENTITY_UNAVAILABLE"
SESSION_DISPATCH_EXCHANGE_FAILED = "SESSION_DISPATCH_EXCHANGE_FAILED"
SESSION_DISPATCH_RESPONSE_INVALID = "SESSION_DISPATCH_RESPONSE_INVALID"
RESEARCH_SESSION_DISPATCH_ALREADY_CLAIMED = "RESEARCH_SESSION_DISPATCH_ALREADY_CLAIMED"
RESEARCH_SESSION_DISPATCH_CLOSED = "RESEARCH_SESSION_DISPATCH_CLOSED"
SESSION_LEASE_INVALID = "SESSION_LEASE_INVALID"
SESSION_LEASE_EXPIRY_UNREASONABLE = "SESSION_LEASE_EXPIRY_UNREASONABLE"
SESSION_LEASE_MISMATCH = "SESSION_LEASE_MISMATCH"
SESSION_LEASE_FAILED = "SESSION_LEASE_FAILED"
SESSION_LEASE_URL_UNRECOGNIZED = "SESSION_LEASE_URL_UNRECOGNIZED"
SESSION_START_INVALID = "SESSION_START_INVALID"
SESSION_START_TOO_LARGE = "SESSION_START_TOO_LARGE"
SESSION_WORKER_BUSY = "SESSION_WORKER_BUSY"
SESSION_LEGACY_PROCESS_START_FAILED = "SESSION_LEGACY_PROCESS_START_FAILED"
SESSION_LEGACY_PROCESS_FAILED = "SESSION_LEGACY_PROCESS_FAILED"
SESSION_LEGACY_BOOTSTRAP_INVALID = "SESSION_LEGACY_BOOTSTRAP_INVALID"
NOT_FOUND = "NOT_FOUND"
CONTROL_PLANE_UNREACHABLE = "CONTROL_PLANE_UNREACHABLE"
CONTROL_PLANE_RESPONSE_INVALID = "CONTROL_PLANE_RESPONSE_INVALID"
CONTROL_PLANE_HTTP = "CONTROL_PLANE_HTTP_%d"  # an unexpected status and no code in the body
SESSION_CALLBACK_NOT_ALLOWED = "SESSION_CALLBACK_NOT_ALLOWED"  # a call whose path the lease does not allow
ATTEMPT_FENCE_STALE = "ATTEMPT_FENCE_STALE"
ATTEMPT_STALE = "ATTEMPT_STALE"
AUTHORIZATION_DENIED = "AUTHORIZATION_DENIED"
RESEARCH_PROBE_ALREADY_SETTLED = "RESEARCH_PROBE_ALREADY_SETTLED"
CRAWLER_SESSION_EXPIRED = "CRAWLER_SESSION_EXPIRED"
AGENT_BUDGET_EXCEEDED = "AGENT_BUDGET_EXCEEDED"
SESSION_ACQUISITION_THROTTLED = "SESSION_ACQUISITION_THROTTLED"
RESEARCH_SOURCE_FORBIDDEN = "RESEARCH_SOURCE_FORBIDDEN"
RESEARCH_SOURCE_UNACQUIRABLE = "RESEARCH_SOURCE_UNACQUIRABLE"
PROBE_CLAIM_INVALID = "PROBE_CLAIM_INVALID"
PROBE_REQUEST_INVALID = "PROBE_REQUEST_INVALID"
PROBE_SOURCE_OUT_OF_SCOPE = "PROBE_SOURCE_OUT_OF_SCOPE"
PROBE_SOURCE_CHANNEL_UNAVAILABLE = "PROBE_SOURCE_CHANNEL_UNAVAILABLE"
PROBE_SOURCE_MISMATCH = "PROBE_SOURCE_MISMATCH"
PROBE_COLUMN_UNKNOWN = "PROBE_COLUMN_UNKNOWN"
PROBE_AGGREGATE_NOT_NUMERIC = "PROBE_AGGREGATE_NOT_NUMERIC"
PROBE_PARSE_EMPTY = "PROBE_PARSE_EMPTY"
PROBE_FAILED = "PROBE_FAILED"
PROBE_RESULT_INVALID = "PROBE_RESULT_INVALID"
PROBE_SOURCE_ACQUISITION_MISBOUND = "PROBE_SOURCE_ACQUISITION_MISBOUND"
PROBE_SOURCE_ACQUISITION_FAILED = "PROBE_SOURCE_ACQUISITION_FAILED"
PROBE_SOURCE_ACQUISITION_TIMEOUT = "PROBE_SOURCE_ACQUISITION_TIMEOUT"
PROBE_SOURCE_RESULT_INVALID = "PROBE_SOURCE_RESULT_INVALID"
PROBE_SOURCE_TOO_LARGE = "PROBE_SOURCE_TOO_LARGE"
PROBE_SOURCE_DOWNLOAD_INVALID = "PROBE_SOURCE_DOWNLOAD_INVALID"
PROBE_SOURCE_DOWNLOAD_FAILED = "PROBE_SOURCE_DOWNLOAD_FAILED"
SANDBOX_TIMEOUT = "SANDBOX_TIMEOUT"
SANDBOX_UNAVAILABLE = "SANDBOX_UNAVAILABLE"
SESSION_WORKER_STOPPING = "SESSION_WORKER_STOPPING"
SESSION_PROCESS_ISOLATION_UNAVAILABLE = "SESSION_PROCESS_ISOLATION_UNAVAILABLE"
SESSION_CHILD_EXITED = "SESSION_CHILD_EXITED"
SESSION_CHILD_PROTOCOL_INVALID = "SESSION_CHILD_PROTOCOL_INVALID"
SESSION_DESCENDANT_CLEANUP_FAILED = "SESSION_DESCENDANT_CLEANUP_FAILED"
SESSION_WORKER_FAILED = "SESSION_WORKER_FAILED"

CONSUMED_DISPATCH_CODES = frozenset((RESEARCH_SESSION_DISPATCH_ALREADY_CLAIMED, RESEARCH_SESSION_DISPATCH_CLOSED))
# SESSION-CLAIM-6: another attempt owns the session; retrying works for nobody
FENCE_LOST_CODES = frozenset((ATTEMPT_FENCE_STALE, ATTEMPT_STALE, AUTHORIZATION_DENIED))
CHILD_CODES = frozenset((PROBE_COLUMN_UNKNOWN, PROBE_AGGREGATE_NOT_NUMERIC, PROBE_PARSE_EMPTY, PROBE_FAILED))

# Terminal states (SESSION-EXIT-1): exactly one of a terminal state and a failure code decides a session.
CLOSED = "closed"
FAILED_STATE = "failed"
CAPABILITY_EXPIRED = "capability_expired"
DISPATCH_CONSUMED = "dispatch_consumed"
SERVICE_STOPPED = "service_stopped"
TERMINAL_STATES = (CLOSED, FAILED_STATE, CAPABILITY_EXPIRED, DISPATCH_CONSUMED, SERVICE_STOPPED)
SESSION_STATES_THAT_END = frozenset((CLOSED, FAILED_STATE))  # a claim answer's session_state (SESSION-CLAIM-4)

STATUS_STOPPED = "stopped"  # the summary of a terminal state
STATUS_FAILED = "failed"  # the summary of a failure code; also a probe child's failure line

EXIT_OK = 0  # a terminal state, --help, a Service that stopped or went idle (SESSION-EXIT-4)
EXIT_FAILED = 1  # a failure code, a configuration error, a refused bootstrap
EXIT_USAGE = 2  # a command line the node does not answer

# SESSION-PROGRESS-3: the class of a failed probe's display code; the success code is section 2's PROBE_OK_CODE.
REFUSED_CODES = frozenset((
    PROBE_SOURCE_CHANNEL_UNAVAILABLE, PROBE_SOURCE_OUT_OF_SCOPE, PROBE_SOURCE_MISMATCH, PROBE_REQUEST_INVALID,
    PROBE_COLUMN_UNKNOWN, PROBE_AGGREGATE_NOT_NUMERIC, RESEARCH_SOURCE_FORBIDDEN, RESEARCH_SOURCE_UNACQUIRABLE,
    PROBE_SOURCE_TOO_LARGE))
TIMED_OUT_CODES = frozenset((SANDBOX_TIMEOUT, PROBE_SOURCE_ACQUISITION_TIMEOUT))
THROTTLE_WIRE_CODES = {AGENT_BUDGET_EXCEEDED: SESSION_ACQUISITION_THROTTLED}  # wire code -> display code


def outcome_class(display_code):
    """SESSION-PROGRESS-3: what a person should do, read off the display code."""
    if display_code == PROBE_OK_CODE:
        return "succeeded"
    if display_code in REFUSED_CODES:
        return "refused"
    if display_code in TIMED_OUT_CODES:
        return "timed_out"
    if display_code in THROTTLE_WIRE_CODES.values():
        return "throttled"
    return "failed"


class SessionError(Exception):
    """Root of every failure the node names; `code` is the contract's (or a control plane's) code.

    The text is its code; `detail`, a fixed phrase, is printed only by
    configuration errors, naming a variable, never its value (SESSION-CONFIG-1).
    """

    def __init__(self, code, detail=""):
        super().__init__(code)
        self.code = code
        self.detail = detail


class UsageError(SessionError):
    """A command line or environment the node does not run with: nothing was read, sent or started.

    `text` names the option or variable, never its value (it may hold a secret
    by mistake: SESSION-ARGV-1, SESSION-CONFIG-1); `exit_code`: SESSION-EXIT-4.
    """

    def __init__(self, code, detail, exit_code=EXIT_USAGE):
        super().__init__(code, detail)
        self.text = "%s: %s\n" % (code, detail)
        self.exit_code = exit_code


class ConfigError(UsageError):
    """A variable that breaks its rule (SESSION-CONFIG-1): `detail` names it, never its value; exit 1."""

    def __init__(self, detail):
        super().__init__(SESSION_WORKER_CONFIG_INVALID, detail, EXIT_FAILED)


class ProbeFailure(SessionError):
    """A probe's failure: the probe is reported failed with `code`; the session goes on (SESSION-PROBE-9).

    `retry_after_s` is a throttle's advice (SESSION-ACQUIRE-2), 0 when there is none.
    """

    def __init__(self, code, retry_after_s=0):
        super().__init__(code, "probe failure")
        self.retry_after_s = retry_after_s


class Refusal(SessionError):
    """A control-plane call that did not succeed: its code, the HTTP status (None: no answer), Retry-After.

    `transient` is what a report retries (SESSION-REPORT-4): no answer, 408, 429, 5xx.
    """

    def __init__(self, code, status=None, retry_after_s=None, sent=True):
        super().__init__(code, "refused" if status is not None else "no answer")
        self.status = status
        self.retry_after_s = retry_after_s
        self.sent = sent  # False: the node itself refused to send it (SESSION-CALLBACK-2); never retried

    @property
    def transient(self):
        return self.sent and (self.status is None or self.status in (408, 429) or 500 <= self.status <= 599)


class DeadlinePassed(SessionError):
    """The capability's expiry has come: the session ends silently (SESSION-DEADLINE-4)."""

    def __init__(self):
        super().__init__(SESSION_WORKER_FAILED, "the deadline passed")  # never printed: the state is the outcome


class SessionOver(SessionError):
    """The session ends here, with a terminal state or a failure code (the first outcome decides)."""

    def __init__(self, terminal=None, failure=None):
        super().__init__(failure or SESSION_WORKER_FAILED, "session over")
        self.terminal = terminal
        self.failure = failure


# 6 Protocol ===================================================================
# The topics every node numbers alike (6.1 to 6.8), then the session's own, in
# the order a session meets them.


# 6.1 Process and output =======================================================
# A signal handler only records the stop and wakes the waits; ordinary code
# decides (SESSION-STOP-1).  stdout carries the summary and nothing else
# (SESSION-EXIT-2); every stderr line is one line (SESSION-EXIT-3).

ROLE_MONITOR = "monitor"
ROLE_CAPABILITY = "capability"
ROLE_SERVICE = "service"

# PROCESS (the process block's state, with this node's role) and STOP (the
# capability process's stop flag) are made after section 9, whose classes they use.


def on_signal(signum, frame):
    """SIGTERM and SIGINT, in every long-lived role (SESSION-STOP-1): record, wake, nothing else."""
    if PROCESS.role == ROLE_CAPABILITY:
        if not STOP.requested:
            PROCESS.stop_at = time.monotonic()  # SESSION-STOP-5: the drain's grace counts from here
        STOP.handle(signum, frame)  # flag; shutdown() of every in-flight socket; wake every select
        return
    PROCESS.signals += 1  # monitor and Service: a second one kills (SESSION-STOP-6)
    PROCESS.wake()


def say(line):
    """One stderr line (SESSION-EXIT-3).  Callers never put a received byte or a secret in it."""
    write_all(2, (line + "\n").encode("ascii", "replace"))


def load_libc():
    """libc's prctl through ctypes, or None off Linux (loaded once)."""
    if PROCESS.libc is None and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            prctl = libc.prctl
        except (OSError, AttributeError):
            return None
        prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        prctl.restype = ctypes.c_int
        PROCESS.libc = libc
    return PROCESS.libc


def prctl(option, value=0, pointer=0):
    """prctl(2), or -1 where there is none."""
    libc = load_libc()
    if libc is None:
        return -1
    return libc.prctl(option, value, pointer, 0, 0)


PR_SET_DUMPABLE = 4  # prctl(2) options (include/uapi/linux/prctl.h); the sandbox's come with the seccomp block
PR_SET_CHILD_SUBREAPER = 36

SUMMARY_KEYS = frozenset(("status", "role", "session_id", "attempt_id", "probes_answered", "probes_failed",
                          "terminal_state", "failure_code", "warm_pool_ready"))
ROLE = "session"  # the summary's and the health answer's role


def make_summary(session_id=None, attempt_id=None, answered=0, failed=0, terminal=None, failure=None, warm=0):
    """SESSION-EXIT-1: the summary; exactly one of terminal and failure is set."""
    return {"status": STATUS_FAILED if failure else STATUS_STOPPED, "role": ROLE, "session_id": session_id,
            "attempt_id": attempt_id, "probes_answered": answered, "probes_failed": failed,
            "terminal_state": None if failure else terminal, "failure_code": failure, "warm_pool_ready": warm}


def is_summary(doc, session_id):
    """SESSION-EXIT-1 (D18): the summary's shape, for `session_id` (None before a lease)."""
    if not (isinstance(doc, dict) and set(doc) == SUMMARY_KEYS):
        return False
    counts = (doc["probes_answered"], doc["probes_failed"], doc["warm_pool_ready"])
    if not all(is_int(count) and 0 <= count <= MAX_SAFE_INTEGER for count in counts):
        return False
    terminal, failure = doc["terminal_state"], doc["failure_code"]
    if failure is None:
        shaped = doc["status"] == STATUS_STOPPED and terminal in TERMINAL_STATES
    else:
        shaped = doc["status"] == STATUS_FAILED and terminal is None and is_code(failure)
    # before it learns the lease the monitor knows no session: then any (or none) is this one
    same_session = doc["session_id"] == session_id if session_id is not None else (
        doc["session_id"] is None or is_canonical_uuid(doc["session_id"]))
    return (shaped and doc["role"] == ROLE and doc["warm_pool_ready"] <= MAX_WARM_POOL_SIZE and same_session
            and (doc["attempt_id"] is None or is_canonical_uuid(doc["attempt_id"])))


def failure_line(doc):
    """SESSION-EXIT-3: the last stderr line of a failed run names its code."""
    return "%s: session job did not reach a terminal session state" % doc["failure_code"]


def start_process():
    """The wake pipe and the stop handlers (SESSION-STOP-1), before the first request and before a listen.

    As PID 1 a SIGTERM with no handler is ignored, so nothing that takes time
    comes first.  The capability process opens its own pipe after the fork.
    """
    PROCESS.open_wake()
    install_handlers(on_signal)


# 6.2 Documents and forms ======================================================
# What the node sends is canonical (contract: Documents, JSON, URLs and codes);
# a peer's document is read as the upstream reads it (parse_answer(), D41).

SCHEMA_VERSION = "3.0.0"  # every command body, the lease, the start document (SESSION-CALLBACK-4, D2)


def binding_of(lease):
    """The fence binding every command body repeats, unchanged (SESSION-CALLBACK-4); never generation."""
    return {"schema_version": SCHEMA_VERSION, "workspace_id": lease.workspace_id, "run_id": lease.run_id,
            "attempt_id": lease.attempt_id, "fence": lease.fence}


# CPython's own limit on an integer's digits since 3.11 (sys.set_int_max_str_digits): int() of
# longer text costs time quadratic in its length, so an answer full of digits could hold the node.
MAX_ANSWER_INTEGER_DIGITS = 4300


def _answer_int(text):
    if len(text) - text.startswith("-") > MAX_ANSWER_INTEGER_DIGITS:
        raise ValueError("an integer too long to read")
    return int(text)


def parse_answer(data):
    """A peer's JSON document, read as the upstream's json.loads reads it; JsonError otherwise.

    D41.  Refused, stricter than the upstream: a duplicate key (one document
    read two ways), NaN and Infinity, and what would cost the parser's stack or
    time without bound (MAX_JSON_DEPTH, MAX_ANSWER_INTEGER_DIGITS).
    """
    try:
        text = str(data, "utf-8-sig")  # strict UTF-8; a BOM is dropped, as json.loads drops it
        check_depth(text)  # the strict_json block's bound, before json.loads spends a stack on it
        return json.loads(text, object_pairs_hook=_unique_pairs, parse_constant=_refuse_constant,
                          parse_int=_answer_int)
    except Exception:  # RecursionError and MemoryError included
        raise JsonError() from None


def _is_text(value):
    """A string a canonical document can restate: it encodes as UTF-8 (no lone surrogate)."""
    try:
        value.encode("utf-8")
    except (UnicodeEncodeError, AttributeError):
        return False
    return True


def same_number(value, expected):
    """A number equal to `expected` as the upstream compares (`!=`): 7.0 is 7; true is never 1."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == expected

# One spelling per value (contract: Forms, URLs).  The UUID, timestamp, DNS
# name, https URL and storage and metadata forms are the forms block's; these
# are the session's own.

_CODE_RE = re.compile(r"[A-Z][A-Z0-9_]{2,127}")
_FACT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")  # an event fact's string (SESSION-PROGRESS-1)
_RETRY_AFTER_RE = re.compile(r"[1-9][0-9]{0,3}")  # delta-seconds only (SESSION-BACKOFF-2)
_NONCE_RE = re.compile(r"[A-Za-z0-9_-]{%d,%d}" % (MIN_NONCE_CHARS, MAX_NONCE_CHARS))  # ASCII only (D15)
# SESSION-LEASE-3: anything else (a JWT, a URL) is never sent as a bearer
CAPABILITY_PREFIX = "mr_cap_"  # the upstream's capability shape begins so
# SESSION-LEASE-3: a bearer of URL-safe characters only, within section 2's lengths (no space, CR or LF to inject)
_CAPABILITY_RE = re.compile(r"%s[A-Za-z0-9_-]{%d,%d}" % (
    CAPABILITY_PREFIX, max(1, MIN_CAPABILITY_BYTES - len(CAPABILITY_PREFIX)),
    max(1, MAX_CAPABILITY_BYTES - len(CAPABILITY_PREFIX))))
MAX_CONFIG_NUMBER_CHARS = 64  # a configuration number's text: longer is no number a deployment writes
_SIGNED_DIGITS_RE = re.compile(r"[+-]?[0-9_]+")  # a number int() may take, too long to read


def content_length_of(text):
    """A Service start's Content-Length as the upstream reads it (int()), or None (SESSION-SERVICE-2).

    A number too long to read is far out of range: int() of thousands of digits is never run.
    """
    if len(text) > 19:
        if not _SIGNED_DIGITS_RE.fullmatch(text):
            return None
        return -1 if text.startswith("-") else MAX_START_REQUEST_BYTES + 1
    try:
        return int(text)
    except ValueError:
        return None
MAX_DOWNLOAD_URL_CHARS = 16384  # a signed URL's query is long; the descriptor schema's bound


def is_code(value):
    """A code: [A-Z][A-Z0-9_]{2,127}, fully."""
    return isinstance(value, str) and bool(_CODE_RE.fullmatch(value))


def is_uuid4(value):
    """A canonical UUID whose version is 4 and whose variant is RFC 4122 (SESSION-ARGV-3)."""
    return is_canonical_uuid(value) and value[14] == "4" and value[19] in "89ab"


def is_digest(value):
    return isinstance(value, str) and bool(_DIGEST_RE.fullmatch(value))


MAX_UUID_TEXT_CHARS = 45  # urn:uuid: and 36 characters: the longest spelling uuid.UUID() takes


def probe_uuid(value):
    """The canonical text of an id the upstream reads with uuid.UUID(): any spelling it takes
    (upper case, braces, no hyphens, urn:uuid:), else None (D43).  The node writes ids into
    paths only in their canonical text."""
    if not isinstance(value, str) or len(value) > MAX_UUID_TEXT_CHARS:
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


def _is_ip_literal(host):
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.version == 6 or str(address) == host  # IPv4 in its one dotted spelling


def https_parts(value, scheme="https"):
    """(host, port, path) of an https URL by the contract's rules, else None.

    The host is a lowercase DNS name, an IPv4 literal or a bracketed IPv6
    literal; the path, when there is one, starts with / and has no %, \\, //,
    /./ or /../, and does not end in /. or /.. (contract: URLs, D32).
    """
    parts = split_https(value, scheme)
    if parts is None:
        return None
    host, _port, path = parts
    if not (is_dns_name(host) or _is_ip_literal(host)):
        return None
    if path and (not path.startswith("/") or any(bad in path for bad in _FORBIDDEN_IN_PATH)
                 or path.endswith(("/.", "/.."))):
        return None
    return parts


def is_https_url(value):
    return https_parts(value) is not None


def is_origin(value):
    parts = https_parts(value)
    return parts is not None and parts[2] == ""


def origin_of(url, scheme="https"):
    """scheme://host[:port] of a URL that passed https_parts()."""
    host, port, _path = https_parts(url, scheme)
    return origin_text(host, port, scheme)


def retry_after_of(response):
    """SESSION-BACKOFF-2: whole seconds 1..3600 from Retry-After (any case), else None."""
    value = response.getheader("Retry-After") if response is not None else None
    if value is None or not _RETRY_AFTER_RE.fullmatch(value) or int(value) > MAX_RETRY_AFTER_SECONDS:
        return None  # an HTTP date, 0, a larger number or prose counts as none
    return int(value)


# 6.3 Configuration ============================================================
# Read once, before any request; a bad variable ends the run naming it, never
# its value; nothing is clamped (SESSION-CONFIG-1, -2).  Proxy and credential
# variables are never read (SESSION-CONFIG-5).

ORIGIN_ENV = "STUDIO_API_ORIGIN"
LEASE_AUDIENCE_ENVS = ("MR_SESSION_WORKER_LEASE_AUDIENCE", "STUDIO_WORKER_BOOTSTRAP_AUDIENCE")  # in this order
PORT_ENV = "PORT"
GRACE_ENV = "MR_SESSION_WORKER_SHUTDOWN_GRACE_SECONDS"
POOL_ENV = "MR_SESSION_WORKER_WARM_POOL_SIZE"
PROBE_TIMEOUT_ENV = "MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS"
ACQUISITION_TIMEOUT_ENV = "MR_SESSION_WORKER_ACQUISITION_TIMEOUT_SECONDS"
ATTESTATION_ENV = "MOSTLYRIGHT_EXTERNAL_NETWORK_POLICY_ATTESTATION"  # also the probe child's one variable
BUCKET_ENV = "MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET"
METADATA_HOST_ENV = "GCE_METADATA_HOST"  # google-auth's override convention
STORAGE_ORIGIN_ENV = "STORAGE_EMULATOR_HOST"  # the Cloud Storage clients' override convention
DEFAULT_PORT = 8080
DEFAULT_METADATA_HOST = "169.254.169.254"  # plain HTTP, link-local, by platform design
DEFAULT_STORAGE_ORIGIN = "https://storage.googleapis.com"

Config = collections.namedtuple(
    "Config", "origin lease_audience port shutdown_grace_s warm_pool probe_timeout_s acquisition_timeout_s "
              "sandbox_cpu_s sandbox_timeout_ms attestation bucket metadata_host storage_origin tmpdir "
              "mode dispatch bootstrap_fd", defaults=(None, None, None))  # the last three: configure()'s


def _decimal(environ, name, default, highest):
    """A number in (0, highest], read as the upstream reads it (float()): (float, Decimal); ConfigError.

    SESSION-CONFIG-2 (D39): any text float() takes, as deployments may write
    it; NaN, infinity and a value out of range are refused, never clamped.
    """
    text = environ.get(name) or str(default)  # SESSION-CONFIG-1: set but empty counts as unset
    if len(text) > MAX_CONFIG_NUMBER_CHARS:  # a bound: float() and Decimal() of a long text cost its length
        raise ConfigError("%s is not a number" % name)
    try:
        value = float(text)
    except ValueError:
        raise ConfigError("%s is not a number" % name) from None
    if not (math.isfinite(value) and 0 < value <= highest):  # SESSION-CONFIG-2: nan and inf are out of range
        raise ConfigError("%s must be in (0, %d]" % (name, highest))
    try:
        exact = decimal.Decimal(text.strip().replace("_", ""))  # the text's own digits: 0.3 s is 300 ms
    except decimal.InvalidOperation:
        exact = decimal.Decimal(repr(value))
    return value, exact


def _integer(environ, name, default, lowest, highest):
    """An integer in lowest..highest, read as the upstream reads it (int()); ConfigError naming `name`."""
    text = environ.get(name) or str(default)
    if len(text) > MAX_CONFIG_NUMBER_CHARS:
        raise ConfigError("%s is not an integer" % name)
    try:
        value = int(text)  # SESSION-CONFIG-2 (D39): " 8080", "+8080" and "8_080" as the upstream takes them
    except ValueError:
        raise ConfigError("%s is not an integer" % name) from None
    if not lowest <= value <= highest:
        raise ConfigError("%s must be %d..%d" % (name, lowest, highest))
    return value


def load_config(environ):
    """Every variable of the contract's table, checked once (SESSION-CONFIG-1..5): a Config."""
    origin = environ.get(ORIGIN_ENV) or None
    if origin is None:
        raise ConfigError("%s is required" % ORIGIN_ENV)  # SESSION-CONFIG-3: every URL of the session is pinned to it
    origin = origin.rstrip("/")  # as the upstream: every trailing / goes
    if not is_origin(origin):  # SESSION-CONFIG-3: an origin, in its one spelling
        raise ConfigError("%s is not an https origin" % ORIGIN_ENV)
    lease_audience = None
    for name in LEASE_AUDIENCE_ENVS:  # SESSION-CONFIG-3: every set one is checked, Job mode included
        value = environ.get(name) or None
        if value is not None:
            if not is_https_url(value):
                raise ConfigError("%s is not an https URL" % name)
            lease_audience = lease_audience or value  # the first set one wins
    lease_audience = lease_audience or origin
    port = _integer(environ, PORT_ENV, DEFAULT_PORT, 1, 65535)
    grace_s, _text = _decimal(environ, GRACE_ENV, DEFAULT_SHUTDOWN_GRACE_SECONDS, MAX_SHUTDOWN_GRACE_SECONDS)
    pool = _integer(environ, POOL_ENV, DEFAULT_WARM_POOL_SIZE, 0, MAX_WARM_POOL_SIZE)
    probe_s, probe_exact = _decimal(environ, PROBE_TIMEOUT_ENV, DEFAULT_PROBE_TIMEOUT_SECONDS,
                                    MAX_PROBE_TIMEOUT_SECONDS)
    acquisition_s, _text = _decimal(environ, ACQUISITION_TIMEOUT_ENV, DEFAULT_ACQUISITION_TIMEOUT_SECONDS,
                                    MAX_ACQUISITION_TIMEOUT_SECONDS)
    attestation = environ.get(ATTESTATION_ENV) or None
    if attestation is not None and not _is_text(attestation):
        # D40: passed on as the upstream does; only a value the sandbox policy cannot restate is refused
        raise ConfigError("%s is not text" % ATTESTATION_ENV)
    bucket = environ.get(BUCKET_ENV) or None
    if bucket is not None and not _BUCKET_RE.fullmatch(bucket):
        raise ConfigError("%s is not a bucket name" % BUCKET_ENV)
    # SESSION-CONFIG-4: the only overrides of a fixed host
    metadata_host = environ.get(METADATA_HOST_ENV) or DEFAULT_METADATA_HOST
    if check_metadata_host(metadata_host) is None:
        raise ConfigError("%s is not host[:port]" % METADATA_HOST_ENV)
    storage_origin = environ.get(STORAGE_ORIGIN_ENV) or DEFAULT_STORAGE_ORIGIN
    if check_storage_origin(storage_origin) is None:  # http://host:80 has another spelling: refused
        # SESSION-CONFIG-4: a path or a query would move every download
        raise ConfigError("%s is not an origin with its scheme" % STORAGE_ORIGIN_ENV)
    if storage_origin.startswith("http://"):
        # SESSION-CONFIG-4: said once, so a plain-HTTP store is never taken for a production setting
        say("%s: %s names a plain-HTTP store: a development setting" % (PROGRAM, STORAGE_ORIGIN_ENV))
    return Config(origin=origin, lease_audience=lease_audience, port=port, shutdown_grace_s=grace_s,
                  warm_pool=pool, probe_timeout_s=probe_s, acquisition_timeout_s=acquisition_s,
                  sandbox_cpu_s=int(math.ceil(probe_exact)) + 1,  # the policy's cpu_seconds: rounded up, plus 1
                  sandbox_timeout_ms=int(math.ceil(probe_exact * 1000)),  # exact: 0.3 s is 300 ms, not 301
                  attestation=attestation, bucket=bucket, metadata_host=metadata_host,
                  storage_origin=storage_origin,
                  tmpdir=environ.get("TMPDIR") or None)  # SESSION-ISOLATION-9: an empty TMPDIR is the default


JOB_FLAGS = ("--session-dispatch-id", "--session-dispatch-exchange-url", "--session-dispatch-audience")

JOB, SERVICE_MODE, BOOTSTRAP = "job", "service", "bootstrap"


def parse_argv(tokens):
    """(mode, values) for the command lines SESSION-ARGV-1 lists, else None (D1 of the crawler)."""
    if not tokens:
        return SERVICE_MODE, None
    # the upstream's own test (str.isdecimal): int() reads every decimal digit Unicode knows
    if len(tokens) == 2 and tokens[0] == BOOTSTRAP_FLAG and tokens[1].isdecimal() \
            and len(tokens[1]) <= 9 and int(tokens[1]) >= 3:
        return BOOTSTRAP, int(tokens[1])
    # SESSION-ARGV-2: six cells, the flags first, third and fifth in this order, no empty value, no =form
    if len(tokens) == 6 and tuple(tokens[0::2]) == JOB_FLAGS and all(tokens[1::2]):
        return JOB, Dispatch(*tokens[1::2])
    return None


def configure(tokens, environ):
    """The run's Config, its mode and entry included; None for --help.  UsageError otherwise.

    The command line first (SESSION-ARGV-1..3), then the environment, once
    (SESSION-CONFIG-1); nothing here sends, opens or starts anything.
    """
    worker_imports()  # 1: the modules only the worker uses (a probe child never comes here)
    if tokens in (["--help"], ["-h"]):  # SESSION-NODE-2: nothing read, nothing sent
        return None
    parsed = parse_argv(tokens)
    if parsed is None:  # SESSION-ARGV-1: a fixed text: argv may have been filled with a secret by mistake
        raise UsageError(SESSION_DISPATCH_ARGUMENTS_INVALID, ARGV_REFUSED)
    mode, value = parsed
    if mode == JOB and not (is_uuid4(value.dispatch_id) and is_https_url(value.exchange_url)
                            and is_https_url(value.audience)):  # SESSION-ARGV-3: before any request or file
        raise UsageError(SESSION_DISPATCH_INVALID,
                         "the dispatch id is not a canonical UUID4, or a URL is not an https URL")
    try:
        config = load_config(environ)  # SESSION-CONFIG-1: once, before any request
    except ConfigError as exc:
        if mode == BOOTSTRAP:  # SESSION-SERVICE-4: the Service's session process names no variable
            raise UsageError(exc.code, "bootstrap refused", EXIT_FAILED) from None
        raise
    # The role decides a defect's final line (defect_outcome): known from here, before the mode starts.
    PROCESS.role = ROLE_SERVICE if mode == SERVICE_MODE else ROLE_MONITOR
    return config._replace(mode=mode, dispatch=value if mode == JOB else None,
                           bootstrap_fd=value if mode == BOOTSTRAP else None)


ARGV_REFUSED = "the command line is not one this node answers (see --help)"


# 6.4 Identity =================================================================
# One identity token for one request, sent once: a resend could only strand
# the lease the first obtained (SESSION-DISPATCH-*, SESSION-SERVICE-5).
# The token and the raw answer live in bytearrays wiped once used (SESSION-SECRET-5).

METADATA_IDENTITY_PATH = "/computeMetadata/v1/instance/service-accounts/default/identity"
EXCHANGE_PATH = "/internal/v3/session-worker/dispatches/%s:exchange"
LEASE_PATH = "/internal/v3/session-worker/sessions/%s:lease"

Dispatch = collections.namedtuple("Dispatch", "dispatch_id exchange_url audience")  # not a secret: loggable
Start = collections.namedtuple("Start", "session_id workspace_id lease_url")  # the start document, nonce aside


def mint_identity_token(config, audience):
    """One identity token for `audience`: (buffer, length); the caller wipes it (SESSION-DISPATCH-2)."""
    # SESSION-DISPATCH-2: the audience URL-encoded as urlencode does, and format=full
    query = urllib.parse.urlencode((("audience", audience), ("format", "full")))
    url = "http://%s%s?%s" % (config.metadata_host, METADATA_IDENTITY_PATH, query)  # plain HTTP, by design
    budget = Deadline(IDENTITY_TIMEOUT_S)  # SESSION-DISPATCH-2: the request, whole
    buffer = None
    try:
        with http_exchange(url, budget) as session:
            conn = session.conn
            conn.putrequest("GET", session.target.request_target, skip_accept_encoding=True)
            conn.putheader("Metadata-Flavor", "Google")  # SESSION-DISPATCH-2: no body, no Authorization
            conn.putheader("Connection", "close")
            conn.endheaders()
            response = conn.getresponse()
            if response.status != 200:  # SESSION-DISPATCH-2: a redirect is never followed
                raise SessionError(SESSION_IDENTITY_UNAVAILABLE, "metadata status")
            declared = announced_length(response)
            if declared is not None and declared > MAX_METADATA_IDENTITY_TOKEN_BYTES:  # refused unread
                raise SessionError(SESSION_IDENTITY_UNAVAILABLE, "metadata answer too large")
            buffer, count = read_body(response, MAX_METADATA_IDENTITY_TOKEN_BYTES, budget)
            with memoryview(buffer) as view:
                # SESSION-DISPATCH-2: a compact JWS within the bound; no padding, no newline
                if count > MAX_METADATA_IDENTITY_TOKEN_BYTES or not _JWS_RE.fullmatch(view[:count]):
                    raise SessionError(SESSION_IDENTITY_UNAVAILABLE, "not a compact JWS")
            return buffer, count
    except Exception as exc:
        PROCESS.wipe(buffer)
        STOP.check("the identity token")  # SESSION-STOP-7: a stop explains a cut request first
        if isinstance(exc, SessionError):
            raise
        raise SessionError(SESSION_IDENTITY_UNAVAILABLE, "transport error") from None


def bearer(token, length):
    """`Bearer <token>` as a bytearray the caller wipes (SESSION-SECRET-5)."""
    with memoryview(token) as view:
        return PROCESS.hold_secret(bytearray(b"Bearer ") + view[:length])


def post_entry(url, token, length, body, failed_code, too_large_code):
    """The one POST of the exchange or the legacy lease: (status, buffer, count); the caller wipes.

    SESSION-DISPATCH-3, -4, SESSION-SERVICE-5: exactly five headers, sent once,
    never redirected; the answer judged on its size first, whatever its status.
    """
    budget = Deadline(EXCHANGE_TIMEOUT_S)
    authorization = bearer(token, length)
    buffer = None
    try:
        with http_exchange(url, budget) as session:
            conn = session.conn
            conn.putrequest("POST", session.target.request_target, skip_accept_encoding=True)  # Host first
            conn.putheader("Authorization", authorization)  # SESSION-SECRET-1: the token's one place
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Accept", "application/json")
            conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(bytes(body))  # SESSION-DISPATCH-3: sent exactly once, whatever happens to it
            response = conn.getresponse()
            declared = announced_length(response)
            if declared is not None and declared > MAX_SESSION_DISPATCH_RESPONSE_BYTES:
                raise SessionError(too_large_code, "answer announced too large")  # SESSION-DISPATCH-4: unread
            buffer, count = read_body(response, MAX_SESSION_DISPATCH_RESPONSE_BYTES, budget)
            if count > MAX_SESSION_DISPATCH_RESPONSE_BYTES:  # SESSION-DISPATCH-4: too large, whatever the status
                raise SessionError(too_large_code, "answer too large")
            return response.status, buffer, count
    except Exception as exc:
        PROCESS.wipe(buffer)
        STOP.check("the entry request")  # SESSION-STOP-7: a stop that cut the request is a stop, not its failure
        if isinstance(exc, SessionError):
            raise
        raise SessionError(failed_code, "transport error or deadline") from None
    finally:
        PROCESS.wipe(authorization)  # SESSION-SECRET-5: used once


def refusal_code(buffer, count, fallback):
    """The code of a refusal's body when it is a JSON object with a code (other members ignored); else `fallback`."""
    try:
        with memoryview(buffer) as view:
            doc = parse_answer(view[:count])  # D41: members nobody defined, floats among them, are no error
    except JsonError:
        return fallback
    code = doc.get("code") if isinstance(doc, dict) else None
    return code if is_code(code) else fallback  # SESSION-SECRET-3: the code only, never the detail


def entry_answer(buffer, count, invalid_code):
    """The lease document of an entry answer, an object (D41: read as json.loads reads it, so a later
    release's members pass); else `invalid_code`, the buffer wiped."""
    try:
        with memoryview(buffer) as view:
            doc = parse_answer(view[:count])
    except JsonError:
        doc = None
    if not isinstance(doc, dict):
        PROCESS.wipe(buffer)
        raise SessionError(invalid_code, "not a JSON object")
    return doc


def exchange_dispatch(config, dispatch):
    """The Job-mode entry (SESSION-DISPATCH-1..6): (lease document, raw buffer the caller wipes)."""
    # SESSION-DISPATCH-1: before any token: the URL and the audience must name this control plane
    if dispatch.exchange_url != config.origin + EXCHANGE_PATH % dispatch.dispatch_id:
        raise SessionError(SESSION_DISPATCH_URL_UNRECOGNIZED, "the exchange URL is not this origin's")
    if dispatch.audience != config.origin:
        raise SessionError(SESSION_DISPATCH_AUDIENCE_UNRECOGNIZED, "the audience is not this origin")
    token, length = mint_identity_token(config, dispatch.audience)  # SESSION-DISPATCH-2: once
    try:
        body = canonical_bytes({"dispatch_id": dispatch.dispatch_id, "schema_version": SCHEMA_VERSION})
        status, buffer, count = post_entry(dispatch.exchange_url, token, length, body,
                                           SESSION_DISPATCH_EXCHANGE_FAILED, SESSION_DISPATCH_RESPONSE_INVALID)
    finally:
        PROCESS.wipe(token)  # SESSION-SECRET-5: as soon as it is used
    if status != 200:  # SESSION-DISPATCH-5: a refusal, a redirect included
        code = refusal_code(buffer, count, SESSION_DISPATCH_EXCHANGE_FAILED)
        PROCESS.wipe(buffer)
        if code in CONSUMED_DISPATCH_CODES:  # SESSION-DISPATCH-6: another task has it, or it is over
            raise SessionOver(terminal=DISPATCH_CONSUMED)
        raise SessionError(code, "the exchange was refused")
    return entry_answer(buffer, count, SESSION_DISPATCH_RESPONSE_INVALID), buffer  # SESSION-DISPATCH-5: a malformed lease is refused, never half-used


def lease_session(config, start, nonce):
    """The Service-mode entry (SESSION-SERVICE-5): the lease document and the raw buffer."""
    token, length = mint_identity_token(config, config.lease_audience)  # SESSION-CONFIG-3: the lease audience
    body = PROCESS.hold_secret(bytearray())
    try:
        # The canonical lease-request body, built around the nonce so that the only copy is wiped:
        # keys in order, and the nonce's characters need no escape (D15).
        body += b'{"lease_nonce":"' + nonce + b'","schema_version":"' + SCHEMA_VERSION.encode("ascii") \
            + b'","session_id":"' + start.session_id.encode("ascii") + b'"}'
        url = config.origin + LEASE_PATH % start.session_id  # SESSION-SERVICE-5: derived here, never the body's URL
        status, buffer, count = post_entry(url, token, length, body, SESSION_LEASE_FAILED, SESSION_LEASE_FAILED)
    finally:
        PROCESS.wipe(token)
        PROCESS.wipe(body)  # SESSION-SECRET-5: the nonce's one copy besides the caller's
    if status not in SUCCESS_STATUSES:  # SESSION-CALLBACK-5 (D42): 200, or 201
        code = refusal_code(buffer, count, SESSION_LEASE_FAILED)  # SESSION-SERVICE-5: its code, or LEASE_FAILED
        PROCESS.wipe(buffer)
        raise SessionError(code, "the legacy lease was refused")
    return entry_answer(buffer, count, SESSION_LEASE_INVALID), buffer


START_KEYS = frozenset(("schema_version", "session_id", "workspace_id", "lease_nonce", "lease_url"))


def parse_start(data, config):
    """A start document (SESSION-SERVICE-2): (Start, nonce bytearray); SessionError with the answer's code."""
    try:
        doc = parse_lenient(data)
    except JsonError:
        raise SessionError(SESSION_START_INVALID, "not strict JSON") from None
    if not (isinstance(doc, dict) and set(doc) == START_KEYS and doc["schema_version"] == SCHEMA_VERSION
            and is_canonical_uuid(doc["session_id"]) and is_canonical_uuid(doc["workspace_id"])
            and isinstance(doc["lease_nonce"], str) and _NONCE_RE.fullmatch(doc["lease_nonce"])  # D15: ASCII
            and isinstance(doc["lease_url"], str)):
        raise SessionError(SESSION_START_INVALID, "not the start document")
    nonce = PROCESS.hold_secret(bytearray(doc["lease_nonce"].encode("ascii")))
    doc["lease_nonce"] = None
    # SESSION-SERVICE-2: compared, never fetched: no identity-bearing request goes where a body says
    if doc["lease_url"] != config.origin + LEASE_PATH % doc["session_id"]:
        PROCESS.wipe(nonce)
        raise SessionError(SESSION_LEASE_URL_UNRECOGNIZED, "the lease URL is not this origin's")
    return Start(doc["session_id"], doc["workspace_id"], doc["lease_url"]), nonce


# 6.5 HTTP exchanges ===========================================================
# Each exchange runs under one elapsed deadline whose watchdog shuts the
# socket: with per-read timeouts a server that drips a byte a second holds the
# node for ever (SESSION-CALLBACK-6).  No proxy (SESSION-CONFIG-5), no redirect.
# Capability calls keep their connection between them (SESSION-CALLBACK-7, D53).


@contextlib.contextmanager
def http_exchange(url, budget, holder=None, keeper=None):
    """An open HttpExchange whose whole life is bounded by `budget`.

    `holder.exchange`, when given, is set while it lives, so another thread can cut it.
    `keeper` lets it take a kept connection and keep its own once the caller called
    keep(response) (D53); without one it is closed at the end.
    """
    session = KeptExchange(url, STOP, timeout_s=max(0.05, budget.remaining()), connect_deadline_s=budget.remaining(),
                           budget=budget, ssl_context_factory=tls_context, keeper=keeper)
    if holder is not None:
        holder.exchange = session
    try:
        with Watchdog(budget, session.cut):
            session.open()
            yield session
    finally:
        session.close()
        if holder is not None:
            holder.exchange = None


def announced_length(response):
    """The first Content-Length as an int; None when absent or not plain digits."""
    value = response.headers.get("Content-Length")
    value = value.strip() if value is not None else ""
    return int(value) if value and len(value) <= 19 and _DIGITS_RE.fullmatch(value) else None


def read_body(response, limit, budget):
    """(buffer, count): at most limit + 1 body bytes, in one buffer allocated as it fills.

    A body cut short (Content-Length, a stop, the deadline) raises OSError: never
    taken for whole.  The buffer is wiped on every path (SESSION-SECRET-5).
    """
    declared = announced_length(response)
    buffer = PROCESS.hold_secret(bytearray(min(limit, declared if declared is not None else IO_CHUNK_BYTES) + 1))
    count = 0
    while count <= limit:
        if count == len(buffer):
            grown = PROCESS.hold_secret(bytearray(min(limit + 1, 2 * len(buffer))))
            grown[:count] = buffer
            PROCESS.wipe(buffer)
            buffer = grown
        with memoryview(buffer) as view:
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


def read_some(response, limit):
    """At most `limit` body bytes of a refusal, whatever it announces (SESSION-CALLBACK-5); b"" on error."""
    try:
        return response.read(limit)
    except Exception:
        return b""


# 6.6 State on disk (not used by this node) ====================================
# SESSION-ISOLATION-9: a session keeps nothing on disk between runs; its one scratch
# directory (downloaded bundles) is made and removed by the monitor (7.2).


# 6.7 Child framing ============================================================
# --probe-child (SESSION-ISOLATION-5, -7): the framing keeps the protocol
# whatever answer_probe() does, so a checker can run this mode directly.

PROBE_CHILD_FLAG = "--probe-child"  # the command line of a probe child (6.12 starts it)
PROBE_INPUT_SCHEMA = "session-probe-input.v1"
DATA_FORMATS = ("csv", "jsonl")  # the receipt's normalized_data_format a probe child reads (D45)
PROBE_INPUT_KEYS = frozenset(("schema_version", "probe_kind", "request", "source_id", "data_format",
                              "content_sha256", "content_bytes", "sandbox_policy_digest", "result_max_bytes"))


def probe_child_main():
    """--probe-child: the result on fd 1 and exit 0, or one failure line on fd 2 and exit 1."""
    try:
        enter_sandbox()  # SESSION-ISOLATION-5: before the first byte of input is read
        stdin = io.open(0, "rb", buffering=IO_CHUNK_BYTES, closefd=False)
        data = probe_child_result(stdin)
        write_all(1, data)  # SESSION-ISOLATION-7: the result, nothing on stderr
        return EXIT_OK
    except BaseException as exc:  # SESSION-ISOLATION-7: never a traceback, whatever the input
        code = exc.code if isinstance(exc, ProbeFailure) and exc.code in CHILD_CODES else PROBE_FAILED
        # SESSION-ISOLATION-7: the one line the node admits; anything else is PROBE_FAILED
        write_all(2, canonical_bytes({"code": code, "status": STATUS_FAILED}) + b"\n")
        return EXIT_FAILED


def probe_child_result(stdin):
    """The canonical result for the probe input read from `stdin` (SESSION-ISOLATION-7)."""
    line = stdin.readline(MAX_PROBE_INPUT_HEADER_BYTES + 1)
    if not line.endswith(b"\n"):
        raise ProbeFailure(PROBE_FAILED)
    header = parse_canonical(line[:-1], floats=True)  # an expression's literal may be a fraction
    check_probe_input(header)
    kind, request = header["probe_kind"], header["request"]
    content = stdin.read(header["content_bytes"])
    if len(content) != header["content_bytes"] or stdin.read(1) or sha256_hex(content) != header["content_sha256"]:
        raise ProbeFailure(PROBE_FAILED)  # the input is not what its header describes
    columns, rows = content_table(content, header["data_format"])
    known = set(columns)
    if any(name not in known for name in request_columns(kind, request)):
        raise ProbeFailure(PROBE_COLUMN_UNKNOWN)  # SESSION-PROBE-5 (D9): wherever it is named
    envelope = {
        "schema_version": PROBE_SCHEMA_VERSION, "probe_kind": kind, "source_id": header["source_id"],
        "content_sha256": header["content_sha256"], "content_bytes": header["content_bytes"],
        "data_format": header["data_format"], "sandbox_policy_digest": header["sandbox_policy_digest"],
    }
    result = dict(answer_probe(kind, request, columns, rows, dict(envelope)))
    result.update(envelope)  # SESSION-WORK-7: the envelope restated from the input header
    data = canonical_bytes(result)
    if len(data) > PROBE_RESULT_MAX_BYTES:  # SESSION-WORK-7: too large is PROBE_FAILED, never a cut result
        raise ProbeFailure(PROBE_FAILED)
    return data


def check_probe_input(header):
    """The probe-input header's exact shape; PROBE_FAILED otherwise."""
    ok = (isinstance(header, dict) and set(header) == PROBE_INPUT_KEYS
          and header["schema_version"] == PROBE_INPUT_SCHEMA and header["probe_kind"] in PROBE_KINDS
          and isinstance(header["request"], dict) and is_canonical_uuid(header["source_id"])
          and header["data_format"] in DATA_FORMATS
          and isinstance(header["content_sha256"], str) and _DIGEST_RE.fullmatch(header["content_sha256"])
          and is_int(header["content_bytes"]) and 0 <= header["content_bytes"] <= MAX_SOURCE_BYTES
          and isinstance(header["sandbox_policy_digest"], str)
          and _DIGEST_RE.fullmatch(header["sandbox_policy_digest"])
          and same(header["result_max_bytes"], PROBE_RESULT_MAX_BYTES))
    if not ok:
        raise ProbeFailure(PROBE_FAILED)
    try:
        normalized = normalize_request(header["probe_kind"], header["request"])
    except ProbeFailure:
        raise ProbeFailure(PROBE_FAILED) from None
    # the node sends the normalized request, for this source: anything else is not its input
    if not same(normalized, header["request"]) or header["request"]["source_id"] != header["source_id"]:
        raise ProbeFailure(PROBE_FAILED)


def array_header(content):
    """(columns, where the rows start) when the first line is a list of names (CRAWLER-RESULT-10), else None."""
    end = content.find(b"\n")
    try:
        columns = parse_lenient(content[:end if end >= 0 else len(content)])
    except JsonError:
        return None
    if isinstance(columns, list) and columns and all(isinstance(name, str) for name in columns):
        return columns, end + 1 if end >= 0 else len(content)
    return None


def content_table(content, data_format):
    """(columns, rows) of the content; rows is a lazy iterator of checked rows (one value per column).

    Our crawler's JSON lines (CRAWLER-RESULT-10), else the receipt's format (D45);
    anything else, or a row that breaks its form, is PROBE_PARSE_EMPTY (SESSION-WORK-1).
    """
    if data_format not in DATA_FORMATS:
        raise ProbeFailure(PROBE_PARSE_EMPTY)
    header = array_header(content)
    if header is not None:
        columns, start = header
        return columns, _array_rows(content, start, len(columns))
    if data_format == "csv":
        return _csv_table(content)
    return _object_table(content)


def _lines(content, start):
    """(start, stop) of each line from `start`: \n ends a line, \r\n too; blank lines are skipped."""
    while start < len(content):
        stop = content.find(b"\n", start)
        stop = len(content) if stop < 0 else stop
        end = stop - 1 if stop > start and content[stop - 1:stop] == b"\r" else stop
        if end > start:
            yield start, end
        start = stop + 1


def _array_rows(content, start, width):
    view = memoryview(content)
    for begin, end in _lines(content, start):
        try:
            values = parse_lenient(view[begin:end], floats=True)
        except JsonError:
            raise ProbeFailure(PROBE_PARSE_EMPTY) from None
        if not (isinstance(values, list) and len(values) == width and all(map(is_row_value, values))):
            raise ProbeFailure(PROBE_PARSE_EMPTY)
        yield values


def _csv_table(content):
    try:
        text = content.decode("utf-8-sig")  # UTF-8, a BOM dropped
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        columns = next(reader, None)
    except (UnicodeDecodeError, csv.Error):
        raise ProbeFailure(PROBE_PARSE_EMPTY) from None
    if not columns:
        raise ProbeFailure(PROBE_PARSE_EMPTY)

    def rows():
        width = len(columns)
        try:
            for fields in reader:
                if not fields:
                    continue  # a blank line is no row
                if len(fields) > width:
                    raise ProbeFailure(PROBE_PARSE_EMPTY)
                yield fields + [""] * (width - len(fields))
        except csv.Error:  # a field past csv's limit, a quote left open
            raise ProbeFailure(PROBE_PARSE_EMPTY) from None

    return columns, rows()


def _object_table(content):
    view, columns, seen = memoryview(content), [], set()
    for begin, end in _lines(content, 0):  # first pass: the columns, in first-seen order
        record = _record(view[begin:end])
        for name in record:
            if name not in seen:
                seen.add(name)
                columns.append(name)
    if not columns:
        raise ProbeFailure(PROBE_PARSE_EMPTY)

    def rows():
        for begin, end in _lines(content, 0):
            record = _record(view[begin:end])
            yield [record.get(name) for name in columns]

    return columns, rows()


def _record(line):
    try:
        record = parse_lenient(line, floats=True)
    except JsonError:
        raise ProbeFailure(PROBE_PARSE_EMPTY) from None
    if not (isinstance(record, dict) and all(map(is_row_value, record.values()))):
        raise ProbeFailure(PROBE_PARSE_EMPTY)
    return record


def is_row_value(value):
    """A value a row may hold: a string, an integer, a finite number, a boolean or null."""
    return value is None or isinstance(value, (str, int)) or (isinstance(value, float) and math.isfinite(value))


def probe_child_mode(rest):
    """--probe-child (SESSION-ISOLATION-7): the probe child; it never returns."""
    if rest:  # SESSION-ARGV-1: only the flag alone names this mode
        write_all(2, UsageError(SESSION_DISPATCH_ARGUMENTS_INVALID, ARGV_REFUSED).text.encode("ascii"))
        return EXIT_USAGE
    # Its output went out unbuffered (write_all), so it skips the interpreter's shutdown:
    # the node waits for its exit, and a probe's latency is a person's wait (~15 ms saved).
    os._exit(probe_child_main())


CHILD_MODES = (((PROBE_CHILD_FLAG,), probe_child_mode),)


# 6.8 Progress =================================================================
# Events are sent as made, never retried, never allowed to fail the session,
# and dropped at the deadline (SESSION-PROGRESS-*).

EVENT_TYPES = {"attempt_started": "attempt_started", "source_probe_started": "source_probe_started",
               "source_probe_settled": "source_probe_completed", "attempt_finished": "attempt_finished"}


def event_id(attempt_id, sequence, name, payload_digest):
    """SESSION-PROGRESS-1: a version-4 UUID derived from the event, so the same event gets the same id."""
    raw = bytearray(hashlib.sha256(("%s:%d:%s:%s" % (attempt_id, sequence, name, payload_digest))
                                   .encode("utf-8")).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))


def is_fact(value):
    """SESSION-PROGRESS-1: an integer in 0..2^53 - 1, or a short identifier-like string."""
    if is_int(value):
        return 0 <= value <= MAX_SAFE_INTEGER
    return isinstance(value, str) and bool(_FACT_RE.fullmatch(value))


class Progress(object):
    """The attempt's events: numbered as made, sent in batches, capped, dropped at the deadline."""

    def __init__(self, callbacks, lease, deadline):
        self.callbacks = callbacks
        self.lease = lease
        self.deadline = deadline
        self.sequence = 0  # events made
        self.batch = 0  # appends sent
        self.pending = []
        self.disarmed = False

    def make(self, name, facts):
        """Make one event (SESSION-PROGRESS-1); past the cap or the deadline, nothing (PROGRESS-6, DEADLINE-4)."""
        if self.deadline.expired():
            self.disarm()
            return
        if self.disarmed or self.sequence >= MAX_PROGRESS_EVENTS_PER_ATTEMPT:
            return  # SESSION-PROGRESS-6: no further event, attempt_finished included
        if not all(is_fact(value) for value in facts.values()):
            return  # a fact no watcher could read is never sent (D36 keeps narrated facts readable)
        self.sequence += 1
        payload = {"name": EVENT_TYPES[name], "facts": facts}
        payload_digest = digest_of(payload)
        event = binding_of(self.lease)
        event.update(client_event_id=event_id(self.lease.attempt_id, self.sequence, name, payload_digest),
                     event_type=EVENT_TYPES[name], payload_digest=payload_digest, payload=payload)
        self.pending.append(event)

    def disarm(self):
        self.disarmed = True
        self.pending = []  # SESSION-DEADLINE-4: events not yet sent are dropped

    def flush(self, cap=None):
        """One append of every event made since the last (SESSION-PROGRESS-4); its failure changes nothing."""
        if self.deadline.expired():
            self.disarm()
            return
        # SESSION-CALLBACK-2: a path the lease does not allow is never called
        if not self.pending or not self.callbacks.allowed("append"):
            self.pending = []
            return
        events, self.pending = self.pending, []
        self.batch += 1  # batches numbered 1, 2, ... without a gap
        key = "session:%s:event-progress:%d" % (self.lease.attempt_id, self.batch)
        try:
            self.callbacks.call("append", canonical_bytes(events), key, limit_s=EVENTS_TIMEOUT_S, cap=cap)
        except (SessionError, StopRequested):
            pass  # SESSION-PROGRESS-5: dropped, not retried; the caller looks at the stop and the deadline


# 6.9 The lease ================================================================
# Every rule is checked before the first capability call; a lease that breaks
# one is refused and its capability discarded unused (contract: The lease).

LEASE_KEYS = frozenset((
    "schema_version", "session_id", "workspace_id", "run_id", "attempt_id", "generation", "fence", "capability",
    "capability_expires_at", "callback_base_url", "allowed_callback_paths", "heartbeat_interval_seconds",
    "claim_poll_interval_seconds", "idle_timeout_seconds", "context"))
CALLBACK_PREFIX = "/internal/v3/producer/"  # the upstream's one rule for every allowed callback path
# Section *Callbacks*: verb -> (method, path template); the templates are section 2's deployment constants.
TEMPLATES = collections.OrderedDict([
    ("start", ("POST", START_PATH_TEMPLATE)),
    ("heartbeat", ("POST", HEARTBEAT_PATH_TEMPLATE)),
    ("append", ("POST", EVENTS_PATH_TEMPLATE)),
    ("claim", ("POST", CLAIM_PATH_TEMPLATE)),
    ("report", ("POST", RESULT_PATH_TEMPLATE)),
    ("acquire", ("POST", ACQUISITIONS_PATH_TEMPLATE)),
    ("read", ("GET", ACQUISITION_PATH_TEMPLATE)),
])
# SESSION-CALLBACK-5 (D42): a verb's success is 200 or 201 (a create answered 200 is a replay, a
# claim answered 201 a producer's choice); any other status, 2xx included, is a refusal.
SUCCESS_STATUSES = frozenset((200, 201))
REQUIRED_VERBS = ("start", "claim", "report")  # SESSION-LEASE-5: a lease allowing none of one is refused
# The ids a path is checked with before the probe or the acquisition exists (SESSION-LEASE-5): an entry
# that allows every probe's result path allows this one's.
SAMPLE_IDS = {"probe_id": "00000000-0000-4000-8000-000000000000",
              "crawler_session_id": "00000000-0000-4000-8000-000000000000"}
_PLACEHOLDER_RE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


def path_pattern(entry):
    """An allowed_callback_paths entry as the paths it allows (SESSION-CALLBACK-2, D16).

    The entry and what lies below it after a `/` or `:` (a trailing `/` is a
    prefix); each `{name}` is one id, text without `/` or `:`.
    """
    parts, start = [], 0
    for match in _PLACEHOLDER_RE.finditer(entry):
        parts.append(re.escape(entry[start:match.start()]) + "[^/:]+")
        start = match.end()
    parts.append(re.escape(entry[start:]))
    return re.compile("".join(parts) + (".*" if entry.endswith("/") else "(?:[/:].*)?"), re.DOTALL)


def allows(patterns, path):
    """SESSION-CALLBACK-2: some entry of the lease allows this concrete path."""
    return any(pattern.fullmatch(path) for pattern in patterns)


def verb_path(verb, attempt_id, ids=None):
    """The concrete path of one call: the verb's template with the lease's attempt and the call's ids."""
    return TEMPLATES[verb][1].format(attempt_id=attempt_id, **(ids or {}))

Lease = collections.namedtuple(
    "Lease", "session_id workspace_id run_id attempt_id generation fence expires_text expires_at callback_base "
             "allowed heartbeat_s claim_poll_s idle_timeout_s source_ids")


def is_interval(value):
    """SESSION-LEASE-6: a number (an integer or a fraction, never a boolean or a string) in (0, 2^53 - 1]."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= MAX_SAFE_INTEGER


def admit_lease(doc):
    """(Lease, capability bytearray) of a lease document, or SESSION_LEASE_INVALID (SESSION-LEASE-1..7).

    The window (SESSION-LEASE-4) is judged by the caller on its own clocks.
    """
    def invalid(detail):
        return SessionError(SESSION_LEASE_INVALID, detail)

    keys = set(doc)
    if keys != LEASE_KEYS:  # SESSION-LEASE-1: the upstream's exact key set; names only, sorted, never a value
        raise invalid("omits %s; has unexpected %s" % (sorted(LEASE_KEYS - keys), sorted(keys - LEASE_KEYS)))
    # SESSION-LEASE-2 (D2): schema_version is present; its value is not looked at, as upstream
    for key in ("session_id", "workspace_id", "run_id", "attempt_id"):
        if not is_canonical_uuid(doc[key]):  # SESSION-LEASE-2: pasted into paths and bodies: one spelling
            raise invalid(key)
    for key in ("generation", "fence"):
        if not (is_int(doc[key]) and 1 <= doc[key] <= MAX_SAFE_INTEGER):  # SESSION-LEASE-2: never true or 7.0
            raise invalid(key)
    capability = doc["capability"]
    if not (isinstance(capability, str) and len(capability) <= MAX_CAPABILITY_BYTES
            and _CAPABILITY_RE.fullmatch(capability)):
        raise invalid("capability")  # SESSION-LEASE-3: a JWT or a URL never becomes a bearer
    expires_at = parse_timestamp(doc["capability_expires_at"])
    if expires_at is None:  # SESSION-LEASE-4: a canonical UTC timestamp
        raise invalid("capability_expires_at")
    base = doc["callback_base_url"]
    base = base.rstrip("/") if isinstance(base, str) else base  # as the upstream: every trailing / goes
    if not is_https_url(base):  # SESSION-LEASE-5: a path is allowed; it need not be the origin (D16)
        raise invalid("callback_base_url")
    allowed = doc["allowed_callback_paths"]
    # SESSION-LEASE-5: the upstream's rule, no more: a non-empty list of strings under the producer prefix
    if not (isinstance(allowed, list) and allowed and all(
            isinstance(path, str) and path.startswith(CALLBACK_PREFIX) for path in allowed)):
        raise invalid("allowed_callback_paths")
    patterns = tuple(path_pattern(path) for path in allowed)
    # SESSION-LEASE-5 (D16): the node calls only where the lease allows; without start, claim and
    # result allowed no session can run, so the capability is refused before it is used
    if any(not allows(patterns, verb_path(verb, doc["attempt_id"], SAMPLE_IDS if verb == "report" else None))
           for verb in REQUIRED_VERBS):
        raise invalid("allowed_callback_paths allows no start, claim or result")
    for key in ("heartbeat_interval_seconds", "claim_poll_interval_seconds", "idle_timeout_seconds"):
        if not is_interval(doc[key]):  # SESSION-LEASE-6 (D22: idle_timeout is checked, then left to the server)
            raise invalid(key)
    context = doc["context"]
    if not isinstance(context, dict):  # SESSION-LEASE-7: other keys are ignored
        raise invalid("context")
    if not (is_canonical_uuid(context.get("dataset_id")) and is_canonical_uuid(context.get("question_id"))):
        raise invalid("context ids")  # SESSION-LEASE-7 (D6): events and results name the dataset and question
    if context.get("table_id") is not None and not is_canonical_uuid(context["table_id"]):
        raise invalid("context.table_id")
    sources = context.get("source_ids", [])
    # SESSION-LEASE-7: the upstream's rule; an id named twice is one id, as in the upstream's set
    if not (isinstance(sources, list) and len(sources) <= MAX_SOURCE_IDS
            and all(is_canonical_uuid(source) for source in sources)):
        raise invalid("context.source_ids")
    secret = PROCESS.hold_secret(bytearray(capability.encode("ascii")))  # SESSION-SECRET-5: the capability's one copy
    doc["capability"] = None
    lease = Lease(
        session_id=doc["session_id"], workspace_id=doc["workspace_id"], run_id=doc["run_id"],
        attempt_id=doc["attempt_id"], generation=doc["generation"], fence=doc["fence"],
        expires_text=doc["capability_expires_at"], expires_at=expires_at, callback_base=base,
        allowed=patterns,
        heartbeat_s=max(MIN_INTERVAL_S, doc["heartbeat_interval_seconds"]),  # D24: the floor, nothing above
        claim_poll_s=max(MIN_INTERVAL_S, doc["claim_poll_interval_seconds"]),
        idle_timeout_s=doc["idle_timeout_seconds"],
        source_ids=frozenset(sources))  # D3: absent or empty admits no source
    return lease, secret


class SessionDeadline(object):
    """The capability's expiry on two clocks (SESSION-DEADLINE-1).

    A wall clock stepped back cannot lengthen the session; a clock error is 0.
    """

    def __init__(self, expires_at):
        self.expires_at = expires_at
        self.initial = expires_at - time.time()
        self.mono_at = time.monotonic() + self.initial

    def remaining(self):
        try:
            left = min(self.expires_at - time.time(), self.mono_at - time.monotonic())
        except Exception:  # an unusable clock fails closed
            return 0.0
        return left if math.isfinite(left) and left > 0 else 0.0

    def expired(self):
        return self.remaining() <= 0


# 6.10 Callbacks ===============================================================
# Every capability call: one allowed template, the capability as bearer, an
# Idempotency-Key, a canonical fenced body, min(its limit, the time left)
# (SESSION-CALLBACK-1..6); retried only where the contract says (SESSION-BACKOFF-*).

Answer = collections.namedtuple("Answer", "status doc")
_RANDOM = random.SystemRandom()  # draws the jitter; reads os.urandom only when used


def backoff_delay(attempt, base, retry_after_s=None):
    """SESSION-BACKOFF-1, -2 (D25): the attempt-th retry waits U[v/2, v], v = min(16 base, base 2^(n-1)).

    A refusal's Retry-After is a floor.
    """
    ceiling = min(BACKOFF_CAP_FACTOR * base, base * 2 ** min(attempt - 1, 16))
    delay = _RANDOM.uniform(ceiling / 2, ceiling)
    return max(delay, retry_after_s) if retry_after_s else delay


class Callbacks(object):
    """The capability calls of one attempt, from any thread (the heartbeat's included)."""

    def __init__(self, lease, capability, deadline):
        self.lease = lease
        self.capability = capability  # a registered bytearray, wiped when the session ends
        self.deadline = deadline
        self.keeper = Keeper()  # D53: an idle session's claim is a request on an open connection, not a handshake

    def allowed(self, verb, ids=None):
        """SESSION-CALLBACK-2: the lease allows this verb's path (with these ids, or any)."""
        return allows(self.lease.allowed, verb_path(verb, self.lease.attempt_id, ids or (
            SAMPLE_IDS if "{" in TEMPLATES[verb][1].replace("{attempt_id}", "") else None)))

    def call(self, verb, body=None, key=None, ids=None, limit_s=CALLBACK_TIMEOUT_S, cap=None, holder=None,
             need_object=False):
        """One capability call: an Answer, or Refusal, StopRequested or DeadlinePassed.

        `cap` (the acquisition ceiling, the stop's grace) bounds it further.
        """
        method = TEMPLATES[verb][0]
        path = verb_path(verb, self.lease.attempt_id, ids)
        if not allows(self.lease.allowed, path):  # SESSION-CALLBACK-2 (D16): never sent
            raise Refusal(SESSION_CALLBACK_NOT_ALLOWED, sent=False)
        left = self.deadline.remaining()
        if left <= 0:  # SESSION-DEADLINE-2: no capability call starts at or after the deadline
            raise DeadlinePassed()
        seconds = min(limit_s, left, cap.remaining() if cap is not None else limit_s)
        if seconds <= 0:
            raise Refusal(CONTROL_PLANE_UNREACHABLE)
        # SESSION-CALLBACK-1: the lease's attempt id and the path's ids in canonical text, no query
        url = self.lease.callback_base + path
        budget = Deadline(seconds)  # SESSION-CALLBACK-6: connect to the last byte of the answer
        authorization = bearer(self.capability, len(self.capability))
        try:
            return self.exchange(method, url, authorization, body, key, budget, holder, need_object)
        except (Refusal, DeadlinePassed):
            raise
        except Exception:  # transport, TLS, the watchdog, a stop's shutdown, a body cut short
            if STOP.should_abandon():
                raise StopRequested("stop requested during a capability call") from None
            if self.deadline.remaining() <= 0:
                raise DeadlinePassed() from None
            raise Refusal(CONTROL_PLANE_UNREACHABLE) from None  # SESSION-CALLBACK-6: cut off, no answer
        finally:
            PROCESS.wipe(authorization)  # SESSION-SECRET-5: built for this request and dropped

    def exchange(self, method, url, authorization, body, key, budget, holder, need_object):
        """One request of call(), on a kept connection when one is usable (D53: one that fails before
        its answer is that verb's failure, as any other: no verb is sent twice)."""
        with http_exchange(url, budget, holder, self.keeper) as session:
            conn = session.conn
            conn.putrequest(method, session.target.request_target, skip_accept_encoding=True)
            conn.putheader("Authorization", authorization)  # SESSION-CALLBACK-3: the capability, nothing else
            conn.putheader("Accept", "application/json")
            if key is not None:
                conn.putheader("Idempotency-Key", key)  # D29: the upstream's parts joined with ':'
            if body is not None:
                conn.putheader("Content-Type", "application/json")
                conn.putheader("Content-Length", str(len(body)))  # SESSION-CALLBACK-3: exact
            conn.endheaders(body)
            response = conn.getresponse()
            if response.status not in SUCCESS_STATUSES:  # SESSION-CALLBACK-5 (D42): a 3xx included, never followed
                data = read_some(response, MAX_ERROR_BODY_BYTES)
                code = refusal_code(data, len(data), CONTROL_PLANE_HTTP % response.status)
                raise Refusal(code, response.status, retry_after_of(response))
            answer = Answer(response.status, self.answer_doc(response, budget, need_object))
            session.keep(response)
            return answer

    @staticmethod
    def answer_doc(response, budget, need_object):
        """A success body: bounded; a document (claim, acquisition) read as the upstream reads it
        (D41), CONTROL_PLANE_RESPONSE_INVALID otherwise (SESSION-CALLBACK-5).  The answers of start,
        heartbeat, append and report are read and not looked at: the node uses nothing in them."""
        declared = announced_length(response)
        if declared is not None and declared > MAX_CONTROL_RESPONSE_BYTES:  # refused before it is read
            raise Refusal(CONTROL_PLANE_RESPONSE_INVALID, response.status)
        buffer, count = read_body(response, MAX_CONTROL_RESPONSE_BYTES, budget)
        try:
            if count > MAX_CONTROL_RESPONSE_BYTES:
                raise Refusal(CONTROL_PLANE_RESPONSE_INVALID, response.status)
            if not need_object:
                return None  # start, heartbeat, append and report: whatever a producer answers with
            with memoryview(buffer) as view:
                doc = parse_answer(view[:count])
        except JsonError:
            raise Refusal(CONTROL_PLANE_RESPONSE_INVALID, response.status) from None
        finally:
            PROCESS.wipe(buffer)
        if not isinstance(doc, dict):
            raise Refusal(CONTROL_PLANE_RESPONSE_INVALID, response.status)
        return doc


# 6.11 Sandbox =================================================================
# A probe child parses content nobody vouches for: without the filter it could
# use the node's network.  The node sets its limits with prlimit, since a
# preexec_fn in a threaded process can deadlock (SESSION-ISOLATION-5, D30).

SANDBOX_POLICY_SCHEMA = "session-probe-sandbox.v1"


def sandbox_policy(config):
    """The sandbox policy document; every result carries its digest (SESSION-ISOLATION-5)."""
    return {"schema_version": SANDBOX_POLICY_SCHEMA, "network": "denied", "process_creation": "denied",
            "no_new_privs": True, "address_space_bytes": PROBE_CHILD_ADDRESS_SPACE_BYTES,
            "core_bytes": PROBE_CHILD_CORE_BYTES, "open_files": PROBE_CHILD_OPEN_FILES,
            "cpu_seconds": config.sandbox_cpu_s, "timeout_ms": config.sandbox_timeout_ms,
            "external_network_policy_attestation": config.attestation}


def seccomp_spec():
    """This machine's seccomp table, or None: Linux, 64-bit, an architecture the block knows."""
    if not sys.platform.startswith("linux") or struct.calcsize("P") != 8:
        return None
    return SECCOMP_ARCHES.get(os.uname().machine)


def sandbox_available():
    """True when a probe child can be confined here: the filter, the kernel's support, prlimit (D30)."""
    if seccomp_spec() is None or load_libc() is None or not hasattr(resource, "prlimit"):
        return False
    # each PR_GET_* fails with EINVAL on a kernel without seccomp or no_new_privs
    return prctl(PR_GET_SECCOMP) >= 0 and prctl(PR_GET_NO_NEW_PRIVS) >= 0


def child_limits(config=None):
    """(resource, value) of the policy's four limits (SESSION-ISOLATION-5); without a config, all but the CPU's."""
    fixed = ((resource.RLIMIT_AS, PROBE_CHILD_ADDRESS_SPACE_BYTES), (resource.RLIMIT_CORE, PROBE_CHILD_CORE_BYTES),
             (resource.RLIMIT_NOFILE, PROBE_CHILD_OPEN_FILES))
    return fixed if config is None else fixed + ((resource.RLIMIT_CPU, config.sandbox_cpu_s),)


def enter_sandbox():
    """In a probe child, before the first byte of input: parent death, limits, no_new_privs, the filter.

    Any failure raises, and the child writes PROBE_FAILED rather than read its
    input unconfined (SESSION-ISOLATION-5).
    """
    spec = seccomp_spec()
    if spec is None or load_libc() is None:
        raise ProbeFailure(PROBE_FAILED)
    parent = os.getppid()
    if prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL)) != 0:  # SESSION-ISOLATION-3: dies with its parent
        raise ProbeFailure(PROBE_FAILED)
    if os.getppid() != parent:  # the parent died before the line above took effect
        raise ProbeFailure(PROBE_FAILED)
    for limit, value in child_limits():
        _soft, hard = resource.getrlimit(limit)
        lowered = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(limit, (lowered, lowered))  # the node sets them too; a direct run gets them here
    if prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:  # unprivileged seccomp requires it
        raise ProbeFailure(PROBE_FAILED)
    blob = seccomp_program(spec)
    program_bytes = ctypes.create_string_buffer(blob, len(blob))
    program = SockFprog(len(blob) // 8, ctypes.addressof(program_bytes))
    # SESSION-ISOLATION-5: no socket, no new process or thread, no ptrace, no io_uring from here on
    if prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(program)) != 0:
        raise ProbeFailure(PROBE_FAILED)


# 6.12 Probe children ==========================================================
# A warm pool keeps an interpreter's start out of a follow-up's latency
# (SESSION-ISOLATION-6, -8, D11).  Children are started from the main thread
# only: a parent-death signal fires when the thread that forked exits.

def node_file():
    """This file's absolute path, for a child's argv; None when there is no file."""
    try:
        return os.path.abspath(__file__)
    except NameError:
        return None


PROBE_CODE_PREFIX = "probe-code-"  # D54: <scratch>/probe-code-<sha256 of the node file>.<cache tag>.pyc


class ProbeCode(object):
    """What a probe child's argv names after `-I -S` (D54): this run's bytecode of the node file, else the file.

    A probe child is this file started again, and compiling its 5,000 lines was half of
    a child's start (34 of 74 ms of CPU).  So the session compiles the file once into its
    scratch directory (0700, removed at the end: SESSION-ISOLATION-9) and starts each
    child from that.  The file is read and hashed again before every child: a node file
    replaced while the session runs is compiled again, never run from the old bytes.  A
    bytecode file that cannot be written costs speed, not the probe: the child then
    starts from the node file as before.
    """

    def __init__(self, scratch):
        self.scratch = scratch
        self.lock = threading.Lock()
        self.known = None  # (digest, path) of the bytecode this run wrote last
        self.failed = None  # a digest whose bytecode could not be written: children start from the file

    def path(self):
        """The file a child runs now: the bytecode when it holds exactly the node file's present bytes."""
        node = node_file()
        try:
            with open(node, "rb") as handle:
                source = handle.read()
        except (OSError, TypeError):
            return node  # the child meets the same error, and its probe fails as before
        digest = sha256_hex(source)
        with self.lock:
            if self.known is not None and self.known[0] == digest and os.path.isfile(self.known[1]):
                return self.known[1]
            if self.failed == digest or self.scratch is None:
                return node
            try:
                self.known = (digest, self.write(node, source, digest))
            except (OSError, ValueError, SyntaxError, MemoryError):
                self.known, self.failed = None, digest
                return node
            return self.known[1]

    def write(self, node, source, digest):
        """Compile `source` (the bytes just hashed) into the scratch directory; the bytecode's path."""
        data = node_bytecode(source, node)  # the name's digest is the source check, made above
        path = os.path.join(self.scratch, "%s%s.%s.pyc" % (PROBE_CODE_PREFIX, digest,
                                                           sys.implementation.cache_tag or "none"))
        # Whole or absent, 0600; no fsync: the scratch directory does not outlive the session.
        atomic_write(path, data, durable=False)
        return path


def seccomp_installed(pid):
    """True once /proc/<pid>/status shows the filter: the child is ready for its input."""
    try:
        with open("/proc/%d/status" % pid, "rb") as handle:
            return b"\nSeccomp:\t2\n" in handle.read()
    except OSError:
        return False


class ProbeChild(object):
    """One probe child: its Popen, and whether its sandbox was seen in place."""

    def __init__(self, proc):
        self.proc = proc
        self.ready = False

    def is_ready(self):
        if not self.ready and self.proc.poll() is None:
            self.ready = seccomp_installed(self.proc.pid)
        return self.ready

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        """SIGKILL the child's group, before it is reaped (a zombie keeps the group id)."""
        if self.proc.returncode is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass

    def end(self):
        """Kill the group, reap, close the pipes (SESSION-ISOLATION-6: no child outlives its probe)."""
        self.kill()
        try:
            self.proc.wait(timeout=CHILD_REAP_WAIT_S)
        except subprocess.TimeoutExpired:
            pass
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass


def spawn_probe_child(config, code):
    """Start one probe child in its sandbox (SESSION-ISOLATION-5) from `code` (a ProbeCode); SessionError
    when it cannot be."""
    node = node_file()
    if not sys.executable or node is None or not os.path.isfile(node):
        raise ProbeFailure(SANDBOX_UNAVAILABLE)
    program = code.path()  # D54: the node's bytecode, else the node file
    # SESSION-ISOLATION-5: an empty environment, but for the attestation
    environment = {ATTESTATION_ENV: config.attestation} if config.attestation else {}
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", program, PROBE_CHILD_FLAG],  # SESSION-ISOLATION-5: this exact argv
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,
            close_fds=True,  # SESSION-ISOLATION-5: descriptors 0, 1 and 2 only
            start_new_session=True,  # SESSION-ISOLATION-5: a session of its own, for killpg
            cwd="/")  # SESSION-ISOLATION-5: relative paths reach nothing of the node's
    except OSError:
        raise ProbeFailure(PROBE_FAILED) from None
    child = ProbeChild(proc)
    try:
        for limit, value in child_limits(config):
            resource.prlimit(proc.pid, limit, (value, value))  # SESSION-ISOLATION-5: set before any input
    except (OSError, ValueError):
        child.end()
        raise ProbeFailure(SANDBOX_UNAVAILABLE) from None
    return child


class WarmPool(object):
    """Probe children started ahead, each waiting for its input in its sandbox (SESSION-ISOLATION-8)."""

    def __init__(self, config, size, code):
        self.config = config
        self.size = size
        self.code = code  # a ProbeCode: what each child runs (D54)
        self.children = []

    def fill(self):
        """Start children until the pool has `size`; a child that cannot start leaves the pool short."""
        while len(self.children) < self.size:
            try:
                self.children.append(spawn_probe_child(self.config, self.code))
            except ProbeFailure:
                return

    def ready_count(self):
        return sum(1 for child in self.children if child.is_ready())

    def take(self):
        """A ready child, or a fresh one; the session refills the pool once the probe is reported (D52)."""
        child = None
        while self.children and child is None:
            candidate = self.children.pop(0)
            if candidate.alive():
                child = candidate
            else:
                candidate.end()
        if child is None:
            child = spawn_probe_child(self.config, self.code)
        return child

    def close(self):
        for child in self.children:
            child.end()
        self.children = []


def drive_probe_child(child, data, ceiling, deadline):
    """Feed `data` to the child, drain its outputs, until it exits: (stdout, stderr, overflowed).

    Raises StopRequested (SESSION-STOP-2), DeadlinePassed (SESSION-DEADLINE-4)
    or SANDBOX_TIMEOUT (SESSION-ISOLATION-6); the caller kills and reaps.
    """
    proc = child.proc
    fds = {"in": proc.stdin.fileno(), "out": proc.stdout.fileno(), "err": proc.stderr.fileno()}
    for fd in fds.values():
        os.set_blocking(fd, False)
    pending, outputs = memoryview(data), {"out": bytearray(), "err": bytearray()}
    bounds = {"out": PROBE_RESULT_MAX_BYTES + 1, "err": MAX_PROBE_CHILD_STDERR_BYTES + 1}  # ISOLATION-7
    selector = selectors.DefaultSelector()
    try:
        selector.register(fds["in"], selectors.EVENT_WRITE, "in")
        selector.register(fds["out"], selectors.EVENT_READ, "out")
        selector.register(fds["err"], selectors.EVENT_READ, "err")
        wake = STOP.wait_fd()
        if wake is not None:
            selector.register(wake, selectors.EVENT_READ, "stop")
        open_outputs = 2
        exit_poll = CHILD_EXIT_POLL_FIRST_S  # a probe's latency is a person's wait: no fixed 50 ms here
        while True:
            if STOP.should_abandon():
                raise StopRequested("stop requested while a probe child ran")
            if deadline.expired():
                raise DeadlinePassed()
            wait = min(ceiling.remaining(), deadline.remaining())
            if ceiling.expired():
                raise ProbeFailure(SANDBOX_TIMEOUT)  # SESSION-ISOLATION-6: the probe timeout, capped by the deadline
            if open_outputs == 0:  # both outputs closed: wait for its exit, still watching the rest
                if child_exited(proc.pid):
                    break
                wait = min(wait, exit_poll)
                exit_poll = min(exit_poll * 2, CHILD_EXIT_POLL_S)
            for key, _mask in selector.select(wait):
                name = key.data
                if name == "in":
                    try:
                        pending = pending[os.write(fds["in"], pending[:IO_CHUNK_BYTES]):]
                    except BlockingIOError:
                        continue
                    except OSError:  # EPIPE: it stopped reading; its exit status says why
                        pending = pending[len(pending):]
                    if not pending:
                        selector.unregister(fds["in"])
                        proc.stdin.close()  # exactly the header and content_bytes, then the end
                elif name in outputs:
                    got = os.read(fds[name], bounds[name] - len(outputs[name]))
                    if not got:
                        selector.unregister(fds[name])
                        open_outputs -= 1
                        continue
                    outputs[name] += got
                    if len(outputs[name]) >= bounds[name]:  # SESSION-ISOLATION-7: past its bound: judged now
                        return bytes(outputs["out"]), bytes(outputs["err"]), True
        return bytes(outputs["out"]), bytes(outputs["err"]), False
    finally:
        selector.close()


def child_exited(pid):
    """True when the child has exited; it is not reaped, so its group can still be killed."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def judge_probe_child(returncode, stdout, stderr, overflowed):
    """The result a finished child wrote (canonical bytes, to be checked), or its ProbeFailure.

    SESSION-ISOLATION-7: exit 0 and stdout only, or exit 1 and the one failure
    line only; anything else is PROBE_FAILED.
    """
    if returncode == 0 and not stderr and stdout:
        if overflowed:  # SESSION-PROBE-6: a result above PROBE_RESULT_MAX_BYTES is never reported
            raise ProbeFailure(PROBE_RESULT_INVALID)
        return stdout
    if returncode == 1 and not stdout and not overflowed and stderr.endswith(b"\n"):
        try:
            line = parse_canonical(stderr[:-1])
        except JsonError:
            raise ProbeFailure(PROBE_FAILED) from None
        if (isinstance(line, dict) and set(line) == {"code", "status"} and line["status"] == STATUS_FAILED
                and isinstance(line["code"], str) and line["code"] in CHILD_CODES):
            raise ProbeFailure(line["code"])
    raise ProbeFailure(PROBE_FAILED)


# 6.13 Acquisition =============================================================
# A probe's bytes come only through the control plane, and the bundle is bound
# to this acquisition before a byte reaches a probe child (SESSION-ACQUIRE-*,
# D27, D35).

ADAPTER_ID = "public.https"
READY, FAILED = "result_ready", "failed"  # an acquisition's settled statuses; any other is "not yet"


def check_acquisition(doc, lease, source_id, crawler_session_id):
    """SESSION-ACQUIRE-3: the document is bound to this attempt and source: its crawler_session_id.

    As the upstream compares them (D44), the fence as a number (7.0 is 7); a read
    naming another acquisition than the create's is refused (a binding).
    """
    expected = {"workspace_id": lease.workspace_id, "run_id": lease.run_id, "attempt_id": lease.attempt_id,
                "research_session_id": lease.session_id, "source_id": source_id, "adapter_id": ADAPTER_ID}
    named = doc.get("crawler_session_id")
    session = probe_uuid(named)
    if crawler_session_id is None:
        ok = session is not None
    else:  # a read: absent is the create's; present, the same acquisition
        ok = named is None or session == crawler_session_id
        session = crawler_session_id
    if not ok or not same_number(doc.get("producer_fence"), lease.fence) or any(
            not isinstance(doc.get(key), str) or doc[key] != value for key, value in expected.items()):
        raise ProbeFailure(PROBE_SOURCE_ACQUISITION_MISBOUND)  # and the store receives nothing for it
    return session


def check_download_url(url, config, lease):
    """SESSION-ACQUIRE-6: the descriptor's URL is the result authority's, with its signed query."""
    if not isinstance(url, str) or not 1 <= len(url) <= MAX_DOWNLOAD_URL_CHARS:
        return False
    base, _mark, query = url.partition("?")
    scheme = "http" if url.startswith("http://") else "https"
    if scheme == "http" and not (config.bucket and config.storage_origin.startswith("http://")):
        return False  # plain HTTP only from a plain-HTTP emulator (SESSION-CONFIG-4)
    parts = https_parts(base, scheme)
    if parts is None or not parts[2].startswith("/") or "#" in query:
        return False
    if query and not _PRINTABLE_RE.fullmatch(query) or (scheme == "https" and not query):
        return False  # an https URL carries its signature in the query
    if config.bucket:  # the store's, under the bucket
        return origin_text(parts[0], parts[1], scheme) == config.storage_origin and parts[2].startswith(
            "/%s/" % config.bucket)
    return origin_text(parts[0], parts[1], scheme) == origin_of(lease.callback_base)  # the control plane's own


def instant_of(value):
    """Epoch seconds of an ISO 8601 instant with its zone (`Z` or +HH:MM), a fraction of up to
    6 digits allowed, as an aware datetime.fromisoformat() reads it; None otherwise (D44)."""
    match = _INSTANT_RE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    date, clock, fraction, zone = match.groups()
    try:
        moment = datetime.datetime.strptime(date + "T" + clock, "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    offset = 0 if zone in ("Z", "z") else (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    epoch = moment.replace(tzinfo=datetime.timezone.utc).timestamp() - offset
    return epoch + (float("0" + fraction) if fraction else 0.0)


_INSTANT_RE = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt]([0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]{1,6})?"
                         r"(Z|z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])")
# The descriptor's members that bind it to its acquisition: each one present must agree (SESSION-ACQUIRE-6).
DESCRIPTOR_BINDINGS = ("crawler_session_id", "request_digest", "source_id", "source_authority_digest")


def check_descriptor(doc, crawler_session_id, source_id, config, lease):
    """SESSION-ACQUIRE-6: (url, size, sha256) of a ready acquisition, before any byte (D14, D44).

    The URL on the result authority (no escape to another host), the size and
    SHA-256 the download is verified against; a stated binding or expiry holds.
    """
    download = doc.get("result_download")
    # the acquisition's digests and attestation are compared with the bundle's: each must name something
    if not isinstance(download, dict) or not all(isinstance(doc.get(key), str) for key in (
            "request_digest", "source_authority_digest", "egress_policy_attestation")):
        raise ProbeFailure(PROBE_SOURCE_RESULT_INVALID)
    size = download.get("bundle_size_bytes")
    if is_int(size) and size > MAX_PROBE_ACQUISITION_BUNDLE_BYTES:  # judged on the declared size
        raise ProbeFailure(PROBE_SOURCE_TOO_LARGE)
    expected = {"crawler_session_id": crawler_session_id, "request_digest": doc["request_digest"],
                "source_id": source_id, "source_authority_digest": doc["source_authority_digest"]}
    stated = dict((key, download[key]) for key in DESCRIPTOR_BINDINGS if key in download)
    if "crawler_session_id" in stated:
        stated["crawler_session_id"] = probe_uuid(stated["crawler_session_id"])
    expires = download.get("expires_at")
    expires_at = instant_of(expires) if expires is not None else None
    if (not is_int(size) or not 1 <= size <= MAX_PROBE_ACQUISITION_BUNDLE_BYTES
            or not is_digest(download.get("bundle_sha256"))
            or (expires is not None and (expires_at is None or expires_at <= time.time()))
            or any(value != expected[key] for key, value in stated.items())
            or not check_download_url(download.get("url"), config, lease)):
        raise ProbeFailure(PROBE_SOURCE_DOWNLOAD_INVALID)
    return download["url"], size, download["bundle_sha256"]


def download_bundle(url, size, sha256, path, budget):
    """SESSION-ACQUIRE-7: one anonymous GET, streamed into a private file while hashed: the bytes hashed.

    Nothing of the capability, no redirect, no byte past the declared size.  The
    bundle is held whole for its checks (D27) as it streams, so no byte is read back
    from disk: what is checked is what was hashed (D51).
    Raises PROBE_SOURCE_DOWNLOAD_FAILED, StopRequested, or OSError (`budget`).
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with http_exchange(url, budget) as session:
            conn = session.conn
            conn.putrequest("GET", session.target.request_target, skip_accept_encoding=True)  # byte for byte
            conn.putheader("Connection", "close")
            conn.endheaders()
            response = conn.getresponse()
            declared = announced_length(response)
            if response.status != 200 or (declared is not None and declared != size):
                raise ProbeFailure(PROBE_SOURCE_DOWNLOAD_FAILED)
            digest, count, held = hashlib.sha256(), 0, bytearray(size + 1)  # one byte past it: longer is seen
            with memoryview(held) as view:
                while count <= size:
                    got = response.readinto(view[count:count + min(IO_CHUNK_BYTES, size + 1 - count)])
                    if not got:
                        break
                    digest.update(view[count:count + got])
                    write_all_checked(fd, view[count:count + got])
                    count += got
            if STOP.should_abandon():
                raise StopRequested("stop requested during the download")
            if count != size or digest.hexdigest() != sha256:  # longer, shorter, or other bytes
                raise ProbeFailure(PROBE_SOURCE_DOWNLOAD_FAILED)
            del held[size:]
            return held
    finally:
        os.close(fd)


def remove(path):
    """Unlink a scratch file that may not exist (SESSION-ISOLATION-9: nothing is left behind)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def write_all_checked(fd, view):
    """Write every byte; an OSError (a full disk) propagates."""
    while view:
        view = view[os.write(fd, view):]


# The bundle: a crawler result as the upstream crawler stores it (D27, D45).  Only
# what makes its bytes safe is checked; every answer is read off the content
# itself (SESSION-PROBE-4), so the receipt's description is not judged.

_decoded_bundle = {}  # the last bundle decoded, by its bytes' SHA-256: a follow-up probe downloads it again


def check_bundle(data, key, source_id, acquisition):
    """(content, its SHA-256, data_format) of a downloaded bundle whose bytes hash to `key` (taken as they
    streamed), or its ProbeFailure (SESSION-ACQUIRE-8)."""
    if _decoded_bundle.get("key") != key:  # one entry: a bundle may be 32 MiB
        _decoded_bundle.clear()
        _decoded_bundle.update(key=key, checked=verify_bundle(data))
    content, content_sha256, data_format, bound = _decoded_bundle["checked"]
    # SESSION-ACQUIRE-8: bound to this probe's source and to this acquisition, every time
    if bound != (source_id, source_id, acquisition["request_digest"], ADAPTER_ID,
                 acquisition["egress_policy_attestation"]):
        raise ProbeFailure(PROBE_SOURCE_RESULT_INVALID)
    if len(content) > MAX_SOURCE_BYTES:  # SESSION-ACQUIRE-8: after the bindings, as the upstream
        raise ProbeFailure(PROBE_SOURCE_TOO_LARGE)
    return content, content_sha256, data_format


def verify_bundle(data):
    """(content, its SHA-256, data_format, its bindings) of a bundle whose bytes hold as a crawler result,
    or PROBE_SOURCE_RESULT_INVALID (SESSION-ACQUIRE-8)."""
    def require(ok):
        if not ok:
            raise ProbeFailure(PROBE_SOURCE_RESULT_INVALID)

    try:
        result = parse_canonical(data, floats=True)  # canonical JSON, byte for byte, as the upstream checks
    except JsonError:
        raise ProbeFailure(PROBE_SOURCE_RESULT_INVALID) from None
    require(isinstance(result, dict) and result.get("schema_version") in CRAWLER_RESULT_SCHEMAS)
    receipt, encoded = result.get("acquisition_receipt"), result.get("normalized_content")
    require(isinstance(receipt, dict) and isinstance(encoded, str))
    try:
        content = base64.b64decode(encoded, validate=True)  # standard alphabet, padded
    except ValueError:  # binascii.Error
        content = None
    require(content is not None)
    # the content's digests, as the receipt (and the observation, where it states one) gives them
    content_sha256 = sha256_hex(content)
    observation = result.get("observation")
    stated = observation.get("normalized_content_sha256", content_sha256) if isinstance(observation, dict) \
        else content_sha256
    require(receipt.get("normalized_content_sha256") == content_sha256 and stated == content_sha256
            and same_number(receipt.get("normalized_size_bytes"), len(content)))
    require(all(isinstance(receipt.get(key), str) for key in (
        "normalized_media_type", "normalized_data_format", "normalized_filename")))
    bound = (result.get("source_id"), receipt.get("source_id"), result.get("request_digest"),
             result.get("adapter_id"), receipt.get("egress_policy_attestation"))
    return content, content_sha256, receipt["normalized_data_format"], bound


# Follow-up probes of one source deliver the same bytes again: the verdict on every row
# is kept with the digest of the content it was read from (D51), so other bytes, even of
# the same length and source, are read again, never trusted (SESSION-NODE-4).
SHAPE_MEMO_ENTRIES = 8
_shape_memo = collections.OrderedDict()


def content_shape(content, content_sha256, data_format):
    """(columns, row count) of the content, every row read as a probe child reads it, once per
    content; PROBE_PARSE_EMPTY when one cannot be (D51: a bad row fails every probe of it)."""
    key = (content_sha256, data_format)
    if key not in _shape_memo:
        header = array_header(content) if data_format in DATA_FORMATS else None
        count = array_row_count(content, header[1], len(header[0])) if header is not None else None
        if count is not None:
            _shape_memo[key] = (header[0], count)
        else:  # the row-by-row read decides, and names no row: PROBE_PARSE_EMPTY
            columns, rows = content_table(content, data_format)
            _shape_memo[key] = (columns, sum(1 for _row in rows))
        while len(_shape_memo) > SHAPE_MEMO_ENTRIES:
            _shape_memo.popitem(last=False)
    _shape_memo.move_to_end(key)
    return _shape_memo[key]


_SURROGATE_ESCAPE_RE = re.compile(rb"\\u[dD][89a-fA-F]")  # half of a pair, or a lone one the parser refuses
_MINUS_ZERO_RE = re.compile(rb"-0(?![0-9.eE])")  # the integer -0, which _checked_int refuses
_DIGITS_AS_ZEROS = bytes.maketrans(b"123456789", b"000000000")  # 16 zeros after it: a 16-digit run before
_ROW_VALUE_TYPES = frozenset((str, int, float, bool, type(None)))  # is_row_value's (floats finite by the hook)
ROW_DECODE_BYTES = 1 << 20  # rows decoded at once: their objects (ten times the bytes) are held no longer


def array_row_count(content, start, width):
    """The row count of content[start:] when every line is one array of `width` row values,
    read a MiB of lines per decode; None when such a decode cannot vouch for every row (then
    the row-by-row read decides).  Read one decode a row, the 20,000 rows of 1 MiB took ten
    times as long (0.13 s against 12 ms): most of a first probe's wait.
    """
    lines = content.count(b"\n", start) + (not content.endswith(b"\n"))
    # Each line opens with [ and closes with ]: no blank line, no \r\n, no BOM (the row-by-row
    # read takes those).  A raw newline is refused inside a string, so joined by ",\n" no value
    # runs from one line into the next unless it nests an array, which no row may hold; with
    # as many arrays as lines, each line is exactly one.
    if (not content.startswith(b"[", start) or not content.endswith((b"]", b"]\n"))
            or content.count(b"]\n", start) != content.count(b"\n", start)
            or content.count(b"\n[", start) != lines - 1 or _SURROGATE_ESCAPE_RE.search(content, start)):
        return None
    # parse_lenient's number rules; its depth scan is moot where a nested array is refused.  Its
    # integer hook (a Python call per integer: a third of the time) only where an integer may be
    # -0 or out of range: every integer of at most 15 digits is within 2^53.
    checked = _MINUS_ZERO_RE.search(content, start) or b"0" * 16 in content[start:].translate(_DIGITS_AS_ZEROS)
    decoder = json.JSONDecoder(parse_float=_finite_float, parse_constant=_refuse_constant,
                               parse_int=_checked_int if checked else None)
    arrays = 0
    while start < len(content):
        end = content.find(b"\n", start + ROW_DECODE_BYTES)
        end = len(content) if end < 0 else end + 1
        try:
            rows = decoder.decode("[" + str(content[start:end], "utf-8").rstrip("\n").replace("\n", ",\n") + "]")
        except Exception:  # RecursionError and MemoryError included: the row-by-row read says no
            return None
        if set(map(type, rows)) != {list} or set(map(len, rows)) != {width}:
            return None
        if not set(map(type, itertools.chain.from_iterable(rows))) <= _ROW_VALUE_TYPES:
            return None
        arrays, start = arrays + len(rows), end
    return lines if arrays == lines else None


# 6.14 Probe vocabulary ========================================================
# The node's names the vocabulary and the prober use (they must stay defined here).

PROBE_KINDS = ("source_inspect", "sample_rows", "profile_columns", "evaluate_expression")


# A request is held to the vocabulary before any acquisition (SESSION-PROBE-1, -2),
# a child's result to its shapes before any report (SESSION-PROBE-6, -7), whatever
# section 3 computes.  Both walk hostile documents without recursion.

# The defaults, within a deployment's bounds (a lower ceiling lowers the default, never refuses it).
DEFAULT_SCAN_ROWS = min(10000, MAX_SCAN_ROWS)  # rows read from the first, when the request says nothing
DEFAULT_SAMPLE_LIMIT = min(20, MAX_SAMPLE_LIMIT)  # rows in a sample window, by default
# MAX_SCAN_ROWS, MAX_SAMPLE_OFFSET, MAX_SAMPLE_LIMIT and MAX_PROFILE_COLUMNS are section 2's.
MAX_NAME_CHARS = 1024  # characters of a column name in a request
MAX_LITERAL_CHARS = 1024  # characters of a string literal
MAX_PREDICATE_DEPTH = 8  # levels of predicate nesting; a top-level comparison is level 1
MAX_PREDICATES = 64  # predicate objects in one expression, junctions and negations included
MAX_JUNCTION_ARGS = 16  # predicates under one and/or

REQUEST_KEYS = {  # the keys each kind allows; source_id is the one always required
    "source_inspect": frozenset(("source_id", "scan_rows")),
    "sample_rows": frozenset(("source_id", "offset", "limit", "columns")),
    "profile_columns": frozenset(("source_id", "scan_rows", "columns")),
    "evaluate_expression": frozenset(("source_id", "scan_rows", "expression")),
}
AGGREGATES = frozenset(("count", "sum", "avg", "min", "max"))
COMPARISON_OPS = frozenset(("eq", "ne", "lt", "le", "gt", "ge"))
NULL_TEST_OPS = frozenset(("is_null", "not_null"))
JUNCTION_OPS = frozenset(("and", "or"))
INFERRED_TYPES = frozenset(("null", "boolean", "integer", "number", "string", "mixed"))
_ENVELOPE_KEYS = ("probe_kind", "source_id", "content_sha256", "content_bytes", "data_format",
                  "sandbox_policy_digest")
_COMMON_KEYS = frozenset(_ENVELOPE_KEYS + ("schema_version", "truncated", "rows_scanned"))
_KIND_KEYS = {
    "source_inspect": frozenset(("schema_digest", "columns")),
    "sample_rows": frozenset(("columns", "rows")),
    "profile_columns": frozenset(("columns",)),
    "evaluate_expression": frozenset(("aggregate", "value", "rows_matched")),
}
_PROFILE_KEYS = frozenset(("name", "inferred_type", "non_null", "nulls", "distinct"))
_PROFILE_EXTREME_KEYS = _PROFILE_KEYS | {"minimum", "maximum"}


def _request_invalid():
    return ProbeFailure("PROBE_REQUEST_INVALID")


def _int_within(value, low, high):
    return is_int(value) and low <= value <= high


def _whole(value):
    """A count a JSON producer may write as 100.0 read as 100 (D43); anything else as it is."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    return value


def _is_name(value):
    return isinstance(value, str) and 1 <= len(value) <= MAX_NAME_CHARS


def _is_literal(value):
    """A string of 0..1024 characters, or a cell but null: a boolean, a JSON-range integer, a finite number."""
    if isinstance(value, str):
        return len(value) <= MAX_LITERAL_CHARS
    return value is not None and is_cell(value)


def _has_keys(document, keys):
    """Exactly `keys`: the length first, so a million-key object costs no set."""
    return isinstance(document, dict) and len(document) == len(keys) and all(key in document for key in keys)


def _check_where(where):
    """SESSION-PROBE-2: a predicate tree on the grammar, at most 8 deep and 64 predicates.

    Iterative and bounded: a 100,000-deep or shared-subtree request costs at most 64 visits.
    """
    stack, seen = [(where, 1)], 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if seen > MAX_PREDICATES or depth > MAX_PREDICATE_DEPTH or not isinstance(node, dict):
            raise _request_invalid()
        op = node.get("op")
        if not isinstance(op, str):  # also keeps an unhashable op out of the set lookups below
            raise _request_invalid()
        if op in COMPARISON_OPS:
            valid = (_has_keys(node, ("op", "column", "value")) and _is_name(node["column"])
                     and _is_literal(node["value"]))
        elif op in NULL_TEST_OPS:
            valid = _has_keys(node, ("op", "column")) and _is_name(node["column"])
        elif op in JUNCTION_OPS:
            args = node.get("args")
            valid = (_has_keys(node, ("op", "args")) and isinstance(args, list)
                     and 1 <= len(args) <= MAX_JUNCTION_ARGS)
            if valid:
                stack.extend((arg, depth + 1) for arg in args)
        elif op == "not":
            valid = _has_keys(node, ("op", "arg"))
            if valid:
                stack.append((node["arg"], depth + 1))
        else:
            valid = False  # no other operator exists: "like" and friends are text to nobody
        if not valid:
            raise _request_invalid()


def _check_expression(expression):
    if not isinstance(expression, dict) or not set(expression) <= {"aggregate", "column", "where"}:
        raise _request_invalid()
    aggregate = expression.get("aggregate")
    if not isinstance(aggregate, str) or aggregate not in AGGREGATES:
        raise _request_invalid()
    if "column" in expression:
        if not _is_name(expression["column"]):
            raise _request_invalid()
    elif aggregate != "count":
        raise _request_invalid()  # sum, avg, min and max need a column to aggregate
    if "where" in expression:
        _check_where(expression["where"])


def normalize_request(probe_kind, request):
    """SESSION-PROBE-2, -3: the normalized request (a new dict, defaults filled in), or PROBE_REQUEST_INVALID.

    Every form is checked before the request is encoded, so the encoder only
    sees a depth the grammar bounds.
    """
    if not isinstance(probe_kind, str) or probe_kind not in REQUEST_KEYS:
        raise _request_invalid()
    allowed = REQUEST_KEYS[probe_kind]
    if not isinstance(request, dict) or "source_id" not in request or not set(request) <= allowed:
        raise _request_invalid()
    source_id = request["source_id"]
    if not is_canonical_uuid(source_id):
        raise _request_invalid()
    normalized = {"source_id": source_id}
    if "scan_rows" in allowed:
        normalized["scan_rows"] = _whole(request.get("scan_rows", DEFAULT_SCAN_ROWS))
        if not _int_within(normalized["scan_rows"], 1, MAX_SCAN_ROWS):
            raise _request_invalid()
    if probe_kind == "sample_rows":
        normalized["offset"] = _whole(request.get("offset", 0))
        normalized["limit"] = _whole(request.get("limit", DEFAULT_SAMPLE_LIMIT))
        if not (_int_within(normalized["offset"], 0, MAX_SAMPLE_OFFSET)
                and _int_within(normalized["limit"], 1, MAX_SAMPLE_LIMIT)):
            raise _request_invalid()
    if "columns" in request:  # absent stays absent: the default depends on the content
        names = request["columns"]
        if not (isinstance(names, list) and 1 <= len(names) <= MAX_PROFILE_COLUMNS
                and all(_is_name(name) for name in names) and len(set(names)) == len(names)):
            raise _request_invalid()
        normalized["columns"] = list(names)
    if probe_kind == "evaluate_expression":
        if "expression" not in request:
            raise _request_invalid()
        _check_expression(request["expression"])
        normalized["expression"] = request["expression"]
    try:
        size = len(canonical_bytes(request))
        normalized = json.loads(canonical_bytes(normalized))  # a deep copy the caller's request cannot alter
    except (TypeError, ValueError):  # a lone surrogate, or a key that is not text
        raise _request_invalid() from None
    if size > MAX_PROBE_REQUEST_BYTES:
        raise _request_invalid()
    return normalized


def request_columns(probe_kind, request):
    """Every column the normalized request names, first-seen order, once each (SESSION-PROBE-5, D9)."""
    names = list(request.get("columns", ()))
    expression = request.get("expression") if probe_kind == "evaluate_expression" else None
    if expression is not None:
        if "column" in expression:
            names.append(expression["column"])
        stack = [expression["where"]] if "where" in expression else []
        while stack:  # document order: a junction's args left to right
            node = stack.pop()
            if "column" in node:
                names.append(node["column"])
            stack.extend(reversed(node.get("args", ())))
            if "arg" in node:
                stack.append(node["arg"])
    return list(dict.fromkeys(names))


def _same_names(value, expected):
    return (isinstance(value, list) and len(value) == len(expected)
            and all(same(name, want) for name, want in zip(value, expected)))


def _is_count(value):
    return _int_within(value, 0, MAX_SAFE_INTEGER)


def is_cell(value):
    """A result cell: null, a boolean, an integer in the JSON range, a finite number, a previewed string."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int):
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    if isinstance(value, float):
        return math.isfinite(value)
    # section 3's PREVIEW_MARKER, whatever its length, within the platform's room for it (SESSION-PROBE-6)
    return isinstance(value, str) and len(value) <= MAX_PREVIEW_CHARS + min(len(PREVIEW_MARKER),
                                                                            MAX_PREVIEW_MARKER_CHARS)


def result_problems(result, header, row_count, content_columns):
    """SESSION-PROBE-6, -7: what is wrong with a probe child's result; an empty list when nothing is.

    row_count and content_columns: what the node read off the content itself.
    Never raises: a broken child is PROBE_RESULT_INVALID, not a crashed session.
    """
    kind, request = header["probe_kind"], header["request"]
    if not isinstance(result, dict):
        return ["SESSION-PROBE-6: the result is not an object"]
    expected = _COMMON_KEYS | _KIND_KEYS[kind]
    if kind == "evaluate_expression" and "column" in request["expression"]:
        expected = expected | {"column"}  # SESSION-PROBE-7: present exactly when the request names one
    if set(result) != expected:
        return ["SESSION-PROBE-6: keys are not the kind's (extra %s, missing %s)"
                % (sorted(set(result) - expected), sorted(expected - set(result)))]
    problems = []
    if not same(result["schema_version"], PROBE_SCHEMA_VERSION):
        problems.append("SESSION-PROBE-6: schema_version is not PROBE_SCHEMA_VERSION")
    for key in _ENVELOPE_KEYS:  # SESSION-PROBE-6: bound to the content this probe read
        if not same(result[key], header[key]):
            problems.append("SESSION-PROBE-6: %s is not the input's" % key)
    truncated, scanned = result["truncated"], result["rows_scanned"]
    if not isinstance(truncated, bool):
        problems.append("SESSION-PROBE-6: truncated is not a boolean")
    elif truncated and kind != "sample_rows":
        problems.append("SESSION-PROBE-7: truncated is true for %s" % kind)
    bound = min(row_count, request["offset"] + request["limit"] if kind == "sample_rows" else request["scan_rows"])
    if not _is_count(scanned):
        problems.append("SESSION-PROBE-6: rows_scanned is not a count")
        scanned = None
    elif scanned > bound:
        problems.append("SESSION-PROBE-7: rows_scanned over its bound")
    wanted = request.get("columns") or content_columns[:MAX_PROFILE_COLUMNS]
    check = {"source_inspect": _inspect_problems, "sample_rows": _sample_problems,
             "profile_columns": _profile_problems, "evaluate_expression": _evaluate_problems}[kind]
    problems.extend(check(result, request, row_count, content_columns[:MAX_PROFILE_COLUMNS], wanted, scanned))
    try:
        if len(canonical_bytes(result)) > PROBE_RESULT_MAX_BYTES:
            problems.append("SESSION-PROBE-6: the result is over PROBE_RESULT_MAX_BYTES")
    except (TypeError, ValueError):
        problems.append("SESSION-PROBE-6: the result has no canonical encoding")
    return problems


def _inspect_problems(result, request, row_count, first_columns, wanted, scanned):
    problems = []
    digest = result["schema_digest"]
    if not is_digest(digest):
        problems.append("SESSION-PROBE-6: schema_digest is not 64 lowercase hex")
    entries = result["columns"]
    if not (isinstance(entries, list) and all(_has_keys(entry, ("name", "inferred_type")) for entry in entries)):
        return problems + ["SESSION-PROBE-6: columns are not name and inferred_type"]
    if not _same_names([entry["name"] for entry in entries], first_columns):
        problems.append("SESSION-PROBE-7: columns are not the content's first ones, in order")
    if not all(isinstance(entry["inferred_type"], str) and entry["inferred_type"] in INFERRED_TYPES
               for entry in entries):
        problems.append("SESSION-PROBE-6: an inferred_type off the list")
    return problems


def _sample_problems(result, request, row_count, first_columns, wanted, scanned):
    problems = []
    if not _same_names(result["columns"], wanted):
        problems.append("SESSION-PROBE-7: columns are not the requested ones, in order")
    rows = result["rows"]
    if not isinstance(rows, list):
        return problems + ["SESSION-PROBE-6: rows is not a list"]
    if len(rows) > request["limit"]:
        problems.append("SESSION-PROBE-7: more rows than limit")
    if not all(isinstance(row, list) and len(row) == len(wanted) and all(map(is_cell, row)) for row in rows):
        problems.append("SESSION-PROBE-7: a row that is not one cell per column")
    window = max(0, min(row_count, request["offset"] + request["limit"]) - request["offset"])
    if len(rows) > window:
        problems.append("SESSION-PROBE-7: more rows than the window holds")
    if isinstance(result["truncated"], bool) and result["truncated"] != (len(rows) < window):
        problems.append("SESSION-PROBE-7: truncated does not say whether rows were left out")
    return problems


def _profile_problems(result, request, row_count, first_columns, wanted, scanned):
    entries = result["columns"]
    if not (isinstance(entries, list) and all(isinstance(entry, dict) for entry in entries)):
        return ["SESSION-PROBE-6: columns is not a list of objects"]
    problems = []
    if not _same_names([entry.get("name") for entry in entries], wanted):
        problems.append("SESSION-PROBE-7: columns are not the requested ones, in order")
    for entry in entries:
        problem = _profile_entry_problem(entry, scanned)
        if problem is not None:
            return problems + [problem]  # one broken column says enough
    return problems


def _profile_entry_problem(entry, scanned):
    keys = set(entry)
    if keys != _PROFILE_KEYS and keys != _PROFILE_EXTREME_KEYS:
        return "SESSION-PROBE-6: a column's keys are off (minimum and maximum go together)"
    if not (isinstance(entry["inferred_type"], str) and entry["inferred_type"] in INFERRED_TYPES):
        return "SESSION-PROBE-6: an inferred_type off the list"
    non_null, nulls, distinct = entry["non_null"], entry["nulls"], entry["distinct"]
    if not (_is_count(non_null) and _is_count(nulls) and _is_count(distinct)):
        return "SESSION-PROBE-6: a column count is not a count"
    if scanned is not None and non_null + nulls != scanned:
        return "SESSION-PROBE-7: non_null + nulls is not rows_scanned"
    if distinct > non_null:
        return "SESSION-PROBE-7: distinct over non_null"
    if "minimum" in entry and not (is_cell(entry["minimum"]) and is_cell(entry["maximum"])):
        return "SESSION-PROBE-6: minimum or maximum is not a cell"
    return None


def _evaluate_problems(result, request, row_count, first_columns, wanted, scanned):
    problems = []
    expression = request["expression"]
    if not same(result["aggregate"], expression["aggregate"]):
        problems.append("SESSION-PROBE-6: aggregate is not the request's")
    if "column" in expression and not same(result["column"], expression["column"]):
        problems.append("SESSION-PROBE-6: column is not the request's")
    if not is_cell(result["value"]):
        problems.append("SESSION-PROBE-6: value is not a cell")
    matched = result["rows_matched"]
    if not _is_count(matched):
        problems.append("SESSION-PROBE-6: rows_matched is not a count")
    else:
        if scanned is not None and matched > scanned:
            problems.append("SESSION-PROBE-7: rows_matched over rows_scanned")
        if expression["aggregate"] == "count" and not same(result["value"], matched):
            problems.append("SESSION-PROBE-7: a count's value is not rows_matched")
    return problems


# 7 Lifecycle ==================================================================
# The capability process's session (7.1), the monitor the platform started
# (7.2), the legacy Service (7.3), and a run's outcome (7.4).


# 7.1 The session ==============================================================

# The session's states and what moves it between them (SESSION-START-1,
# SESSION-CLAIM-2, SESSION-STOP-2..4).  A move not in the table is a defect.
ENTRY, ADMITTED, STARTING, CLAIMING, PROBING, DRAINING = (
    "entry", "admitted", "starting", "claiming", "probing", "draining")
SESSION_TRANSITIONS = {
    (ENTRY, "admitted"): ADMITTED,  # the lease passed every rule; the monitor said start
    (ADMITTED, "start_sent"): STARTING,  # the warm pool is up; attempt:start is going out
    (STARTING, "started"): CLAIMING,  # attempt:start answered 200
    (CLAIMING, "claimed"): PROBING,  # a probe to answer and report
    (PROBING, "reported"): CLAIMING,  # the next claim goes out at once
    (CLAIMING, "stop"): DRAINING,  # SESSION-STOP-4: nothing in flight to report
    (PROBING, "stop"): DRAINING,  # SESSION-STOP-3: the probe in flight is still reported
    (DRAINING, "stop"): DRAINING,  # the drain was already under way
}


class Probe(object):
    """One claimed probe: what the claim said, and what became of it."""

    def __init__(self, doc):
        self.probe_id = doc["probe_id"]  # as the claim wrote it: the report's body and key repeat it
        self.path_id = probe_uuid(self.probe_id)  # canonical: the report's path (D43)
        self.kind = doc.get("probe_kind")
        self.request = doc.get("request")
        ordinal = doc.get("ordinal")
        self.ordinal = ordinal if is_int(ordinal) and 1 <= ordinal <= MAX_SAFE_INTEGER else 1  # for watchers
        self.source_id = self.request.get("source_id") if isinstance(self.request, dict) else None
        # SESSION-PROGRESS-1 (D36): narrated when a watcher can read its facts; every probe is reported
        self.narrated = self.kind in PROBE_KINDS and is_canonical_uuid(self.source_id)
        self.result = None  # the checked result document, once held
        self.result_bytes = 0  # its canonical length (the settled event's bytes)
        self.code = None  # the wire code of its failure
        self.retry_after_s = 0  # a throttle's Retry-After

    def fail(self, code, retry_after_s=0):
        # SESSION-PROBE-9: a wire code, never free text or a class name
        self.code = code if is_code(code) else PROBE_FAILED
        self.retry_after_s = retry_after_s


class AcquisitionExpired(ProbeFailure):
    """A create or read refused with CRAWLER_SESSION_EXPIRED: re-opened once (SESSION-ACQUIRE-5)."""

    def __init__(self):
        super().__init__(CRAWLER_SESSION_EXPIRED)


class Heartbeat(threading.Thread):
    """SESSION-HEARTBEAT-1..4: beats on their own schedule, one key each, nothing at or after the end."""

    def __init__(self, session, origin):
        super().__init__(name="session-heartbeat", daemon=True)
        self.session = session
        self.origin = origin  # monotonic time the attempt_started append ended: beat k is due k intervals later
        self.interval = session.lease.heartbeat_s
        self.body = canonical_bytes(binding_of(session.lease))  # the same bytes as attempt:start's
        self.ended = threading.Event()
        self.exchange = None  # the beat in flight, so end() can cut it
        self.sent = 0

    def run(self):
        slot = 1
        while True:
            due = self.origin + slot * self.interval
            if self.ended.wait(max(0.0, due - time.monotonic())):
                return  # SESSION-HEARTBEAT-4: the attempt_finished append has begun, or the session ended
            if self.session.deadline.expired():
                return  # SESSION-HEARTBEAT-4: no beat at or after the deadline
            self.sent += 1  # D1: a key of its own per beat
            key = "session:%s:heartbeat:%d" % (self.session.lease.attempt_id, self.sent)
            try:
                # SESSION-CALLBACK-6: each beat ends within one interval, so beats never pile up
                self.session.callbacks.call("heartbeat", self.body, key,
                                            limit_s=min(self.interval, CALLBACK_TIMEOUT_S), holder=self)
            except Exception:
                pass  # SESSION-HEARTBEAT-3: neither retried nor fatal; the next beat is on schedule
            # SESSION-HEARTBEAT-2: the next slot still ahead; a stalled machine skips, never bunches
            slot = max(slot + 1, int((time.monotonic() - self.origin) / self.interval) + 1)

    def end(self, cap=None):
        """Stop beating before the last append: cut a beat in flight and wait for the thread."""
        self.ended.set()
        exchange = self.exchange
        if exchange is not None:
            exchange.cut()  # a beat cut here is never kept for the next call
        if self.is_alive():
            self.join(min(CALLBACK_TIMEOUT_S, cap.remaining()) if cap is not None else CALLBACK_TIMEOUT_S)


class Session(object):
    """One session in the capability process: entry, admission, start, claims, probes, the end.

    Every way out goes through run(): the first outcome decides the summary
    (SESSION-EXIT-1); finish() sends attempt_finished (SESSION-PROGRESS-7).
    """

    def __init__(self, config, channel, scratch, dispatch=None, start=None, nonce=None):
        self.config = config
        self.channel = channel
        self.scratch = scratch
        self.dispatch = dispatch
        self.start = start
        self.nonce = nonce
        self.state = ENTRY
        self.outcome = None  # (terminal state, failure code): the first one reached
        self.lease = None
        self.policy_digest = digest_of(sandbox_policy(config))  # the sandbox's, known before any lease
        self.capability = None
        self.deadline = None
        self.callbacks = None
        self.progress = None
        self.heartbeat = None
        self.sandbox_ok = sandbox_available()  # D30: without it no probe child runs
        self.interval = None  # the interval in force (SESSION-CLAIM-3)
        self.answered = 0
        self.failed = 0
        self.warm_ready = 0
        self.attempt_begun = False  # attempt:start was answered or refused: attempt_finished may follow
        self.pool = WarmPool(config, config.warm_pool if self.sandbox_ok else 0, ProbeCode(scratch))  # serve() fills
        self.drain_cap = None  # after a stop: what is left of STOP_GRACE_S (SESSION-STOP-5)
        self.downloads = 0
        self.epochs = collections.Counter()  # source id -> acquisition epoch (SESSION-ACQUIRE-5)

    # -- the frame --

    def move(self, event):
        following = SESSION_TRANSITIONS.get((self.state, event))
        if following is None:
            raise SessionError(SESSION_WORKER_FAILED, "no move %s from %s" % (event, self.state))
        self.state = following

    def decide(self, terminal=None, failure=None):
        """The first outcome reached decides (SESSION-EXIT-1, SESSION-STOP-4, -7)."""
        if self.outcome is None:
            self.outcome = (terminal, failure)

    def run(self):
        """The session, start to end: its summary.  Never raises."""
        try:
            try:
                self.enter()
                self.serve()
            except SessionOver as over:
                self.decide(over.terminal, over.failure)
            except DeadlinePassed:
                self.decide(terminal=CAPABILITY_EXPIRED)  # SESSION-DEADLINE-4: silently
            except StopRequested:
                self.decide(terminal=SERVICE_STOPPED)  # SESSION-STOP-7: before the start was answered
            except SessionError as exc:
                self.decide(failure=exc.code)
            except Exception:
                self.decide(failure=SESSION_WORKER_FAILED)  # SESSION-EXIT-3 (D20): never a class name
            self.finish()
        except BaseException:
            self.decide(failure=SESSION_WORKER_FAILED)
        finally:
            self.clean_up()
        terminal, failure = self.outcome
        lease = self.lease
        return make_summary(lease.session_id if lease else None, lease.attempt_id if lease else None,
                            self.answered, self.failed, terminal, failure, self.warm_ready)

    def pause(self, seconds, cap=None, stoppable=True):
        """Wait `seconds`, or less: a stop ends it (StopRequested), the deadline caps it (DeadlinePassed).

        SESSION-DEADLINE-3, SESSION-STOP-2 (D13); `cap` (the acquisition
        ceiling, the drain) ends it early without an error.
        """
        end = time.monotonic() + seconds
        while True:
            if stoppable and STOP.requested:
                raise StopRequested("stop requested during a wait")
            left = self.deadline.remaining()
            if left <= 0:
                raise DeadlinePassed()
            wait = min(end - time.monotonic(), left, cap.remaining() if cap is not None else left)
            if wait <= 0:
                return
            wake = STOP.wait_fd() if stoppable else None
            # SESSION-NODE-4: asleep in the kernel; a long wait wakes once a second to see the wall clock
            select.select([wake] if wake is not None else [], [], [], min(wait, WALL_CLOCK_RECHECK_S))

    # -- entry and admission --

    def enter(self):
        """Identity, the exchange or the legacy lease, admission, the monitor's word (SESSION-DISPATCH-*)."""
        try:
            if self.dispatch is not None:
                doc, raw = exchange_dispatch(self.config, self.dispatch)
            else:
                doc, raw = lease_session(self.config, self.start, self.nonce)
        finally:
            PROCESS.wipe(self.nonce)  # SESSION-SECRET-5: the nonce is spent, whatever the answer
        try:
            lease, capability = admit_lease(doc)
        finally:
            PROCESS.wipe(raw)  # SESSION-SECRET-5: the raw answer held the capability
            doc.clear()
        if self.start is not None and (lease.session_id != self.start.session_id
                                       or lease.workspace_id != self.start.workspace_id):
            PROCESS.wipe(capability)
            # SESSION-SERVICE-5: never serve a session nobody started here
            raise SessionError(SESSION_LEASE_MISMATCH, "a lease for another session")
        self.lease, self.capability = lease, capability
        deadline = SessionDeadline(lease.expires_at)  # SESSION-DEADLINE-1: r and m, recorded now
        if deadline.initial <= 0:  # SESSION-LEASE-4: admitted as already expired: no capability call
            raise SessionOver(terminal=CAPABILITY_EXPIRED)
        if deadline.initial > MAX_SESSION_CAPABILITY_REMAINING_SECONDS:  # SESSION-LEASE-4: refused, never clamped
            raise SessionError(SESSION_LEASE_EXPIRY_UNREASONABLE, "a window over 30 minutes")
        self.deadline = deadline
        # SESSION-DEADLINE-5: the kernel ends this process at the expiry, whatever it is doing
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.setitimer(signal.ITIMER_REAL, max(0.001, deadline.remaining()))
        # SESSION-ISOLATION-2: the monitor learns the session id and the expiry, nothing else
        self.channel.send({"kind": "lease", "session_id": lease.session_id,
                           "capability_expires_at": lease.expires_text})
        self.channel.await_start(deadline)
        self.move("admitted")

    # -- start --

    def serve(self):
        """The warm pool, attempt:start, attempt_started, the heartbeat and the claim loop."""
        lease = self.lease
        self.callbacks = Callbacks(lease, self.capability, self.deadline)
        self.progress = Progress(self.callbacks, lease, self.deadline)
        self.interval = lease.claim_poll_s  # SESSION-CLAIM-3: the lease's, until a claim answer says otherwise
        self.start_pool()  # SESSION-ISOLATION-8 (D11): before attempt:start
        self.warm_ready = self.pool.ready_count()  # SESSION-ISOLATION-8: ready when attempt:start is sent
        self.move("start_sent")
        try:
            # SESSION-START-1: the first capability call, sent once
            self.callbacks.call("start", canonical_bytes(binding_of(lease)), "session:%s:start" % lease.attempt_id)
        except Refusal as refused:
            STOP.check("attempt:start")  # SESSION-STOP-7: a stop's cut is a stop, and nothing follows
            self.attempt_begun = True  # SESSION-START-1: only the attempt_finished append follows
            raise SessionOver(failure=refused.code) from None
        self.attempt_begun = True
        self.move("started")
        # SESSION-START-2: the stream shows the worker at once, before the first claim
        self.progress.make("attempt_started", {"role": ROLE, "stage_total": 0})
        self.progress.flush()
        if self.callbacks.allowed("heartbeat"):  # SESSION-CALLBACK-2: without the template, no beat
            # SESSION-HEARTBEAT-1: the first beat one interval after the append ended, never at once
            self.heartbeat = Heartbeat(self, time.monotonic())
            self.heartbeat.start()
        self.claim_loop()

    def start_pool(self):
        """Start the warm pool and give it at most WARM_POOL_START_S to be ready (SESSION-ISOLATION-8)."""
        self.pool.fill()
        until = Deadline(WARM_POOL_START_S)
        while self.pool.ready_count() < len(self.pool.children) and not until.expired():
            self.pause(WARM_POOL_POLL_S, cap=until)  # a stop or the deadline ends it (SESSION-STOP-7)

    # -- the claim loop --

    def claim_loop(self):
        """SESSION-CLAIM-1..7: one claim or one probe at a time, until the session ends."""
        lease = self.lease
        body = binding_of(lease)
        body["session_id"] = lease.session_id
        body = canonical_bytes(body)
        poll, failures = 1, 0
        while True:
            if STOP.requested:
                self.drain()  # SESSION-STOP-2: no claim after a stop
            try:
                answer = self.callbacks.call("claim", body, "session:%s:claim:%d" % (lease.attempt_id, poll),
                                             need_object=True)
                doc = answer.doc
                # SESSION-CLAIM-4, -5 (D43): read as the upstream reads them: a state is a string
                # ("closed", "failed" end the session; anything else is live); claimed is truthy
                state, claimed = doc.get("session_state"), bool(doc.get("claimed"))
            except StopRequested:
                self.drain()  # SESSION-STOP-2: a claim in flight is abandoned and its answer unused
            except Refusal as refused:
                if STOP.requested:
                    self.drain()
                if refused.code in FENCE_LOST_CODES and refused.status is not None:
                    raise SessionOver(failure=refused.code)  # SESSION-CLAIM-6: the attempt is someone else's
                if refused.status is not None and 400 <= refused.status < 500 and refused.status != 429:
                    poll += 1  # SESSION-CLAIM-1 (D26): answered; anything else is sent again under its key
                failures += 1
                if failures >= MAX_CONSECUTIVE_CLAIM_FAILURES:
                    raise SessionOver(failure=refused.code)  # SESSION-CLAIM-7: with its own code
                self.wait(backoff_delay(failures, self.interval, refused.retry_after_s))  # SESSION-BACKOFF-1, -2
                continue
            poll, failures = poll + 1, 0  # SESSION-CLAIM-1, -7: an accepted answer
            self.take_interval(doc.get("claim_poll_interval_seconds"))
            if state in SESSION_STATES_THAT_END:  # SESSION-CLAIM-4: read before claimed; quietly
                raise SessionOver(terminal=state)
            if claimed:
                probe = doc.get("probe")
                if not isinstance(probe, dict) or probe_uuid(probe.get("probe_id")) is None:
                    # SESSION-CLAIM-5 (D5): a probe with no id can never be reported
                    raise SessionOver(failure=PROBE_CLAIM_INVALID)
                self.handle_probe(Probe(probe))
                continue  # SESSION-CLAIM-2: after a report, the next claim at once
            self.wait(self.interval)  # SESSION-CLAIM-2: no probe: the interval in force

    def wait(self, seconds):
        try:
            self.pause(seconds)
        except StopRequested:
            self.drain()  # SESSION-STOP-2: a wait ends at once

    def take_interval(self, value):
        """SESSION-CLAIM-3 (D4): a number above 0 replaces the interval; absent, null, 0 or junk keeps it.

        Text float() reads ("2.5") is read the same (D43); a boolean is no number.
        """
        if isinstance(value, str) and len(value) <= MAX_CONFIG_NUMBER_CHARS:
            try:
                value = float(value)
            except ValueError:
                return
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
            self.interval = max(MIN_INTERVAL_S, value)  # D24: floored, never capped (waits end by the deadline)

    # -- stops --

    def begin_drain(self):
        """SESSION-STOP-3..5: from here requests are not cut by the stop, and all of it ends within the grace."""
        self.move("stop")
        if self.drain_cap is None:
            STOP.abandonable = False
            self.decide(terminal=SERVICE_STOPPED)  # SESSION-STOP-4, unless something decided first
            left = STOP_GRACE_S if PROCESS.stop_at is None else PROCESS.stop_at + STOP_GRACE_S - time.monotonic()
            self.drain_cap = Deadline(max(0.0, left))

    def drain(self):
        """A stop with no probe in flight: the attempt finishes as stopped (SESSION-STOP-4)."""
        self.begin_drain()
        raise SessionOver(terminal=SERVICE_STOPPED)

    # -- one probe --

    def handle_probe(self, probe):
        """SESSION-PROBE-*: check, read, answer, report and narrate one probe; the session goes on."""
        self.move("claimed")
        try:
            self.work(probe)
        except DeadlinePassed:
            raise  # SESSION-DEADLINE-4: no report, no settled event
        except ProbeFailure as failure:
            probe.fail(failure.code, failure.retry_after_s)
        except StopRequested:
            pass  # SESSION-STOP-3: reported below
        except SessionError as exc:
            probe.fail(exc.code)
        except Exception:
            probe.fail(PROBE_FAILED)  # SESSION-PROBE-9: a probe's failure is the probe's
        if STOP.requested:
            self.begin_drain()
            if probe.result is None:  # SESSION-STOP-3: a definite answer at once, without waiting
                probe.fail(SESSION_WORKER_STOPPING)
        self.report(probe)
        if self.state == DRAINING:
            raise SessionOver(terminal=SERVICE_STOPPED)
        if not STOP.requested:
            # SESSION-ISOLATION-8 (D52): the child taken is replaced now, so that an interpreter's
            # start (a core for about 0.2 s) never competes with the probe a person waits for
            self.pool.fill()
        self.move("reported")

    def work(self, probe):
        """The checks, the read and the answer of one probe; sets probe.result or raises ProbeFailure."""
        lease = self.lease
        if probe.narrated:  # SESSION-PROGRESS-2: in an append of its own, before any acquisition request
            self.progress.make("source_probe_started", {"source_id": probe.source_id, "probe_kind": probe.kind,
                                                        "ordinal": probe.ordinal})
            self.progress.flush()
        STOP.check("a probe")
        # SESSION-PROBE-1: the kind and the request, the scope, the channel, in this order, before any read
        try:
            normalized = normalize_request(probe.kind, probe.request)  # SESSION-PROBE-2, -3
        except ProbeFailure:
            raise
        except Exception:
            raise ProbeFailure(PROBE_REQUEST_INVALID) from None
        if probe.source_id not in lease.source_ids:  # D3: an empty allowlist admits nothing
            raise ProbeFailure(PROBE_SOURCE_OUT_OF_SCOPE)
        # SESSION-PROBE-1: no channel, no read
        if not (self.callbacks.allowed("acquire") and self.callbacks.allowed("read")):
            raise ProbeFailure(PROBE_SOURCE_CHANNEL_UNAVAILABLE)
        # SESSION-ACQUIRE-4 (D12, D35): create, reads and download share one ceiling, capped by the deadline
        ceiling = Deadline(min(self.config.acquisition_timeout_s, self.deadline.remaining()))
        acquisition, data, bundle_sha256 = self.acquire(probe.source_id, ceiling)
        # SESSION-ACQUIRE-8: no byte unchecked reaches a child
        content, content_sha256, data_format = check_bundle(data, bundle_sha256, probe.source_id, acquisition)
        del data
        if not self.sandbox_ok:  # SESSION-ISOLATION-5 (D30): no probe child runs unconfined
            raise ProbeFailure(SANDBOX_UNAVAILABLE)
        STOP.check("the probe child")
        self.answer(probe, normalized, content, content_sha256, data_format)

    def acquire(self, source_id, ceiling):
        """(acquisition document, bundle, its SHA-256) for one probe; re-opened once after an expiry (ACQUIRE-5)."""
        for again in (False, True):
            try:
                return self.acquire_once(source_id, self.epochs[source_id], ceiling)
            except AcquisitionExpired:
                self.epochs[source_id] += 1  # a new key; the epoch stays raised for later probes
                if again:
                    raise ProbeFailure(CRAWLER_SESSION_EXPIRED) from None  # no third create

    def acquisition_cut(self, refused, ceiling):
        """A call that got no answer: the deadline's or the ceiling's doing first (SESSION-ACQUIRE-4)."""
        if refused.status is None:
            if self.deadline.expired():
                raise DeadlinePassed()
            if ceiling.expired():
                raise ProbeFailure(PROBE_SOURCE_ACQUISITION_TIMEOUT)

    def acquire_once(self, source_id, epoch, ceiling):
        lease = self.lease
        body = binding_of(lease)
        body.update(session_id=lease.session_id, source_id=source_id)  # SESSION-ACQUIRE-1: nothing else
        key = "session:%s:acquire:%s:%d" % (lease.attempt_id, source_id, epoch)  # shared by probes of the source
        try:
            doc = self.callbacks.call("acquire", canonical_bytes(body), key, cap=ceiling, need_object=True).doc
        except Refusal as refused:
            self.acquisition_cut(refused, ceiling)
            if refused.code == CRAWLER_SESSION_EXPIRED:
                raise AcquisitionExpired() from None
            if refused.code in THROTTLE_WIRE_CODES and refused.status == 429:
                # SESSION-ACQUIRE-2: a throttle: its advice kept, and the node neither waits nor creates again
                raise ProbeFailure(refused.code, refused.retry_after_s or 0) from None
            raise ProbeFailure(refused.code) from None  # SESSION-BACKOFF-3: a create is never retried
        session_id = check_acquisition(doc, lease, source_id, None)
        failures = 0
        while doc.get("status") != READY:  # SESSION-ACQUIRE-4: result_ready ends the wait
            if doc.get("status") == FAILED:  # server text never reaches the report
                code = doc.get("failure_code")
                if code == CRAWLER_SESSION_EXPIRED:
                    # SESSION-ACQUIRE-5 (D46): an acquisition settled as expired is re-opened, as the upstream
                    # does, like one refused as expired
                    raise AcquisitionExpired()
                raise ProbeFailure(code if is_code(code) else PROBE_SOURCE_ACQUISITION_FAILED)
            self.acquisition_wait(ACQUISITION_POLL_S, ceiling)  # not yet
            while True:
                try:
                    doc = self.callbacks.call("read", ids={"crawler_session_id": session_id}, cap=ceiling,
                                              need_object=True).doc
                    break
                except Refusal as refused:
                    self.acquisition_cut(refused, ceiling)
                    if refused.code == CRAWLER_SESSION_EXPIRED:
                        raise AcquisitionExpired() from None
                    if not refused.sent:  # SESSION-CALLBACK-2: the lease allows no read of this acquisition
                        raise ProbeFailure(PROBE_SOURCE_CHANNEL_UNAVAILABLE) from None
                    if not refused.transient:
                        raise ProbeFailure(refused.code) from None
                    failures += 1  # SESSION-ACQUIRE-4: retried on the backoff schedule, base ACQUISITION_POLL_S
                    self.acquisition_wait(backoff_delay(failures, ACQUISITION_POLL_S, refused.retry_after_s),
                                          ceiling)
            failures = 0
            check_acquisition(doc, lease, source_id, session_id)  # SESSION-ACQUIRE-3: the same id on every read
        url, size, sha256 = check_descriptor(doc, session_id, source_id, self.config, lease)
        self.downloads += 1
        path = os.path.join(self.scratch, "bundle-%d" % self.downloads)  # SESSION-ISOLATION-9: 0600, in scratch
        try:
            data = download_bundle(url, size, sha256, path, ceiling)  # SESSION-BACKOFF-3: one GET, never retried
        except ProbeFailure:
            raise
        except Exception:
            STOP.check("the download")
            if self.deadline.expired():
                raise DeadlinePassed() from None
            if ceiling.expired():
                raise ProbeFailure(PROBE_SOURCE_ACQUISITION_TIMEOUT) from None
            raise ProbeFailure(PROBE_SOURCE_DOWNLOAD_FAILED) from None
        finally:
            remove(path)
        return doc, data, sha256  # the digest of exactly these bytes, taken as they arrived

    def acquisition_wait(self, seconds, ceiling):
        self.pause(seconds, cap=ceiling)  # SESSION-STOP-2: a stop ends it at once
        if ceiling.expired():
            # SESSION-ACQUIRE-4: the ceiling fails the probe, not the session
            raise ProbeFailure(PROBE_SOURCE_ACQUISITION_TIMEOUT)

    def answer(self, probe, normalized, content, content_sha256, data_format):
        """The probe's answer from its own probe child, held to the vocabulary (SESSION-ISOLATION-6, PROBE-6)."""
        # SESSION-PROBE-7: what the result is held to, read off the content as the child reads it (D45)
        columns, row_count = content_shape(content, content_sha256, data_format)
        header = {"schema_version": PROBE_INPUT_SCHEMA, "probe_kind": probe.kind, "request": normalized,
                  "source_id": probe.source_id, "data_format": data_format,
                  "content_sha256": content_sha256, "content_bytes": len(content),
                  "sandbox_policy_digest": self.policy_digest, "result_max_bytes": PROBE_RESULT_MAX_BYTES}
        data = canonical_bytes(header) + b"\n" + content  # no token, capability or URL: only the probe's bytes
        child = self.pool.take()  # a child of its own, never given a second probe
        try:
            ceiling = Deadline(min(self.config.probe_timeout_s, self.deadline.remaining()))
            stdout, stderr, overflowed = drive_probe_child(child, data, ceiling, self.deadline)
        finally:
            child.end()  # SESSION-ISOLATION-6: killed with its group and reaped, whatever happened
        raw = judge_probe_child(child.proc.returncode, stdout, stderr, overflowed)
        try:
            result = parse_canonical(raw, floats=True)  # SESSION-PROBE-6: canonical, fractions allowed (D37)
            problems = result_problems(result, header, row_count, columns)  # the envelope among them
        except Exception:
            raise ProbeFailure(PROBE_RESULT_INVALID) from None
        if problems:  # SESSION-PROBE-6: a result that breaks a rule is never reported
            raise ProbeFailure(PROBE_RESULT_INVALID)
        probe.result, probe.result_bytes = result, len(raw)

    # -- the report --

    def report(self, probe):
        """SESSION-REPORT-1..5: delivered (or found settled), counted, narrated; else the session ends."""
        lease = self.lease
        doc = binding_of(lease)
        doc.update(session_id=lease.session_id, probe_id=probe.probe_id)
        if probe.result is not None:
            doc.update(outcome="succeeded", result=probe.result)  # SESSION-REPORT-2: the exact checked result
        else:
            doc.update(outcome="failed", failure_code=probe.code)  # SESSION-REPORT-2: the wire code
        body = canonical_bytes(doc)  # SESSION-REPORT-4: the same bytes on every send
        key = "session:%s:result:%s" % (lease.attempt_id, probe.probe_id)
        sends = 0
        while True:
            sends += 1
            try:
                self.callbacks.call("report", body, key, ids={"probe_id": probe.path_id}, cap=self.drain_cap)
                break
            except StopRequested:  # SESSION-STOP-3: the stop cut the send: the drain sends it again at once
                self.begin_drain()
                if sends < REPORT_ATTEMPTS:
                    continue
                raise SessionOver(failure=CONTROL_PLANE_UNREACHABLE) from None
            except Refusal as refused:
                if refused.code == RESEARCH_PROBE_ALREADY_SETTLED and refused.status is not None:
                    break  # SESSION-REPORT-3: settled is delivered
                if not refused.transient or sends >= REPORT_ATTEMPTS:
                    raise SessionOver(failure=refused.code) from None  # SESSION-REPORT-5: not counted, not narrated
                self.report_wait(backoff_delay(sends, self.interval, refused.retry_after_s), refused)
        if probe.result is not None:  # SESSION-REPORT-3: counted by its own outcome, ALREADY_SETTLED included
            self.answered += 1
        else:
            self.failed += 1
        if probe.narrated:  # SESSION-PROGRESS-2, -3: settled after the report, for every outcome
            if probe.result is not None:
                facts = {"outcome": "succeeded", "code": PROBE_OK_CODE, "display_code": PROBE_OK_CODE,
                         "retry_after_seconds": 0, "bytes": probe.result_bytes}
            else:
                display = THROTTLE_WIRE_CODES.get(probe.code, probe.code)
                facts = {"outcome": outcome_class(display), "code": probe.code, "display_code": display,
                         "retry_after_seconds": probe.retry_after_s if display != probe.code else 0, "bytes": 0}
            facts.update(source_id=probe.source_id, probe_kind=probe.kind, ordinal=probe.ordinal)
            self.progress.make("source_probe_settled", facts)
        self.progress.flush(cap=self.drain_cap)  # SESSION-PROGRESS-4: after each report, narrated or not

    def report_wait(self, seconds, refused):
        """A transient report failure waits its backoff; during a drain, within what is left of the grace."""
        if self.drain_cap is not None:
            self.pause(seconds, cap=self.drain_cap, stoppable=False)
            if self.drain_cap.expired():
                raise SessionOver(failure=refused.code)  # SESSION-STOP-5: the drain ends within the grace
            return
        try:
            self.pause(seconds)
        except StopRequested:
            self.begin_drain()  # SESSION-STOP-3: resend at once, within the grace

    # -- the end --

    def finish(self):
        """SESSION-PROGRESS-7: the heartbeat stops, then attempt_finished, last, where it belongs."""
        terminal, failure = self.outcome
        expired = self.deadline is not None and self.deadline.expired()
        if self.heartbeat is not None:
            self.heartbeat.end(self.drain_cap)  # SESSION-HEARTBEAT-4: no beat once the last append begins
        if expired or not self.attempt_begun or self.progress is None:
            return  # SESSION-DEADLINE-4: silence at the deadline; no attempt, no attempt_finished
        outcome = terminal if failure is None else "stopped"
        try:
            self.progress.make("attempt_finished", {"outcome": outcome})
            self.progress.flush(cap=self.drain_cap)
        except Exception:
            pass  # SESSION-PROGRESS-5: events never fail the session

    def clean_up(self):
        """No probe child, no bundle, no secret left, whatever happened (SESSION-ISOLATION-6, SECRET-5)."""
        if self.heartbeat is not None:
            self.heartbeat.ended.set()
        self.pool.close()
        for index in range(1, self.downloads + 1):
            remove(os.path.join(self.scratch, "bundle-%d" % index))
        PROCESS.wipe_all()


class Channel(object):
    """The monitor's and the capability process's pipes: one canonical JSON object per line, bounded."""

    def __init__(self, read_fd, write_fd):
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.buffer = bytearray()

    def send(self, doc):
        write_all(self.write_fd, canonical_bytes(doc) + b"\n")

    def feed(self):
        """Read what is there: the complete messages so far (parsed); EOFError at the end; SessionError on junk."""
        try:
            data = os.read(self.read_fd, IO_CHUNK_BYTES)
        except BlockingIOError:
            return []
        except OSError:
            data = b""
        if not data:
            raise EOFError("the other process closed its end")
        self.buffer += data
        messages = []
        while b"\n" in self.buffer:
            line, _newline, rest = bytes(self.buffer).partition(b"\n")
            self.buffer = bytearray(rest)
            try:
                doc = parse_canonical(line)
            except JsonError:
                raise SessionError(SESSION_CHILD_PROTOCOL_INVALID, "not a canonical message") from None
            if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str):
                raise SessionError(SESSION_CHILD_PROTOCOL_INVALID, "not a message")
            messages.append(doc)
        if len(self.buffer) > MAX_MONITOR_MESSAGE_BYTES:  # a message has a bound: no endless line is buffered
            raise SessionError(SESSION_CHILD_PROTOCOL_INVALID, "a message over its bound")
        return messages

    def await_start(self, deadline):
        """The capability process waits for the monitor's {"kind":"start"}; a stop or the deadline ends it."""
        while True:
            STOP.check("the monitor's word")  # SESSION-STOP-7: nothing is sent after a stop before start
            left = deadline.remaining()
            if left <= 0:
                raise DeadlinePassed()
            wake = STOP.wait_fd()
            ready, _w, _x = select.select([self.read_fd] + ([wake] if wake is not None else []), [], [],
                                          min(left, WALL_CLOCK_RECHECK_S))
            if self.read_fd not in ready:
                continue
            try:
                messages = self.feed()
            except EOFError:
                raise SessionError(SESSION_CHILD_PROTOCOL_INVALID, "the monitor is gone") from None
            for doc in messages:
                if doc != {"kind": "start"}:
                    raise SessionError(SESSION_CHILD_PROTOCOL_INVALID, "not the start message")
                return


# 7.2 The monitor ==============================================================
# Holds no secret: it forks the capability process before any exists and
# learns only the session id, the expiry and the summary (SESSION-ISOLATION-1..4,
# -9, SESSION-DEADLINE-5, SESSION-STOP-5, -6, SESSION-EXIT-1).

MONITOR_STARTING, MONITOR_RUNNING, MONITOR_STOPPING = "starting", "running", "stopping"
MONITOR_TRANSITIONS = {
    (MONITOR_STARTING, "lease"): MONITOR_RUNNING,  # the lease message: start the session
    (MONITOR_STARTING, "stop"): MONITOR_STOPPING,  # SESSION-STOP-7: forwarded; no start follows
    (MONITOR_RUNNING, "stop"): MONITOR_STOPPING,  # SESSION-STOP-4, -5: forwarded; the drain runs
    (MONITOR_STOPPING, "lease"): MONITOR_STOPPING,  # a lease message after the stop: no start follows
}
READY_LINE = b'{"kind":"ready"}\n'  # a Service session process's word (SESSION-SERVICE-4)


class Monitor(object):
    """The monitor's loop over one capability process: its summary, or ("refused", code) of a bootstrap."""

    def __init__(self, pid, channel, bootstrap):
        self.pid = pid
        self.channel = channel
        self.bootstrap = bootstrap
        self.state = MONITOR_STARTING
        self.accepted = False  # bootstrap: the capability process accepted the start document
        self.session_id = None  # from the lease message (SESSION-ISOLATION-2: this and the expiry only)
        self.deadline = None  # the monitor's own, on its own clocks (SESSION-DEADLINE-5)
        self.kill_at = None  # monotonic time the drain's grace runs out (SESSION-STOP-5)

    def move(self, event):
        following = MONITOR_TRANSITIONS.get((self.state, event))
        if following is None:
            raise SessionError(SESSION_CHILD_PROTOCOL_INVALID, "no move %s from %s" % (event, self.state))
        self.state = following

    def run(self):
        wake = PROCESS.wake_r
        while True:
            timeout = None
            if self.deadline is not None:
                timeout = min(self.deadline.remaining(), WALL_CLOCK_RECHECK_S)
            if self.kill_at is not None:
                left = max(0.0, self.kill_at - time.monotonic())
                timeout = left if timeout is None else min(timeout, left)
            # SESSION-NODE-4: asleep in the kernel until something happens
            ready, _w, _x = select.select([self.channel.read_fd, wake], [], [], timeout)
            if wake in ready:
                PROCESS.drain_wake()
            if PROCESS.signals >= 2:  # SESSION-STOP-6: a second stop ends it now
                return self.kill_with(terminal=SERVICE_STOPPED)
            if PROCESS.signals and self.state != MONITOR_STOPPING:
                self.move("stop")
                self.forward_stop()
            if self.deadline is not None and self.deadline.expired():
                return self.kill_with(terminal=CAPABILITY_EXPIRED)  # SESSION-DEADLINE-5: whatever it is doing
            if self.kill_at is not None and time.monotonic() >= self.kill_at:
                return self.kill_with(terminal=SERVICE_STOPPED)  # SESSION-STOP-5: STOP_GRACE_S + 0.5 s
            if self.channel.read_fd not in ready:
                continue
            try:
                messages = self.channel.feed()
            except EOFError:
                return self.ended_without_summary()
            except SessionError as exc:
                return self.kill_with(failure=exc.code)
            for doc in messages:
                outcome = self.on_message(doc)
                if outcome is not None:
                    return outcome

    def forward_stop(self):
        """SESSION-STOP-1: the capability process learns of a stop from the monitor."""
        try:
            os.kill(self.pid, signal.SIGTERM)
        except OSError:
            pass
        self.kill_at = time.monotonic() + STOP_KILL_S

    def on_message(self, doc):
        """One message of the capability process: None to go on, or the outcome."""
        kind, keys = doc["kind"], set(doc)
        if kind == "accepted" and self.bootstrap and not self.accepted and keys == {"kind", "session_id"} \
                and is_canonical_uuid(doc["session_id"]):
            self.accepted = True
            write_all(1, READY_LINE)  # SESSION-SERVICE-4: the Service answers 202 on this word
            return None
        if kind == "refused" and self.bootstrap and not self.accepted and keys == {"kind", "code"} \
                and is_code(doc["code"]):
            self.reap()
            return ("refused", doc["code"])  # SESSION-SERVICE-4: `<CODE>: bootstrap refused`, exit 1
        if kind == "lease" and self.session_id is None and keys == {"kind", "session_id", "capability_expires_at"} \
                and (self.accepted or not self.bootstrap) and is_canonical_uuid(doc["session_id"]):
            expires_at = parse_timestamp(doc["capability_expires_at"])
            if expires_at is None:
                return self.kill_with(failure=SESSION_CHILD_PROTOCOL_INVALID)
            self.session_id = doc["session_id"]
            deadline = SessionDeadline(expires_at)  # SESSION-DEADLINE-5: its own clocks
            if deadline.initial <= 0:  # SESSION-LEASE-4, judged again here
                return self.kill_with(terminal=CAPABILITY_EXPIRED)
            if deadline.initial > MAX_SESSION_CAPABILITY_REMAINING_SECONDS:
                return self.kill_with(failure=SESSION_LEASE_EXPIRY_UNREASONABLE)
            self.deadline = deadline
            stopping = self.state == MONITOR_STOPPING
            self.move("lease")
            if not stopping:
                self.channel.send({"kind": "start"})
            return None
        if kind == "summary" and keys == {"kind", "summary"}:
            self.reap()
            # SESSION-EXIT-1 (D18): its shape, and the session this monitor knows (if it knows one yet)
            if is_summary(doc["summary"], self.session_id):
                return doc["summary"]
        return self.kill_with(failure=SESSION_CHILD_PROTOCOL_INVALID)

    def kill_group(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)  # its session and group are its own pid (setsid)
        except OSError:
            try:
                os.kill(self.pid, signal.SIGKILL)  # before setsid ran
            except OSError:
                pass

    def reap(self):
        """The capability process's wait status, once it exited (killed after a short bound)."""
        until = time.monotonic() + 1.0
        while True:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return 0
            if pid:
                return status
            if time.monotonic() >= until:
                self.kill_group()
                until = time.monotonic() + CHILD_REAP_WAIT_S
            time.sleep(CLEANUP_POLL_S)

    def kill_with(self, terminal=None, failure=None):
        """Kill the capability process's group and decide here: the monitor's summary (attempt_id null)."""
        self.kill_group()
        self.reap()
        return make_summary(self.session_id, None, terminal=terminal, failure=failure)

    def ended_without_summary(self):
        """SESSION-ISOLATION-4: its end without a summary: expired at the deadline or by SIGALRM, else EXITED."""
        status = self.reap()
        alarmed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM
        if alarmed or (self.deadline is not None and self.deadline.expired()):
            return make_summary(self.session_id, None, terminal=CAPABILITY_EXPIRED)
        return make_summary(self.session_id, None, failure=SESSION_CHILD_EXITED)


def read_bootstrap(fd, config):
    """The start document from the inherited descriptor (SESSION-SERVICE-4): (Start, nonce)."""
    data = PROCESS.hold_secret(bytearray())
    try:
        while len(data) <= MAX_START_REQUEST_BYTES:
            try:
                chunk = os.read(fd, MAX_START_REQUEST_BYTES + 1 - len(data))
            except OSError:
                raise SessionError(SESSION_LEGACY_BOOTSTRAP_INVALID, "the descriptor cannot be read") from None
            if not chunk:
                break
            data += chunk
        if not data or len(data) > MAX_START_REQUEST_BYTES:
            raise SessionError(SESSION_LEGACY_BOOTSTRAP_INVALID, "an empty or oversized document")
        return parse_start(bytes(data), config)
    finally:
        PROCESS.wipe(data)
        try:
            os.close(fd)
        except OSError:
            pass


def capability_main(config, channel, scratch, dispatch, bootstrap_fd, monitor_pid):
    """The capability process: isolate, (bootstrap,) run the session, hand the summary over; never returns."""
    try:
        os.setsid()  # SESSION-ISOLATION-1: its session and process group are its own pid, before any request
        if prctl(PR_SET_DUMPABLE, 0) != 0:  # SESSION-SECRET-4: before any token, nonce or capability exists
            raise SessionError(SESSION_PROCESS_ISOLATION_UNAVAILABLE, "PR_SET_DUMPABLE")
        if prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL)) != 0:  # SESSION-ISOLATION-3: nothing outlives its parent
            raise SessionError(SESSION_PROCESS_ISOLATION_UNAVAILABLE, "PR_SET_PDEATHSIG")
        if os.getppid() != monitor_pid:  # the monitor died before the line above took effect
            os._exit(EXIT_FAILED)
        start = nonce = None
        if bootstrap_fd is not None:  # SESSION-SERVICE-4: this process, not the monitor, reads the nonce
            try:
                start, nonce = read_bootstrap(bootstrap_fd, config)
            except SessionError as exc:
                channel.send({"kind": "refused", "code": exc.code})
                os._exit(EXIT_FAILED)
            channel.send({"kind": "accepted", "session_id": start.session_id})
        summary = Session(config, channel, scratch, dispatch, start, nonce).run()
    except SessionError as exc:
        summary = make_summary(failure=exc.code)
    except BaseException:
        summary = make_summary(failure=SESSION_WORKER_FAILED)
    PROCESS.wipe_all()
    channel.send({"kind": "summary", "summary": summary})
    os._exit(EXIT_OK)


def list_children():
    """This process's children (every thread's), from /proc; empty where /proc does not say."""
    found = set()
    for path in glob.glob("/proc/self/task/*/children"):
        try:
            with open(path, "rb") as handle:
                found.update(int(pid) for pid in handle.read().split())
        except (OSError, ValueError):
            pass
    return found


def clean_descendants():
    """SESSION-ISOLATION-4: kill and reap every process the monitor adopted; False past DESCENDANT_CLEANUP_S."""
    until = time.monotonic() + DESCENDANT_CLEANUP_S
    own_group = os.getpgrp()
    while True:
        while True:  # reap what already ended
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if not pid:
                break
        children = list_children()
        if not children:
            return True
        for pid in children:
            try:
                group = os.getpgid(pid)
                if group == own_group:
                    os.kill(pid, signal.SIGKILL)
                else:
                    os.killpg(group, signal.SIGKILL)  # probe children lead groups of their own
            except OSError:
                pass
        if time.monotonic() >= until:
            return False
        time.sleep(CLEANUP_POLL_S)


def monitor_main(config, dispatch=None, bootstrap_fd=None):
    """Job mode, or a Service's session process: the whole run; its outcome, the summary's or a refusal's."""
    PROCESS.role = ROLE_MONITOR
    scratch = summary = None
    cleaned = True
    try:
        if not hasattr(os, "fork"):  # SESSION-ISOLATION-1: never one process holding everything
            summary = make_summary(failure=SESSION_PROCESS_ISOLATION_UNAVAILABLE)
        elif PROCESS.signals:  # a stop before the fork: nothing was started, nothing is sent
            summary = make_summary(terminal=SERVICE_STOPPED)
        else:
            # SESSION-ISOLATION-9 (D23): one private directory, before the fork, removed at every end
            scratch = tempfile.mkdtemp(prefix="session-worker-", dir=config.tmpdir)
            # SESSION-ISOLATION-4: adopt what the capability process leaves (D30: else its group only)
            prctl(PR_SET_CHILD_SUBREAPER, 1)
            summary = fork_and_monitor(config, scratch, dispatch, bootstrap_fd)
    except SessionError as exc:
        summary = make_summary(failure=exc.code)
    except Exception:
        # SESSION-EXIT-3 (D20): an unforeseen error still ends in a summary
        summary = make_summary(failure=SESSION_WORKER_FAILED)
    finally:
        cleaned = clean_descendants()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    if isinstance(summary, tuple):  # ("refused", code): a bootstrap refused its document
        return REFUSED, "%s: bootstrap refused" % summary[1]
    if not cleaned:  # SESSION-ISOLATION-4: a descendant outlived DESCENDANT_CLEANUP_S
        summary = make_summary(summary["session_id"], None, failure=SESSION_DESCENDANT_CLEANUP_FAILED)
    return summary_outcome(summary)


def fork_and_monitor(config, scratch, dispatch, bootstrap_fd):
    """Fork the capability process and watch it: its summary (or the monitor's)."""
    try:
        to_monitor = os.pipe()
        to_child = os.pipe()
    except OSError:
        raise SessionError(SESSION_PROCESS_ISOLATION_UNAVAILABLE, "no pipes") from None
    monitor_pid = os.getpid()
    # A stop between fork and the child's handler role would reach the wrong logic: held until both are set.
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED_SIGNALS)
    try:
        pid = os.fork()  # SESSION-ISOLATION-1: exactly one child, before any secret exists
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        raise SessionError(SESSION_PROCESS_ISOLATION_UNAVAILABLE, "fork failed") from None
    if pid == 0:
        try:
            PROCESS.role = ROLE_CAPABILITY
            for fd in (to_monitor[0], to_child[1], PROCESS.wake_r, PROCESS.wake_w):
                os.close(fd)
            PROCESS.wake_r = PROCESS.wake_w = None
            STOP.open()  # its own wakeup pipe: the monitor's is not shared
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
            capability_main(config, Channel(to_child[0], to_monitor[1]), scratch, dispatch, bootstrap_fd,
                            monitor_pid)
        finally:
            os._exit(EXIT_FAILED)
    signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    os.close(to_monitor[1])
    os.close(to_child[0])
    if bootstrap_fd is not None:
        os.close(bootstrap_fd)  # SESSION-ISOLATION-2: the monitor never holds the nonce
    os.set_blocking(to_monitor[0], False)
    try:
        return Monitor(pid, Channel(to_monitor[0], to_child[1]), bootstrap_fd is not None).run()
    finally:
        os.close(to_monitor[0])
        os.close(to_child[1])


# 7.3 Service mode =============================================================
# The legacy Service, kept for rollback: each session's start document reaches
# its fresh interpreter only through an inherited descriptor (SESSION-SERVICE-1..7).
# The threaded server never forks Python code: subprocess execs at once.

HEALTH_PATHS = ("/livez", "/healthz")
START_PATH = "/sessions:start"
BOOTSTRAP_FLAG = "--legacy-bootstrap-fd"
START_REFUSALS = {  # SESSION-SERVICE-2..4: fixed details that repeat nothing of the request
    SESSION_START_INVALID: (400, "the body is not a start document"),
    SESSION_START_TOO_LARGE: (413, "the body is larger than MAX_START_REQUEST_BYTES"),
    SESSION_LEASE_URL_UNRECOGNIZED: (400, "lease_url is not this control plane's lease URL"),
    SESSION_WORKER_BUSY: (409, "this instance already holds a live session"),
    SESSION_LEGACY_PROCESS_START_FAILED: (503, "the session process did not start"),
}


class ServiceState(object):
    """The Service's one live session and its idle clock, under one lock."""

    def __init__(self, config):
        self.config = config
        self.lock = threading.Lock()
        self.live = None  # the LegacySession whose process has not exited (SESSION-SERVICE-3)
        self.idle_since = time.monotonic()  # SESSION-SERVICE-7: from the start and each session's end
        self.stopping = False
        self.output_lock = threading.Lock()  # one summary line at a time on stdout


SERVICE = None  # the ServiceState, made by service_main()


class LegacySession(object):
    """One session process (SESSION-SERVICE-4, -6): launched, watched, its summary written once."""

    def __init__(self, start):
        self.start = start
        self.proc = None
        self.output = bytearray()  # what the process wrote after its ready line
        self.stopped = False  # the Service sent it the stop
        self.launched = threading.Event()  # launch() has ended, one way or the other

    def launch(self, document):
        """Start the process and wait for its word ready; SESSION_LEGACY_PROCESS_START_FAILED otherwise."""
        try:
            self.spawn(document)
        finally:
            self.launched.set()

    def spawn(self, document):
        node = node_file()
        read_fd, write_fd = os.pipe()
        try:
            write_all(write_fd, document)  # at most MAX_START_REQUEST_BYTES: it fits the pipe's buffer
            os.close(write_fd)
            write_fd = None
            if node is None:
                raise OSError("no node file")
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", node, BOOTSTRAP_FLAG, str(read_fd)],  # only a descriptor number
                pass_fds=(read_fd,), close_fds=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                start_new_session=True)  # SESSION-SERVICE-4: a session of its own, never a fork of this server
        except OSError:
            raise SessionError(SESSION_LEGACY_PROCESS_START_FAILED, "spawn failed") from None
        finally:
            os.close(read_fd)
            if write_fd is not None:
                os.close(write_fd)
        if self.read_ready(Deadline(LEGACY_BOOTSTRAP_READY_TIMEOUT_SECONDS)) and not self.stopped:
            return
        self.terminate()  # SESSION-SERVICE-4: SIGTERM, 1 s, SIGKILL
        raise SessionError(SESSION_LEGACY_PROCESS_START_FAILED, "no ready word")

    def read_ready(self, budget):
        fd = self.proc.stdout.fileno()
        while not budget.expired():
            ready, _w, _x = select.select([fd], [], [], budget.remaining())
            if not ready:
                continue
            chunk = os.read(fd, IO_CHUNK_BYTES)
            if not chunk:
                return False
            self.output += chunk
            if len(self.output) >= len(READY_LINE):
                if bytes(self.output[:len(READY_LINE)]) != READY_LINE:
                    return False
                del self.output[:len(READY_LINE)]
                return True
        return False

    def terminate(self):
        for signum, wait_s in ((signal.SIGTERM, LEGACY_TERMINATE_WAIT_S), (signal.SIGKILL, CHILD_REAP_WAIT_S)):
            try:
                os.killpg(self.proc.pid, signum)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=wait_s)
                return
            except subprocess.TimeoutExpired:
                continue

    def stop(self):
        """SESSION-SERVICE-7: a stop sent to its process, which drains as SESSION-STOP-2..5 say."""
        self.stopped = True
        if self.proc is None:
            return  # still launching: launch() sees `stopped` and ends it
        try:
            os.kill(self.proc.pid, signal.SIGTERM)
        except OSError:
            pass

    def exited(self):
        return self.launched.is_set() and (self.proc is None or self.proc.poll() is not None)

    def watch(self):
        """The rest of its stdout, its exit, its summary on the Service's stdout (SESSION-SERVICE-6)."""
        fd = self.proc.stdout.fileno()
        try:
            while len(self.output) <= MAX_SERVICE_OUTPUT_BYTES:
                chunk = os.read(fd, IO_CHUNK_BYTES)
                if not chunk:
                    break
                self.output += chunk
        except OSError:
            pass
        if len(self.output) > MAX_SERVICE_OUTPUT_BYTES:
            self.terminate()
        self.proc.wait()
        self.proc.stdout.close()
        summary = None
        if self.output.endswith(b"\n") and self.output.count(b"\n") == 1:
            try:
                doc = parse_canonical(bytes(self.output[:-1]))
            except JsonError:
                doc = None
            # D19: the session process's own summary, its failure code included
            if is_summary(doc, None) and doc["session_id"] in (None, self.start.session_id):
                summary = doc
        with SERVICE.output_lock:
            if summary is not None:
                write_all(1, canonical_bytes(summary) + b"\n")
            elif self.stopped:
                write_all(1, canonical_bytes(make_summary(self.start.session_id, terminal=SERVICE_STOPPED)) + b"\n")
            else:
                failed = make_summary(self.start.session_id, failure=SESSION_LEGACY_PROCESS_FAILED)
                write_all(1, canonical_bytes(failed) + b"\n")  # SESSION-EXIT-2: one line each
                say(failure_line(failed))  # SESSION-EXIT-3: the failure's code, after its summary
        with SERVICE.lock:  # SESSION-SERVICE-3: free again once the process has exited
            SERVICE.live = None
            SERVICE.idle_since = time.monotonic()
        PROCESS.wake()  # the idle clock starts again


def start_document(start, nonce):
    """The canonical start document, built around the nonce so that its only copy can be wiped."""
    rest = canonical_bytes({"lease_url": start.lease_url, "schema_version": SCHEMA_VERSION,
                            "session_id": start.session_id, "workspace_id": start.workspace_id})
    return PROCESS.hold_secret(bytearray(b'{"lease_nonce":"') + nonce + b'",' + rest[1:])  # lease_nonce sorts first


class ServiceHandler(object):
    """SESSION-SERVICE-1: /livez, /healthz, POST /sessions:start; anything else is 404 NOT_FOUND.

    The methods only: service_main() puts http.server.BaseHTTPRequestHandler under them (that
    module is imported by worker_imports(), never at the top: see section 1).
    """

    protocol_version = "HTTP/1.1"
    server_version = "mostlyright-session-worker"
    sys_version = ""
    timeout = SERVICE_READ_TIMEOUT_S  # a client that stops sending is dropped, never waited on for ever

    def log_message(self, format, *args):
        pass  # SESSION-EXIT-3, SECRET-3: nothing of a request reaches stderr

    def answer(self, status, doc):
        """SESSION-SERVICE-1: JSON, an exact length, no-store, a canonical body."""
        body = canonical_bytes(doc)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def refuse(self, code):
        status, detail = START_REFUSALS[code]
        self.answer(status, {"code": code, "detail": detail})

    def send_error(self, code, message=None, explain=None):
        """What the base class answers itself (an unknown method, a malformed request): 404 NOT_FOUND."""
        self.close_connection = True
        self.answer(404, {"code": NOT_FOUND})

    def not_found(self):
        self.close_connection = True  # a body, if any, is left unread
        self.answer(404, {"code": NOT_FOUND})

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = not_found

    def do_GET(self):
        if self.path in HEALTH_PATHS:  # SESSION-SERVICE-1: liveness only, before and during a session
            self.answer(200, {"role": ROLE, "status": "live"})
        else:
            self.not_found()

    def do_POST(self):
        if self.path != START_PATH:
            self.not_found()
            return
        self.close_connection = True  # one start per connection: a body it did not frame is never parsed as a request
        lengths = self.headers.get_all("Content-Length") or []
        length = 0  # SESSION-SERVICE-2: without the header the body is empty
        if lengths:
            length = content_length_of(lengths[0].strip())
            # two different lengths frame one body two ways: refused (the upstream reads the first)
            if length is None or len(set(value.strip() for value in lengths)) != 1:
                self.close_connection = True
                self.refuse(SESSION_START_INVALID)
                return
        if not 0 <= length <= MAX_START_REQUEST_BYTES:  # SESSION-SERVICE-2: the body unread
            self.close_connection = True
            self.refuse(SESSION_START_TOO_LARGE)
            return
        data = PROCESS.hold_secret(bytearray(self.rfile.read(length) if length else b""))  # exactly Content-Length bytes
        nonce = document = None
        try:
            if len(data) != length:
                self.close_connection = True
                self.refuse(SESSION_START_INVALID)
                return
            try:
                start, nonce = parse_start(bytes(data), SERVICE.config)
            except SessionError as exc:
                self.refuse(exc.code)
                return
            session = LegacySession(start)
            with SERVICE.lock:
                busy = SERVICE.live is not None or SERVICE.stopping
                if not busy:
                    SERVICE.live = session
            if busy:  # SESSION-SERVICE-3: at once, no request to the control plane, the nonce discarded
                self.refuse(SESSION_WORKER_BUSY)
                return
            document = start_document(start, nonce)
            PROCESS.wipe(nonce)
            try:
                session.launch(document)
            except SessionError:
                with SERVICE.lock:
                    SERVICE.live = None
                    SERVICE.idle_since = time.monotonic()
                self.refuse(SESSION_LEGACY_PROCESS_START_FAILED)
                return
            threading.Thread(target=session.watch, name="session-%s" % start.session_id[:8]).start()
            # SESSION-SERVICE-4: only once the session process said ready
            self.answer(202, {"accepted": True, "session_id": start.session_id})
        finally:
            PROCESS.wipe(data)
            PROCESS.wipe(nonce)
            PROCESS.wipe(document)


def service_main(config):
    """Service mode: serve until a stop or the idle grace (SESSION-SERVICE-1, -7); the outcome."""
    global SERVICE
    PROCESS.role = ROLE_SERVICE
    SERVICE = ServiceState(config)
    try:
        handler = type("ServiceHandler", (ServiceHandler, http.server.BaseHTTPRequestHandler), {})
        server = http.server.ThreadingHTTPServer(("0.0.0.0", config.port), handler)
    except OSError:
        return SERVICE_FAILED, "%s: the Service cannot listen on PORT" % SESSION_WORKER_FAILED
    server.daemon_threads = True
    server.timeout = 0  # handle_request() is called only when a connection is ready
    listener, wake = server.socket.fileno(), PROCESS.wake_r
    while not PROCESS.signals:
        with SERVICE.lock:
            idle = SERVICE.live is None
            left = SERVICE.idle_since + config.shutdown_grace_s - time.monotonic()
        if idle and left <= 0:  # SESSION-SERVICE-7: no session for the grace: scale to zero
            server.server_close()
            return SERVICE_ENDED, None
        ready, _w, _x = select.select([listener, wake], [], [], max(0.0, left) if idle else None)
        if wake in ready:
            PROCESS.drain_wake()
        if listener in ready and not PROCESS.signals:
            server.handle_request()
    server.server_close()  # SESSION-SERVICE-7: the listening socket closes at once
    with SERVICE.lock:
        SERVICE.stopping = True
        live = SERVICE.live
    if live is not None:
        live.stop()  # it drains, writes its summary and exits within STOP_GRACE_S + 1 s
        seen = PROCESS.signals
        until = Deadline(STOP_KILL_S + 1.0)
        while not live.exited() and not until.expired():
            # a session still launching is looked at every 0.1 s: it ends itself on seeing the stop
            select.select([wake], [], [], until.remaining() if live.launched.is_set() else 0.1)
            PROCESS.drain_wake()
            if PROCESS.signals > seen:  # SESSION-STOP-6: a second stop reaches the session process too
                seen = PROCESS.signals
                live.stop()
        if not live.exited():
            live.terminate()
    return SERVICE_ENDED, None


# 7.4 Outcome and exit status ==================================================
# A run ends in one outcome; finish() writes its final line once and returns
# its exit status (SESSION-EXIT-1..4).


def lifecycle(config):
    """The run the command line named: Service mode, or a monitor (Job mode, a Service's session process)."""
    if config.mode == SERVICE_MODE:
        return service_main(config)
    return monitor_main(config, dispatch=config.dispatch, bootstrap_fd=config.bootstrap_fd)


# The outcomes of a run, and the exit status of each (SESSION-EXIT-4).
TERMINAL, FAILED, REFUSED = "terminal", "failed", "refused"  # a summary's two kinds; a bootstrap refused
SERVICE_ENDED, SERVICE_FAILED = "service_ended", "service_failed"
EXIT_STATUS = {TERMINAL: EXIT_OK, FAILED: EXIT_FAILED, REFUSED: EXIT_FAILED,
               SERVICE_ENDED: EXIT_OK, SERVICE_FAILED: EXIT_FAILED}


def summary_outcome(summary):
    """(TERMINAL or FAILED, summary): a summary with a failure code is a failed run (SESSION-EXIT-4)."""
    return (FAILED if summary["failure_code"] is not None else TERMINAL), summary


def defect_outcome(exc):
    """SESSION-EXIT-3 (D20): a defect in this file still ends in one final line, never a traceback."""
    if PROCESS.role == ROLE_SERVICE:
        if isinstance(exc, StopRequested):
            return SERVICE_ENDED, None
        return SERVICE_FAILED, "%s: the Service failed" % SESSION_WORKER_FAILED
    if isinstance(exc, StopRequested):  # a stop seen: the stopped summary
        return summary_outcome(make_summary(terminal=SERVICE_STOPPED))
    return summary_outcome(make_summary(failure=SESSION_WORKER_FAILED))


def finish(outcome):
    """The final line, written once, and the exit status (SESSION-EXIT-2..4).

    A summary on stdout (a failed one's code then on stderr); a refusal or a
    Service failure is one stderr line; a stopped Service writes nothing.
    """
    kind, detail = outcome
    if kind in (TERMINAL, FAILED):
        code = PROCESS.settle(1, canonical_bytes(detail) + b"\n", EXIT_STATUS[kind])  # SESSION-EXIT-2: one line
        if kind == FAILED:
            say(failure_line(detail))
        return code
    return PROCESS.settle(2, None if detail is None else (detail + "\n").encode("ascii", "replace"),
                          EXIT_STATUS[kind])


# 8 main() =====================================================================
# The command line is matched exactly and echoed nowhere (SESSION-ARGV-1);
# configure() sends nothing, so it may precede the handlers (SESSION-STOP-1).

USAGE = """usage: %(prog)s --session-dispatch-id UUID4 --session-dispatch-exchange-url URL
                         --session-dispatch-audience ORIGIN          (Job mode)
       %(prog)s                                                      (Service mode)
       %(prog)s --help

The reference session worker.  Job mode exchanges the dispatch for a fenced
lease, starts the attempt, keeps a heartbeat, answers probes in a networkless
sandboxed child and reports them, until the session closes, the capability
expires or a stop arrives; then one summary line on stdout.  Service mode
serves GET /livez, GET /healthz and POST /sessions:start on PORT and runs each
session in a fresh interpreter (internal: --legacy-bootstrap-fd N; a probe
child is --probe-child).

Environment:
  STUDIO_API_ORIGIN                               the control plane (https origin), required
  MR_SESSION_WORKER_LEASE_AUDIENCE, STUDIO_WORKER_BOOTSTRAP_AUDIENCE
                                                  Service mode: the lease's identity audience
  PORT                                            Service mode: the port (8080)
  MR_SESSION_WORKER_SHUTDOWN_GRACE_SECONDS        Service mode: idle exit (30, at most 600)
  MR_SESSION_WORKER_WARM_POOL_SIZE                probe children started ahead (2, 0..8)
  MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS         a probe child's run (45, at most 300)
  MR_SESSION_WORKER_ACQUISITION_TIMEOUT_SECONDS   a probe's acquisition (90, at most 600)
  MOSTLYRIGHT_EXTERNAL_NETWORK_POLICY_ATTESTATION optional: passed to probe children
  MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET              optional: where downloads come from
  GCE_METADATA_HOST, STORAGE_EMULATOR_HOST        optional: metadata server, storage origin
  SSL_CERT_FILE, TMPDIR                           CA bundle; scratch directory

Exit status: 0 the session reached a terminal state (closed, failed, expired,
consumed, stopped), --help, a Service that stopped or went idle; 1 a failure
(its code on stderr) or a configuration error; 2 a command line this node does
not answer.  Contract: contract/session.md.
""" % {"prog": PROGRAM}

def main(argv=None):
    """Run the node, or the child mode its command line names; return the exit status.  Never raises."""
    tokens = list(sys.argv[1:] if argv is None else argv)
    for prefix, child_main in CHILD_MODES:  # 6.7: this file, started again as its own child
        if tokens[:len(prefix)] == list(prefix):
            return child_main(tokens[len(prefix):])
    try:
        config = configure(tokens, os.environ)  # 6.3: argv and environment, read once; None: --help
    except UsageError as exc:  # SESSION-ARGV-1: a fixed text naming the option, never its value
        write_all(2, exc.text.encode("ascii", "replace"))
        return exc.exit_code
    if config is None:  # SESSION-NODE-2: the usage, with nothing read and nothing sent
        write_all(1, USAGE.encode("ascii"))
        return EXIT_OK
    try:
        start_process()  # 6.1: wake pipes and stop handlers, before the first request (SESSION-STOP-1)
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

# ---- BEGIN BLOCK keepalive (nodes/blocks/keepalive.py) ----
# keepalive (builds on transport): KeptExchange, an HttpExchange that takes
# a connection its Keeper kept from an earlier exchange with the same origin
# and gives its own back, and resumes the origin's TLS session on a new one;
# tls_context(), the one context those sessions belong to.
# A node that never reuses a connection embeds none of it.

# A connection idle longer than this is closed, not reused: load balancers drop
# idle connections after about a minute (AWS ALB 60 s, nginx 75 s), and the
# older a kept connection, the likelier a request on it races the server's close.
KEEP_IDLE_MAX_S = 50.0
# Idle connections kept per origin: one per thread that calls the origin at
# once (a claim loop, a heartbeat, a progress outbox); more are closed.
KEEP_PER_ORIGIN = 4

_TLS_CONTEXT = []  # the process's one context, made by its first exchange
_TLS_CONTEXT_LOCK = threading.Lock()  # two threads' first exchanges make one context, not two


def tls_context():
    """The process's TLS context: verified certificates and host names; SSL_CERT_FILE honoured.

    Made at the first exchange (SSL_CERT_FILE is read then), and one for the
    process: a TLS session resumes only under the context that made it.
    """
    with _TLS_CONTEXT_LOCK:
        if not _TLS_CONTEXT:
            _TLS_CONTEXT.append(ssl.create_default_context())
        return _TLS_CONTEXT[0]


def idle_and_open(sock):
    """True when a kept connection can carry a request: nothing to read on it.

    Readable while idle means the server closed it (EOF, a reset) or sent
    bytes nobody asked for: either way the next answer could not be trusted.
    A TLS record that carries no data (a session ticket) leaves it usable.
    The socket is never read otherwise: an idle connection costs no wakeup.
    """
    try:
        if isinstance(sock, ssl.SSLSocket) and sock.pending():
            return False
        ready, _, _ = select.select([sock], [], [], 0)
        if not ready:
            return True
        if not isinstance(sock, ssl.SSLSocket):
            return False
        sock.setblocking(False)
        sock.recv(1)  # data is garbage, b"" the server's close
        return False
    except ssl.SSLWantReadError:
        return True
    except (OSError, ValueError):
        return False


class Keeper(object):
    """Connections kept open between exchanges, and TLS sessions to resume, by origin.

    Holds sockets and TLS sessions only: nothing of a request (a token, a
    signed query string) outlives its exchange, since each exchange builds its
    own http.client connection around the socket.  An idle socket is on no
    stop ledger and nobody reads it, so a wait between polls costs nothing
    and a stop ends that wait as any other.  Thread-safe.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._idle = {}  # (scheme, host, port) -> [(socket, monotonic time it was kept)]
        self._sessions = {}  # (host, port) -> the last SSLSession of a finished handshake

    def take(self, target):
        """An idle connection to `target`'s origin that can carry a request, or None."""
        key = (target.scheme, target.host, target.port)
        while True:
            with self._lock:
                kept = self._idle.get(key)
                if not kept:
                    return None
                sock, since = kept.pop()
            if time.monotonic() - since <= KEEP_IDLE_MAX_S and idle_and_open(sock):
                return sock
            close_quietly(sock)

    def give(self, target, sock):
        """Keep `sock` (its answer read to the end) for the next exchange to the same origin."""
        key = (target.scheme, target.host, target.port)
        with self._lock:
            kept = self._idle.setdefault(key, [])
            if len(kept) < KEEP_PER_ORIGIN:
                kept.append((sock, time.monotonic()))
                return
        close_quietly(sock)

    def tls_session(self, target, context):
        """The last session of `target`'s server made under `context`, or None: a session
        offered to another context is a ValueError, not a handshake."""
        with self._lock:
            made_by, session = self._sessions.get((target.host, target.port), (None, None))
        return session if made_by is context else None

    def remember(self, target, sock):
        """The TLS session of `sock`, for the next handshake with its server to resume."""
        session = getattr(sock, "session", None)
        if session is not None and (session.has_ticket or session.id):
            with self._lock:
                self._sessions[(target.host, target.port)] = (sock.context, session)

    def close(self):
        with self._lock:
            kept = [sock for socks in self._idle.values() for sock, _ in socks]
            self._idle.clear()
        for sock in kept:
            close_quietly(sock)


class KeptExchange(HttpExchange):
    """An HttpExchange that takes a kept connection and keeps its own (`keeper`; None: neither). Direct only.

    open(fresh) takes an idle connection to the origin unless `fresh`
    (`reused` says whether it did), else opens one offering the origin's last
    TLS session; keep(response), once the answer is read to its end, lets
    close() give the connection back.  A request on a reused connection that
    got no answer byte (stale(exc)) raced the server's close: whether it may
    be sent again is the caller's to decide, request by request.
    """

    def __init__(self, url, stop, timeout_s, connect_deadline_s, budget=None, ssl_context_factory=None,
                 keeper=None):
        HttpExchange.__init__(self, url, stop, timeout_s, connect_deadline_s, budget, ssl_context_factory)
        self.keeper = keeper
        self.fresh = self.reused = self.reusable = False

    def open(self, fresh=False):
        self.fresh = fresh
        return HttpExchange.open(self)

    def _connect(self, deadline, context):
        if self.keeper is None:
            return HttpExchange._connect(self, deadline, context)
        if not self.fresh:
            self.stop.check("sending a request")
            sock = self.keeper.take(self.target)
            if sock is not None:
                self.reused = True
                self.stop.track(sock)
                return sock
        session = self.keeper.tls_session(self.target, context) if context is not None else None
        return open_socket(self.target, self.stop, deadline, context, tls_session=session)

    def keep(self, response):
        """Mark the connection reusable: `response` read to its end, HTTP/1.1 both ways, no close asked."""
        self.reusable = (self.keeper is not None and response.isclosed() and not response.will_close
                         and response.version == 11 and not self.was_cut and not self.stop.requested)

    def stale(self, exc, answered=False):
        """True when `exc`, before any answer (`answered` false), says a request on a reused
        connection raced the server's close: the send failed, or no status line began.  Never
        after a cut (a watchdog) or a stop: those are the node's own doing."""
        return (self.reused and not answered and not self.was_cut and not self.stop.requested
                and isinstance(exc, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                                     ConnectionAbortedError, ssl.SSLEOFError, ssl.SSLZeroReturnError)))

    def _release(self, sock):
        if self.keeper is not None and not self.reused and isinstance(sock, ssl.SSLSocket):
            # Once per handshake, before close (a closed socket has no session), never per exchange:
            # each read of SSLSocket.session leaks a copy of the session on CPython 3.11 and early 3.12
            # (gh-116810), about 19 KiB a probe in the session bench when read after every call.
            self.keeper.remember(self.target, sock)
        if self.reusable and not self.was_cut and not self.stop.requested:
            self.keeper.give(self.target, sock)
        else:
            close_quietly(sock)
# ---- END BLOCK keepalive ----

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

# ---- BEGIN BLOCK bytecode (nodes/blocks/bytecode.py) ----
# bytecode: a node file's bytes compiled into a .pyc a child interpreter runs
# as its script (`python -I -S FILE.pyc ...`), so the child skips the compile
# that is most of a long node's start.  Which bytes, where the file goes and
# how a stale one is never run are the node's (scan D34, session D54).


def node_bytecode(source, filename):
    """The .pyc bytes of `source` (the node file's bytes, as hashed by the caller) compiled as `filename`.

    The header is what the interpreter reads before the code: its magic, flags 1
    (a hash-based .pyc that is never compared with a source; the caller's digest
    of `source` is that comparison) and the source hash.  SyntaxError or
    ValueError when `source` does not compile.
    """
    code = compile(source, filename, "exec", dont_inherit=True)
    return importlib.util.MAGIC_NUMBER + b"\x01\x00\x00\x00" + importlib.util.source_hash(source) \
        + marshal.dumps(code)
# ---- END BLOCK bytecode ----


# The process's two state objects (6.1), made here because their classes are the blocks' above.
class NodeProcess(Process):
    """The process block's state, and what only this node's roles add to it."""

    def __init__(self):
        super().__init__()
        self.role = None  # ROLE_*: which stop logic the handler runs
        self.stop_at = None  # capability process: monotonic time of the first stop (SESSION-STOP-5)
        self.libc = None  # ctypes handle with prctl, loaded on first use


PROCESS = NodeProcess()  # SESSION-NODE-3: these objects open nothing; main() does the rest
# Opened after the fork; its courtesy line would be an extra stderr line (SESSION-EXIT-3): none.
STOP = Stop(PROGRAM, stderr_fd=None)


if __name__ == "__main__":  # SESSION-NODE-3: importing the file runs nothing
    sys.exit(main())
