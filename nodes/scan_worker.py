#!/usr/bin/env python3
"""scan_worker.py: the reference remote scan worker (N slots, each claim to receipt, crash-safe).

A long-lived poller.  Each slot claims one scan assignment from the scan
server, runs the scan in a watched child process (a "runner": this same file,
started again), uploads the result bundle or reports why there is none, waits
for the server's receipt, and claims again.  Every step is on disk before the
request that depends on it, so the worker can be killed at any moment and
restarted on the same state directory: it asks the server first, with the
identifiers it saved, and never claims twice, uploads twice or loses a result.

Run it (the upstream's own launch line, `--server X --token T --parallelism N`,
in any spelling its argparse took, works too):
    python3 nodes/scan_worker.py --help
    python3 nodes/scan_worker.py --server https://scan.example --token-file ~/.truf-token
Judge it against its contract:
    python3 -m conformance scan nodes/scan_worker.py

Contract: contract/scan.md, version 2.  Each line that exists because of a
clause carries its ID and what breaks without it (grep -n SCAN-CLAIM-3 finds
the clause, this code and its checks):
    ARGV CONFIG TOKEN   argv and environment read once; the token off argv and environ
    HTTP PEER           verified TLS; JSON bounded whole, uploads by progress; answers read as the upstream reads them
    CLAIM ASSIGN        the request id on disk first; 204, 200 and 201 judged; assignments checked
    STATE               private trees, atomic writes, the schema, one worker per tree
    RECONCILE           the status first; resolutions bound to what the slot holds; 404/409/410
    RUNNER BUNDLE       the child: gate, identity, deadlines, first terminal wins, fencing
    UPLOAD TERMINAL     streamed two-pass uploads; reports fitted to 16 KiB and replayed as bytes
    PROGRESS BACKOFF    the journal, the outbox and its cursor; one jittered retry schedule
    SLOT STOP SECRET OUTPUT   N slots; drain then stop; no token anywhere; fixed lines only

Layout (`grep -n '^# [0-9]' nodes/scan_worker.py` prints it; every node has banners 1-9):
    1 Imports                      standard library only
    2 Configuration [EDIT]         the node's name and version; the deployment constants (D30)
    3 Your work [EDIT]             the frame; 3.1 the capabilities; 3.2 the reference scan, TargetScan
    ---- Below this line: contract machinery [KEEP] ----
    4 Limits, 5 Errors             every number with its unit; one root error (4.1, 5.1: the runner's)
    6 Protocol                     6.1 process and output, 6.2 documents and forms, 6.3 configuration,
                                   6.4 identity (the token), 6.5 HTTP exchanges, 6.6 state on disk,
                                   6.7 child framing (the runner's files), 6.8 progress, 6.9 reports
    7 Lifecycle                    7.1 a runner from its slot, 7.2 a slot, 7.3 the worker, 7.4 the runner
    8 main()                       child modes, configuration, handlers, the lifecycle, the exit status
    9 Shared blocks                copies of nodes/blocks/*.py: edit those instead

Edit sections 2 and 3, keep the rest.  Section 9 is rewritten from
nodes/blocks/ by `python3 -m conformance.sync`, and `--check` reports drift.
Nothing happens on import: configuration, handlers, files, threads and
processes wait for main().
"""

# 1 Imports ====================================================================
# SCAN-NODE-1: standard library only, and nothing newer than the Python 3.9 grammar.

import argparse
import collections
import contextlib
import datetime
import email.utils
import errno
import fcntl
import hashlib
import http.client
import importlib.util
import itertools
import json
import marshal
import math
import os
import pwd
import random
import re
import secrets
import select
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import threading
import time
import urllib.parse

# 2 Configuration [EDIT] =======================================================

PROGRAM = "scan_worker.py"  # the name the usage text shows
NODE_NAME = "scan-worker"  # SCAN-CLAIM-2: `build.node`, how the server tells workers apart
NODE_VERSION = "1.0.0"  # SCAN-CLAIM-2: `build.version`; bump it when the scan changes

# Deployment constants (D30).  The upstream imports these from its own
# platform's modules (scan_execution, result_bundle, runtime_security), which
# nobody outside that platform has seen: each value here is this contract's
# guess.  A deployment whose scan server expects another value changes it here
# and runs the harness with the same value, `--deploy NAME=VALUE`.
#
# SCAN-CLAIM-2: the claim's `build` document (the upstream's
# WorkerBuildCompatibility.as_dict()).  Any JSON object; a string that is
# exactly one of "$capabilities", "$code_sha256", "$node" or "$version", at
# any depth, is replaced by CAPABILITIES (a list of triples), the SHA-256 of
# this file, NODE_NAME or NODE_VERSION.
CLAIM_BUILD = {"capabilities": "$capabilities", "code_sha256": "$code_sha256", "node": "$node", "protocol": 2,
               "version": "$version"}
BUNDLE_FORMAT = "scan-bundle/1"  # SCAN-BUNDLE-1: the bundle header's `format`; the server refuses any other
MAX_BUNDLE_LINE_BYTES = 64 * 1024  # SCAN-BUNDLE-1: one bundle line, newline included, as the server reads it
# SCAN-CLAIM-6, SCAN-STATE-5: a slot state (which holds the assignment) in canonical bytes, and so
# also the largest answer read (D15).  CONTRACT: below 64 KiB no assignment of the harness fits.
MAX_PENDING_BYTES = 1024 * 1024

# 3 Your work [EDIT] ===========================================================
# +- The frame -----------------------------------------------------------------
# | Called, in order: CAPABILITIES, sent with every claim and matched with each
# |     assignment (SCAN-CLAIM-2, SCAN-ASSIGN-2); then in a runner child, per
# |     target: TargetScan(name), feed(chunk) for each piece of its body as it
# |     arrives, finish() once after the last (each returns bundle events)
# | Your code may use: the chunks it is fed and the names of sections 2 and 3
# | Uses from below KEEP: ScanRefused
# | To refuse work: raise ScanRefused(code) from feed() or finish(): the
# |     generation fails with that error code ([a-z0-9_]{1,64}); nothing is uploaded
# +-----------------------------------------------------------------------------
# The machinery keeps the rest (D23): the bundle's header, one `target_done`
# per target, the trailer, the size bound, and that nothing of a target but
# what the scan writes ever leaves the runner.

# 3.1 Hooks [EDIT] =============================================================

# SCAN-CLAIM-2, SCAN-ASSIGN-2 [EDIT]: (source, platform, planning_kind) triples this build can run.
CAPABILITIES = (("fixture", "local", "files"),)

# 3.2 The reference work: replace it whole [EDIT] ==============================
# The reference scan (SCAN-WORK-1..3): what the runner does with a target's
# bytes.  TargetScan's docstring says what the platform needs from whatever
# takes its place.

# SCAN-WORK-1: a line is scanned in pieces this long, never held whole: a quarter
# of a bundle line, so a finding's line (its redacted prefix, its target's name)
# always fits one.
SCAN_LINE_PIECE_BYTES = MAX_BUNDLE_LINE_BYTES // 4

# SCAN-WORK-1: the four rules, applied in this order to every piece of every line.
SCAN_RULES = (
    ("aws_access_key_id", re.compile(r"AKIA[0-9A-Z]{16}")),
    ("private_key_block", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("github_token", re.compile(r"gh[pousr]_[A-Za-z0-9]{36}")),
    ("generic_secret_assignment",
     re.compile(r"(?i)(api[_-]?key|secret|token|passwd|password)\s*[:=]\s*['\"]?[A-Za-z0-9/+_\-]{16,}")),
)

SCAN_REDACTED_PREFIX_CHARS = 4  # SCAN-WORK-2: how much of a match a finding shows
SCAN_ELLIPSIS = "\u2026"  # SCAN-WORK-2: what follows the shown prefix


class TargetScan(object):
    """The scan of one target, fed its bytes as they arrive.  [EDIT]

    The runner calls `feed(chunk)` for every piece of the body it downloads
    (about 64 KiB at a time) and `finish()` once after the last; each returns
    the bundle events found so far, in the order they go into the bundle.  The
    runner adds `target_done` itself once the target's size and digest have
    been checked, and writes the header and trailer itself.

    A copy may change: the rules (SCAN_RULES), what is looked for and how, and
    the events written, with any `type` but `target_done` and `end`, which the
    platform owns (SCAN-BUNDLE-1, -3).

    The platform requires of every event: a JSON object with a string `type`
    other than `end`, made of JSON values only (no floats: the bundle's
    canonical form refuses NaN and its parsers refuse fractions), and at most
    MAX_BUNDLE_LINE_BYTES as one canonical line (ASCII JSON plus "\\n"); a
    longer one fails the scan.  The whole bundle must fit the assignment's
    declared_bundle_bytes, or the scan fails.  Memory must stay flat in the
    target's size: this scan never holds more than one piece of a line
    (SCAN_LINE_PIECE_BYTES); a match that straddles two pieces of one very long
    line is not found, the price of that bound.
    """

    def __init__(self, target_name):
        self.target_name = target_name
        self._line = 1  # 1-based number of the line being read
        self._piece = bytearray()  # the current piece of that line, never longer than SCAN_LINE_PIECE_BYTES

    def feed(self, data):
        """Findings in the lines and full pieces completed by `data` (bytes)."""
        events = []
        data = bytes(data)
        start, end = 0, len(data)
        while start < end:
            room = SCAN_LINE_PIECE_BYTES - len(self._piece)
            newline = data.find(b"\n", start, start + room)
            if newline >= 0:  # the line ends within this piece
                self._piece += data[start:newline]
                self._scan_piece(events)
                self._line += 1
                start = newline + 1
            else:
                stop_at = min(end, start + room)
                self._piece += data[start:stop_at]
                start = stop_at
                if len(self._piece) >= SCAN_LINE_PIECE_BYTES:  # SCAN-WORK-1: a full piece is scanned; the line goes on
                    self._scan_piece(events)
        return events

    def finish(self):
        """Findings in the last line, when the target does not end with a newline."""
        events = []
        self._scan_piece(events)
        return events

    def _scan_piece(self, events):
        if not self._piece:
            return
        text = bytes(self._piece).decode("utf-8", "replace")  # SCAN-WORK-1: UTF-8 with replacement
        self._piece = bytearray()
        for rule, pattern in SCAN_RULES:  # SCAN-WORK-3: rule order, then position
            for match in pattern.finditer(text):
                found = match.group(0)
                events.append({
                    "type": "finding",
                    "target": self.target_name,
                    "line": self._line,
                    "rule": rule,
                    "fingerprint": hashlib.sha256(found.encode("utf-8")).hexdigest(),
                    # SCAN-WORK-2: a prefix and an ellipsis; the secret itself never reaches the bundle
                    "redacted": found[:SCAN_REDACTED_PREFIX_CHARS] + SCAN_ELLIPSIS,
                })


# ---- Below this line: contract machinery [KEEP] ----

# 4 Limits =====================================================================
# Every number the contract fixes, with its unit and what it bounds.  A knob
# that breaks a clause when changed says so.

# SCAN-HTTP-4, D15: a success answer; what the worker keeps must fit a state, so no larger answer is read
MAX_API_RESPONSE_BYTES = MAX_PENDING_BYTES
MAX_ERROR_BODY_BYTES = 64 * 1024  # SCAN-HTTP-4: what is read of an error answer
MAX_CURSOR_BYTES = 64 * 1024  # SCAN-PROGRESS-3: the cursor file
MIN_TOKEN_CHARS, MAX_TOKEN_CHARS = 16, 512  # SCAN-TOKEN-2: an empty or absurd token is refused, not sent
MAX_TOKEN_FILE_BYTES = 4096  # SCAN-TOKEN-3: a token file is read whole; a larger one is not a token
MIN_PARALLELISM, MAX_PARALLELISM = 1, 128  # SCAN-ARGV-3: more would be thousands of threads
MAX_STATE_DIR_ENTRIES = 4096  # SCAN-SLOT-2: a flooded directory fails start-up instead of stalling it
MAX_SLOT_ID = 100000  # SCAN-SLOT-2: a planted slot-999999999.json cannot start that many slots
MIN_RETRY_AFTER_S, MAX_RETRY_AFTER_S = 1, 300  # SCAN-CLAIM-4: no hot loop (0), no absurd stall
NO_WORK_REASONS = frozenset(["empty_queue", "assignment_cap", "dispatch_paused", "capacity", "compatibility"])
TERMINAL_REPORT_MAX_BYTES = 16 * 1024  # SCAN-TERMINAL-3: the server refuses a larger report
MAX_DETAIL_CHARS = 1000  # SCAN-TERMINAL-3: a report's detail, cut to this
MAX_DIAGNOSTICS = 8  # SCAN-TERMINAL-2: a report names at most this many failures, newest kept
MAX_DIAGNOSTIC_BODY_BYTES = 4096  # SCAN-TERMINAL-2: an error body's share of a diagnostic
MAX_DIAGNOSTIC_SUMMARY_BYTES = 1000  # SCAN-TERMINAL-2: a diagnostic's summary, a UTF-8 prefix
UPLOAD_CHUNK_BYTES = 1024 * 1024  # SCAN-UPLOAD-2: memory per upload, whatever the bundle's size
# D27: the unit of an upload's progress: a piece not accepted within --http-timeout is a stall (at the
# default 120 s, a link slower than about 550 bytes/s).  CONTRACT: keep it at most UPLOAD_CHUNK_BYTES.
UPLOAD_PIECE_BYTES = 64 * 1024
MAX_TARGETS = 64  # SCAN-ASSIGN-1: more targets make the assignment incompatible
MAX_TARGET_BYTES = 4 * 1024 ** 3  # SCAN-ASSIGN-1: one target's pinned size
RUNNER_MAX_ATTEMPTS = 3  # SCAN-RUNNER-7: generations per operation, then a report
RUNNER_MIN_RETRY_S = 1.0  # SCAN-RUNNER-7: less time than this left before the scan deadline: no retry
TIMEOUT_BUNDLE_PUBLICATION_S = 30.0  # SCAN-RUNNER-8: a timeout bundle's window, at most
RUNNER_STOP_TIMEOUT_S = 10.0  # SCAN-RUNNER-9: waiting for a killed runner to be gone
RUNNER_POLL_S = 0.1  # SCAN-RUNNER-*: how often a slot reads its runner's events (its exit wakes it at once, D35)
START_GATE_POLL_S = 0.05  # SCAN-RUNNER-3: how often a runner looks for its gate, at most
START_GATE_FIRST_WAIT_S = 0.002  # a gate not open yet is looked for again this soon, then twice as late each time
MAX_RETAINED_WORK = 16  # SCAN-STATE-3: closed generations a state names; older roots are removed
PROGRESS_BATCH = 128  # SCAN-PROGRESS-4: events read per outbox pass
PROGRESS_REQUEST_TIMEOUT_S = 2.0  # SCAN-PROGRESS-4: one progress request, and one pass
PROGRESS_RETRY_MIN_S = 0.5  # SCAN-PROGRESS-4: the outbox's first backoff
PROGRESS_RETRY_MAX_S = 30.0  # SCAN-PROGRESS-4: a long outage is retried this often, no slower
PROGRESS_IDLE_S = 5.0  # how long the outbox sleeps with nothing to send (a new event wakes it at once)
PROGRESS_FINAL_DRAIN_S = 5.0  # SCAN-STOP-2: the flush after a drain
MAX_JOURNAL_BYTES = 1024 * 1024  # SCAN-PROGRESS-5: rotated once delivered past this size
MAX_JOURNAL_HELD_BYTES = 8 * 1024 * 1024  # SCAN-PROGRESS-5: undelivered past this size, new events are dropped (D41)
BACKOFF_CAP_FACTOR = 8  # SCAN-BACKOFF-1: a failed step waits at most 8 x the error delay
STOP_JOIN_S = 2.5  # SCAN-STOP-3: a stop's wait for the slot threads, all together
MIN_STEP_S = 0.1  # SCAN-BACKOFF-4: no slot steps more often than this
NO_WORK_JITTER = 0.1  # SCAN-BACKOFF-3: a 204's wait is Retry-After x [1, 1.1]
IO_CHUNK_BYTES = 64 * 1024  # reads of runner files and downloads

DEFAULT_POLL_S = 5.0  # SCAN-CONFIG-4: the upstream's poll_seconds
DEFAULT_ERROR_DELAY_S = 15.0  # SCAN-CONFIG-4: the upstream's error_delay_seconds
DEFAULT_HTTP_TIMEOUT_S = 120.0  # SCAN-CONFIG-4: the upstream's http_timeout
DEFAULT_DRAIN_S = 20.0  # SCAN-STOP-2, D11: a drain fits a 30 s grace period with room for the flush
WAIT_RANGES = {  # SCAN-CONFIG-4: (low, high) of each option, in seconds
    "poll_seconds": (0.1, 3600.0),
    "error_delay_seconds": (0.1, 3600.0),
    "http_timeout": (1.0, 3600.0),
    "drain_seconds": (1.0, 86400.0),
}

SLOT_STATE_SCHEMA = 2  # SCAN-STATE-3: the upstream's version; any other is left untouched, never read
STALE_RECORD_SCHEMA = 1  # SCAN-RECONCILE-9: a record of another version matches no state
CURSOR_SCHEMA = 1  # SCAN-PROGRESS-3: a cursor of another version fails start-up
RUNNER_FILE_SCHEMA = 1  # runner input, owner, gate and terminal
TOKEN_ENV = "TRUF_WORKER_TOKEN"  # SCAN-TOKEN-1: the one variable a token may come in (moved off at once)
RUNNER_COMMAND = "_assignment_runner"  # SCAN-RUNNER-1: argv that makes this file a runner, not a worker

EXIT_OK = 0  # SCAN-ARGV-2: a drain finished
EXIT_SLOT_DIED = 1  # SCAN-ARGV-2: a slot could not go on, or start-up failed
EXIT_STOPPED = 2  # SCAN-ARGV-2: a stop, or a drain past its bound
EXIT_USAGE = 64  # SCAN-ARGV-2, D12: never 2, which means a stop
EXIT_LOCKED = 75  # SCAN-ARGV-2: another worker holds the state tree; try later

# 4.1 The runner's own bounds ==================================================
# Not in the contract's table: what the runner's files and downloads may cost.

MAX_RUNNER_INPUT_BYTES = MAX_PENDING_BYTES  # input.json: what a slot state can hold, it can hold
MAX_RUNNER_DOC_BYTES = 65536  # owner.json, start.json, terminal.json: a few hundred bytes each in fact
MAX_RUNNER_EVENT_BYTES = 65536  # one line of events.jsonl, newline included
MAX_RUNNER_EVENTS_READ_BYTES = 4 * 1048576  # what one read_events() call reads: a flood waits for the next call
MAX_EXECUTABLE_CHARS = 4096  # PATH_MAX: the target of /proc/<pid>/exe
TARGET_CHUNK_BYTES = 65536  # one read of a target's body: memory stays flat in the target's size
TARGET_CONNECT_DEADLINE_S = 10.0  # lookup + connect + TLS of one target download
TARGET_READ_TIMEOUT_S = 30.0  # silence on a target's socket; the scan deadline bounds the whole download
RUNNER_REAP_POLL_S = 0.01  # how often a wait without a pidfd looks again whether the runner has exited
RUNNER_PHASES = ("preparing", "scanning", "bundling")  # a runner event's phase; SCAN-BUNDLE-1: a timeout bundle's
RUNNER_TERMINAL_REASONS = ("scan_stage_deadline", "timeout_bundle_deadline", "startup_deadline",
                           "runner_crash", "controller_recovery", "malformed_output", "stop")

# A runner's exit status.  The worker decides from terminal.json alone (SCAN-RUNNER-5);
# these only tell a person reading a process table what happened.
RUNNER_EXIT_OK = 0  # published a terminal, or found no gate for it and did nothing
RUNNER_EXIT_FAILED = 1  # its input was unusable or the disk failed: no terminal, the worker fences and retries
RUNNER_EXIT_STOPPED = 2  # SIGTERM or SIGINT
RUNNER_EXIT_DEADLINE = 3  # its own watchdog deadline passed: the worker publishes timed_out

# 5 Errors =====================================================================
# One root error, WorkerError; its subclasses decide the line a failed step
# prints (SUMMARIES, SCAN-OUTPUT-1), the terminal report a failed scan gets,
# and the exit status of one that ends the process (`exit_code`).  A stop is
# the stop block's StopRequested, never one of these.


class WorkerError(Exception):
    """Root of this node's errors; `exit_code` is the status when one ends the process (SCAN-ARGV-2).

    `detail` is fixed text naming the operation and the document, never a
    value read (SCAN-SECRET-2); a function shared by both halves takes the
    class to raise and calls it as error(detail=...).
    """

    exit_code = EXIT_SLOT_DIED

    def __init__(self, detail=None):
        super().__init__(detail)
        self.detail = detail


class WorkerClientError(WorkerError):
    """A protocol or state problem: an answer or a file that breaks the contract."""


class WorkerHTTPError(WorkerClientError):
    """An answer with a status the request does not accept (SCAN-HTTP-5)."""

    def __init__(self, status, code, retry_after=None, content_type=None, body=b""):
        super().__init__("HTTP %d" % status)
        self.status = status
        self.code = code  # an error code, or request_rejected (D4, D7)
        self.retry_after = retry_after  # seconds the answer asked for (SCAN-BACKOFF-2), or None
        self.content_type = content_type
        self.body = body  # at most MAX_ERROR_BODY_BYTES of the server's own bytes: diagnostics only


class WorkerNetworkError(WorkerClientError):
    """A request that failed in transport: no answer, or one cut short."""


class UsageError(WorkerError):
    """Argv, the environment or the token is unusable: exit 64, one stderr line naming the option (SCAN-ARGV-1)."""

    exit_code = EXIT_USAGE

    def __init__(self, message):
        super().__init__(message)
        self.text = "%s: usage error: %s\n" % (PROGRAM, message)  # what main() prints: never a value


class HelpAsked(WorkerError):
    """--help was given: argparse's own print-and-exit is replaced, so main() prints USAGE and returns 0."""

    exit_code = EXIT_OK


class StartupError(WorkerError):
    """A tree or a state file the worker cannot use at start: exit 1."""


class LockHeld(WorkerError):
    """SCAN-STATE-8: another worker holds this state tree."""

    exit_code = EXIT_LOCKED


class ContainmentPending(WorkerError):
    """A runner cannot be proven gone: the slot cannot go on (SCAN-SLOT-4)."""


class AssignmentIncompatible(WorkerClientError):
    """SCAN-ASSIGN-2: the assignment is not one this build can run; `member` names what failed."""

    def __init__(self, member):
        super().__init__("assignment member %s" % member)
        self.member = member


class StorageFailure(WorkerError):
    """SCAN-UPLOAD-3: the ready bundle is not the one adopted (`missing`: it is gone)."""

    def __init__(self, missing=False):
        super().__init__("pending result bundle is missing" if missing else "pending result bundle is unusable")
        self.missing = missing


SUMMARIES = (  # SCAN-OUTPUT-1: the line a failed step prints, by class, first match wins
    (WorkerHTTPError, lambda exc: "worker API request failed (HTTP %d)" % exc.status),
    (WorkerNetworkError, lambda exc: "worker network operation failed"),
    (WorkerClientError, lambda exc: "worker protocol or state validation failed"),
    (OSError, lambda exc: "local I/O operation failed"),
    (Exception, lambda exc: "worker operation failed"),
)


def summary_of(exc):
    """The fixed summary for a failed step: never the exception's text (SCAN-SECRET-2)."""
    for kind, line in SUMMARIES:
        if isinstance(exc, kind):
            return line(exc)
    return "worker operation failed"

# 5.1 The runner protocol's errors =============================================
# Each carries a `code` (an error code the runner can put in an outcome's `error`); a
# message is that code and never a URL, a path's contents or a server's words (SCAN-ASSIGN-4).

TARGET_HTTP_STATUS = "target_http_status"  # the target answered anything but 200 (a 3xx too: never followed)
TARGET_SIZE_MISMATCH = "target_size_mismatch"  # Content-Length is not the pinned size, or the body ended short
TARGET_SHA256_MISMATCH = "target_sha256_mismatch"  # the bytes read do not hash to the pinned digest
TARGET_TRANSPORT_FAILED = "target_transport_failed"  # lookup, connect, TLS or a read failed
TARGET_DEADLINE = "target_deadline"  # the runner's watchdog deadline passed during the download
TARGET_URL_INVALID = "target_url_invalid"  # not an https URL (the worker's check should have caught it)
BUNDLE_TOO_LARGE = "bundle_too_large"  # the bundle would exceed declared_bundle_bytes (SCAN-BUNDLE-4)
BUNDLE_INVALID = "bundle_invalid"  # a bundle breaks SCAN-BUNDLE-1..3
RUNNER_PROTOCOL_FAILED = "runner_protocol_failed"  # a runner document is malformed or unbound


class RunnerError(WorkerClientError):
    """Root of the runner protocol's errors; `code` is what an outcome or a diagnostic says."""

    code = RUNNER_PROTOCOL_FAILED

    def __init__(self, code=None, detail=None):
        if code is not None:
            self.code = code
        self.detail = detail or self.code  # fixed text naming the document and member, never a value
        super().__init__(self.detail)


class RunnerProtocolError(RunnerError):
    """A runner document (input, gate, owner, event, terminal) is malformed, unbound or unreadable."""

    code = RUNNER_PROTOCOL_FAILED


class BundleInvalid(RunnerError):
    """A bundle file breaks the envelope rules of SCAN-BUNDLE-1..4; `detail` names the rule."""

    code = BUNDLE_INVALID


class BundleTooLarge(RunnerError):
    """The bundle would not fit declared_bundle_bytes: the scan fails (SCAN-BUNDLE-4)."""

    code = BUNDLE_TOO_LARGE


class TargetFailed(RunnerError):
    """One target could not be fetched as pinned (SCAN-RUNNER-10); `code` says how."""

    code = TARGET_TRANSPORT_FAILED


class ScanRefused(RunnerError):
    """Section 3's scan refuses a target: the generation fails with `code` (an error code), nothing uploaded."""


# 6 Protocol ===================================================================

# 6.1 Process and output =======================================================
# A signal handler records and wakes, nothing else; the main thread decides
# (SCAN-STOP-1).  The first SIGTERM only asks for a drain (SCAN-STOP-2).  A
# second one, or SIGINT, is a stop: the stop block's handler shuts every
# socket in flight at once, because close() does not interrupt a blocked read
# and shutdown() does (SCAN-STOP-3).  Slot threads never wait on anything a
# handler touches: the main thread turns the handler's byte into the
# threading.Events of FLOW they wait on.  STOP and PROCESS (the stop and
# process blocks' objects) are made at the end of the file, after section 9
# defines their classes; start_process() opens them.


class Flow(object):
    """What the main thread tells the slot and outbox threads; built at import, set only by main()'s thread."""

    def __init__(self):
        self.drain_asked = False  # a first SIGTERM arrived (the handler's flag)
        self.draining = threading.Event()  # set by the main thread: no new claims
        self.stopping = threading.Event()  # set by the main thread: leave now
        self.either = threading.Event()  # draining or stopping: what an idle slot waits on


FLOW = Flow()


def on_signal(signum, frame):
    """SIGTERM and SIGINT (SCAN-STOP-1): the first SIGTERM drains; anything more stops."""
    PROCESS.signals += 1
    if signum == signal.SIGTERM and PROCESS.signals == 1:
        FLOW.drain_asked = True  # SCAN-STOP-2: finish the work in hand; nothing is cut
    else:
        STOP.handle(signum, frame)  # SCAN-STOP-3: flag, then shutdown() of every socket in flight
    PROCESS.wake()


def start_process():
    """SCAN-STOP-1: as PID 1 a signal without a handler is ignored, so handlers come before any request."""
    # SCAN-STOP-2/3: wakeup_fd, because the kernel may deliver a signal to any thread and Python runs
    # the handler only when the main thread next runs bytecode; without that byte in the pipe a main
    # thread asleep in select() never notices the SIGTERM (the drain hangs until a SIGKILL).
    PROCESS.open_wake(wakeup_fd=True)
    STOP.open()
    install_handlers(on_signal)


def say(line):
    """One stdout line in one write, so lines from many threads never interleave (SCAN-OUTPUT-1).

    Callers pass fixed text and numbers only: never a received byte, a path,
    a URL or an exception's text (SCAN-SECRET-2).
    """
    write_all(1, (line + "\n").encode("ascii", "replace"))


def stop_requested():
    return STOP.requested or FLOW.stopping.is_set()


# 6.2 Documents and forms ======================================================
# The scan server digests canonical JSON written with ASCII escapes (the
# upstream's encoding): a terminal report's receipt names the SHA-256 of exactly
# these bytes (SCAN-RECONCILE-4), so every body and file uses one function.

REQUEST_ID_RE = re.compile(r"[a-f0-9]{32}")  # SCAN-CLAIM-1: request ids and generations, fullmatch
DIGEST_RE = re.compile(r"[a-f0-9]{64}")  # fullmatch
LONG_ID_RE = re.compile(r"[a-f0-9]{32,64}")  # bundle and scan event ids, fullmatch
TARGET_NAME_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")  # SCAN-ASSIGN-1: no `/`, no leading `.`
ERROR_CODE_RE = re.compile(r"[a-z0-9_]{1,64}")  # SCAN-HTTP-5, fullmatch
# SCAN-STATE-3: a retained_work entry names a root under abandoned/, nothing else the janitor could remove
RETAINED_RE = re.compile(r"abandoned/worker-assignment-[0-9]+-[1-9][0-9]*-[a-f0-9]{32}")
SLOT_FILE_RE = re.compile(r"slot-(0|[1-9][0-9]*)\.json")  # SCAN-SLOT-2: leftover slots are found by name
DECIMAL_RE = re.compile(r"[0-9]{1,9}(?:\.[0-9]{1,6})?")  # the waits' option values, fullmatch
MAX_HEADER_INT_CHARS = 32  # D25: a header number is short; int() of a longer text is never tried (a bound)
DIGITS_RE = re.compile(r"[0-9]{1,16}")  # D25: a whole number a generated client writes as a string
MAX_INSTANT_CHARS = 64  # D26: an instant is a short text; a longer one is no instant (a bound)
# D26: the RFC 3339 forms fromisoformat() takes only from Python 3.11 on (read_instant)
_RFC3339_RE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]{1,9}))?)?"
    r"(?:(Z)|([+-])([0-9]{2})(?::?([0-9]{2}))?)?")


def canonical(value):
    """SCAN-HTTP-2: the canonical ASCII bytes of a JSON value (sorted keys, no spaces, \\u escapes)."""
    return canonical_bytes(value, ascii=True)


def header_int(value):
    """A header's whole number as the upstream's int(value) reads it (D25: "+5", " 05 "); None otherwise."""
    if not isinstance(value, str) or len(value) > MAX_HEADER_INT_CHARS:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def upstream_int(value, cut=False):
    """The whole number the upstream's int(x) reads from a member a server wrote; None when it reads none.

    D25: a JSON integer; a float with no fraction (5.0: JSON has one number
    type and many producers write every number as a float); with `cut`, any
    finite float cut toward zero as int() cuts it (for a bound or a count,
    where a smaller value is safe); a string of ASCII digits (a generated
    client's 64-bit integers).  Never a boolean, another spelling int() takes
    ("1_0", " 7"), a fraction in an identity, or a number beyond 2^53: each of
    those would name something else than the server meant.
    """
    if is_int(value):
        return value if abs(value) <= MAX_SAFE_INTEGER else None
    if isinstance(value, float):
        if not math.isfinite(value) or not (cut or value.is_integer()) or abs(value) > MAX_SAFE_INTEGER:
            return None
        return int(value)
    if isinstance(value, str) and DIGITS_RE.fullmatch(value):
        number = int(value)
        return number if number <= MAX_SAFE_INTEGER else None
    return None


def read_instant(value):
    """SCAN-PEER-3: epoch seconds of an instant a server wrote, read as the upstream reads it; None otherwise.

    D26: the upstream replaces `Z` by `+00:00`, calls datetime.fromisoformat()
    and takes an instant without an offset as UTC.  So does this, and on a
    Python before 3.11 it also takes the RFC 3339 forms that 3.11 added
    (fractions of any length up to 9 digits, +HHMM and +HH offsets), so the
    worker reads the same instants on every Python it runs on.
    """
    if not isinstance(value, str) or not value or len(value) > MAX_INSTANT_CHARS:
        return None
    try:
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        moment = _rfc3339(value)
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    try:
        return moment.timestamp()
    except (OverflowError, ValueError):
        return None


def _rfc3339(text):
    match = _RFC3339_RE.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute = (int(match.group(i)) for i in range(1, 6))
    second = int(match.group(6) or 0)
    micro = int(((match.group(7) or "") + "000000")[:6])
    zone = datetime.timezone.utc
    if match.group(9):
        offset = datetime.timedelta(hours=int(match.group(10)), minutes=int(match.group(11) or 0))
        try:
            zone = datetime.timezone(-offset if match.group(9) == "-" else offset)
        except ValueError:
            return None
    try:
        return datetime.datetime(year, month, day, hour, minute, second, micro, tzinfo=zone)
    except ValueError:  # not a calendar instant
        return None


def is_text(value, pattern):
    return isinstance(value, str) and pattern.fullmatch(value) is not None


def is_int_in(value, low, high):
    return is_int(value) and low <= value <= high


def is_reservation_id(value):
    return is_int_in(value, 1, MAX_SAFE_INTEGER)


def is_long_id(value):
    return is_text(value, LONG_ID_RE)


def is_digest(value):
    return is_text(value, DIGEST_RE)


def error_code(value):
    """D4: a code the worker keeps is an error code (a number read as its digits, as str(code)), or request_rejected."""
    if is_int(value) and value >= 0:
        value = str(value)
    if isinstance(value, str) and ERROR_CODE_RE.fullmatch(value):
        return value
    return "request_rejected"


def short_text(value, limit=64):
    return isinstance(value, str) and 1 <= len(value) <= limit


def jittered(seconds, low=0.5):
    """A wait uniformly between `low` x and all of `seconds` (D16: equal jitter)."""
    return seconds * random.uniform(low, 1.0)


# 6.3 Configuration ============================================================
# Read once, before any file or request (SCAN-CONFIG-1).  A problem is a
# UsageError whose text names the option or variable and never its value.

Config = collections.namedtuple("Config", [
    "origin", "host", "port", "parallelism", "poll_s", "error_delay_s", "http_timeout_s", "drain_s",
    "state_dir", "bundle_dir", "work_dir", "token_file", "node_path", "progress", "token_source"])

# SCAN-ARGV-1, D28: the upstream's own options.  Its argparse takes any unambiguous
# prefix of them (`--serv`, `--tok=...`, `--p 4`); a host that launched the upstream
# that way launches this worker unchanged.  This worker's own options are taken
# only spelled out, so no prefix can mean one thing here and another upstream.
UPSTREAM_OPTIONS = ("--server", "--token", "--parallelism", "--help")


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as UsageError, without the offending value."""

    def print_help(self, file=None):
        raise HelpAsked()  # SCAN-ARGV-1: configure() returns None and main() prints USAGE, whole

    def error(self, message):
        if message.startswith("argument "):
            head, _, reason = message.partition(": ")
            # Our own type functions say what is wrong without the value; argparse's
            # "invalid choice: 'x'" and the like are cut at the quote.
            raise UsageError("%s: %s" % (head, reason.split("'")[0].strip() or "invalid value"))
        if message.startswith("unrecognized arguments: "):
            # SCAN-ARGV-1: name the unknown option (its name only, cut at "="), never a value
            names = [word.split("=")[0] for word in message.split(": ", 1)[1].split(" ")
                     if re.fullmatch(r"--[a-z][a-z-]{0,39}(=.*)?", word)]  # option-shaped words only
            raise UsageError("unrecognized arguments%s" % (": " + " ".join(names[:4]) if names else ""))
        if message.startswith("the following arguments are required: "):
            raise UsageError(message)  # SCAN-ARGV-1: argparse lists option names only, no value
        raise UsageError(message.split(":")[0])


def upstream_spelling(argv, exact):
    """SCAN-PEER-5, D28: argv with every prefix of an upstream option written out, as its argparse reads it.

    `exact` holds this parser's option strings, which are never rewritten.
    Nothing after a `--` is an option.  The token's value is untouched, so
    the move off argv (SCAN-TOKEN-4) finds it under the option's full name.
    """
    spelled = []
    for index, item in enumerate(argv):
        if item == "--":
            return spelled + list(argv[index:])
        name, sep, value = item.partition("=")
        if item.startswith("--") and len(name) > 2 and name not in exact:
            matches = [option for option in UPSTREAM_OPTIONS if option.startswith(name)]
            if len(matches) == 1:
                item = matches[0] + sep + value
        spelled.append(item)
    return spelled


def _upstream_int(low, high):
    """--parallelism as the upstream's argparse type=int reads it (D28): whatever int() takes."""
    def parse(text):
        try:
            value = int(text) if len(text) <= 32 else None
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError("not a whole number from %d to %d" % (low, high))
        return value
    return parse


def _whole(low, high):
    def parse(text):
        if not re.fullmatch(r"[0-9]{1,6}", text) or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError("not a whole number from %d to %d" % (low, high))
        return int(text)
    return parse


def _seconds(name):
    low, high = WAIT_RANGES[name]

    def parse(text):
        if not DECIMAL_RE.fullmatch(text) or not low <= float(text) <= high:
            raise argparse.ArgumentTypeError("not a number of seconds from %g to %g" % (low, high))
        return float(text)
    return parse


def help_epilog():
    """--help's text after the options: an operator reads the environment, state and exit statuses here."""
    return "\n".join([
        "environment:",
        "  %-28s the bearer token, when neither --token-file nor --token gives it" % TOKEN_ENV,
        "  %-28s the state tree's base (default $HOME/.local/state)" % "XDG_STATE_HOME",
        "  %-28s the bundle and work trees' base (default $HOME/.local/share)" % "XDG_DATA_HOME",
        "  %-28s when the XDG variables are unset (else the user's home in the password database)" % "HOME",
        "  %-28s a CA bundle to trust instead of the system's" % "SSL_CERT_FILE",
        "",
        "state (keep it across restarts: every step of every slot resumes from it):",
        "  $XDG_STATE_HOME/truf/remote-worker            slot files, the lock (one worker per tree)",
        "  $XDG_DATA_HOME/truf/remote-worker/bundles     bundles waiting to be uploaded",
        "  $XDG_DATA_HOME/truf/remote-worker/work        the runners' working trees",
        "",
        "signals: the first SIGTERM drains (no new claim, the work in hand finished) for at most",
        "--drain-seconds; a second SIGTERM, or SIGINT, stops at once (runners killed, state kept).",
        "",
        "exit status:",
        "  %-3d a drain finished: every slot retired" % EXIT_OK,
        "  %-3d a slot could not go on, or start-up failed" % EXIT_SLOT_DIED,
        "  %-3d stopped: a second SIGTERM or SIGINT, or a drain past --drain-seconds" % EXIT_STOPPED,
        "  %-3d a command line or environment this worker does not take" % EXIT_USAGE,
        "  %-3d another worker holds this state tree: try later" % EXIT_LOCKED,
    ])


def build_parser():
    parser = _Parser(prog=PROGRAM, allow_abbrev=False,  # SCAN-TOKEN-4: no `--tok` spelling slips past the move
                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=help_epilog(),
                     description="The remote scan worker: N slots, each claims a scan assignment, runs it in a "
                                 "watched child, uploads the bundle or reports, and survives being killed at any "
                                 "moment (contract/scan.md).")
    parser.add_argument("--server", required=True, metavar="ORIGIN",
                        help="the scan server, an https origin such as https://scan.example")
    parser.add_argument("--token-file", metavar="PATH",
                        help="a file (0600, yours) holding the bearer token; re-read when it changes")
    parser.add_argument("--token", metavar="TOKEN",
                        help="the bearer token (the upstream's option); moved off argv at once. Prefer "
                             "--token-file or %s" % TOKEN_ENV)
    parser.add_argument("--token-fd", type=_whole(0, 65535), help=argparse.SUPPRESS)  # SCAN-TOKEN-4: after the move
    parser.add_argument("--parallelism", type=_upstream_int(MIN_PARALLELISM, MAX_PARALLELISM), default=1,
                        help="slots, 1 to 128 (default 1)")
    parser.add_argument("--poll-seconds", type=_seconds("poll_seconds"), default=DEFAULT_POLL_S,
                        help="idle and awaiting-resolution poll (default 5)")
    parser.add_argument("--error-delay-seconds", type=_seconds("error_delay_seconds"), default=DEFAULT_ERROR_DELAY_S,
                        help="the base wait after a failed step, doubled up to 8 times, jittered (default 15)")
    parser.add_argument("--http-timeout", type=_seconds("http_timeout"), default=DEFAULT_HTTP_TIMEOUT_S,
                        help="whole-exchange deadline of a claim, status or report; an upload's bound on each "
                             "piece it sends and on its answer (default 120)")
    parser.add_argument("--drain-seconds", type=_seconds("drain_seconds"), default=DEFAULT_DRAIN_S,
                        help="how long the first SIGTERM's drain may take before it becomes a stop (default 20)")
    # D31: the upstream's command line sends no progress; this worker does, unless told not to
    parser.add_argument("--no-progress", action="store_true",
                        help="send no progress events and keep no event journal (for a server without the route)")
    return parser


def parse_origin(value):
    """SCAN-CONFIG-2: (origin, host, port) of an https origin; UsageError otherwise (D17).

    As the upstream reads it: every trailing `/` dropped, and a host name
    outside ASCII written as IDNA (what http.client sends for it).
    """
    text = value.rstrip("/")
    if not text or len(text) > 2048 or any(ord(c) <= 32 or ord(c) == 127 for c in text):
        raise UsageError("--server: not an https origin")
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError:
        raise UsageError("--server: not an https origin, or a port that is not a number from 1 to 65535") from None
    if parts.scheme != "https":
        raise UsageError("--server: the scheme must be https (plain HTTP is never spoken)")
    if (not parts.hostname or parts.username is not None or parts.password is not None or parts.query
            or parts.fragment or parts.path or "?" in text or "#" in text or port == 0):
        raise UsageError("--server: not an https origin (no user, path, query or fragment)")
    port = port or 443
    host = parts.hostname
    if any(ord(c) >= 127 for c in host):
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise UsageError("--server: a host name that has no IDNA form") from None
    shown = "[%s]" % host if ":" in host else host
    return ("https://%s" % shown) + ("" if port == 443 else ":%d" % port), host, port


def tree_paths(environ):
    """SCAN-CONFIG-3: (state, bundles, work) from the XDG variables, the upstream's layout."""
    def base(variable, fallback):
        value = environ.get(variable)
        if value is not None and value != "":
            if not os.path.isabs(value):
                raise UsageError("%s: not an absolute path" % variable)
            return value
        home = environ.get("HOME")
        if home is None:  # D29: as the upstream's expanduser("~"): the user's passwd entry
            try:
                home = pwd.getpwuid(os.getuid()).pw_dir
            except KeyError:
                home = None
        if not home or not os.path.isabs(home):
            # D29: a relative HOME would put the trees under whatever directory the worker starts in
            raise UsageError("%s is unset and HOME is not an absolute path" % variable)
        return os.path.join(home, fallback)
    state = os.path.join(base("XDG_STATE_HOME", ".local/state"), "truf", "remote-worker")
    data = os.path.join(base("XDG_DATA_HOME", ".local/share"), "truf", "remote-worker")
    return state, os.path.join(data, "bundles"), os.path.join(data, "work")


def configure(tokens, environ):
    """SCAN-CONFIG-1: the Config of argv and the environment, read once; None for --help; UsageError otherwise."""
    sys.dont_write_bytecode = True  # SCAN-STATE-1: no __pycache__ in anyone's tree
    parser = build_parser()
    argv = upstream_spelling(tokens, parser._option_string_actions)  # D28: `--tok` is `--token`, as upstream
    try:
        args = parser.parse_args(argv)
    except HelpAsked:
        return None
    sources = [args.token_file is not None, TOKEN_ENV in environ, args.token is not None]
    if args.token_fd is not None:
        token, token_file = token_from_fd(args.token_fd), None
    elif sum(sources) != 1:  # SCAN-TOKEN-1: two sources would leave which token is used to chance
        raise UsageError("give the token exactly one way: --token-file, %s or --token" % TOKEN_ENV)
    elif args.token_file is not None:
        try:
            token, token_file = read_token_file(args.token_file), os.path.abspath(args.token_file)
        except (OSError, ValueError) as exc:
            reason = exc.args[0] if isinstance(exc, ValueError) else "cannot be read"
            raise UsageError("--token-file: %s" % reason) from None
    else:
        token = args.token if args.token is not None else environ[TOKEN_ENV]
        if not valid_token(token):
            raise UsageError("%s: not a valid token (16 to 512 printable characters)"
                             % ("--token" if args.token is not None else TOKEN_ENV))
        move_token_and_exec(token, argv, environ)  # SCAN-TOKEN-4: does not return
    origin, host, port = parse_origin(args.server)
    state_dir, bundle_dir, work_dir = tree_paths(environ)
    return Config(origin=origin, host=host, port=port, parallelism=args.parallelism, poll_s=args.poll_seconds,
                  error_delay_s=args.error_delay_seconds, http_timeout_s=args.http_timeout,
                  drain_s=args.drain_seconds, state_dir=state_dir, bundle_dir=bundle_dir, work_dir=work_dir,
                  token_file=token_file, node_path=os.path.abspath(__file__), progress=not args.no_progress,
                  token_source=TokenSource(token, token_file))


# 6.4 Identity =================================================================
# The bearer token: where it may come from, how it leaves argv and the
# environment at once, and how a token file's rotation is followed.

def valid_token(text):
    """SCAN-TOKEN-2: 16 to 512 printable ASCII characters, no space."""
    return (isinstance(text, str) and MIN_TOKEN_CHARS <= len(text) <= MAX_TOKEN_CHARS
            and all("!" <= c <= "~" for c in text))


def read_token_file(path):
    """SCAN-TOKEN-3: the token of a private regular file; ValueError (without the token) otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)  # a symlink fails with ELOOP
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise ValueError("not private to this user (owner, or mode open to group or others)")
        data = os.read(fd, MAX_TOKEN_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_TOKEN_FILE_BYTES:
        raise ValueError("larger than %d bytes" % MAX_TOKEN_FILE_BYTES)
    if data.endswith(b"\n"):
        data = data[:-1]  # SCAN-TOKEN-2: at most one trailing newline
    try:
        token = data.decode("ascii")
    except UnicodeDecodeError:
        raise ValueError("not a valid token") from None
    if not valid_token(token):
        raise ValueError("not a valid token (16 to 512 printable characters)")
    return token


def file_signature(path):
    """What tells a rotated token file apart (SCAN-TOKEN-5): inode, size, modification time."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


class TokenSource(object):
    """The bearer token: fixed (moved off argv or environ) or a file re-read when it changes.

    SCAN-TOKEN-5: every request asks current(), which stats the file and
    re-reads it when it changed.  SCAN-TOKEN-6: a rotation that is not a
    valid private token is ignored, with one line per change of the file.
    SCAN-TOKEN-7: after a 401, reread() reads the file at once.
    """

    def __init__(self, token, path=None):
        self._token = token
        self.path = path
        self._lock = threading.Lock()
        self._signature = file_signature(path) if path else None
        self._rejected = None  # the signature of the last rotation refused, so it is said once

    def current(self):
        if self.path is None:
            return self._token
        with self._lock:
            signature = file_signature(self.path)
            if signature != self._signature and signature != self._rejected:
                self._load(signature)
            return self._token

    def reread(self, refused):
        """SCAN-TOKEN-7: a new valid token different from `refused`, or None."""
        if self.path is None:
            return None
        with self._lock:
            self._load(file_signature(self.path))
            return self._token if self._token != refused else None

    def _load(self, signature):
        try:
            token = read_token_file(self.path)
        except (OSError, ValueError):
            if signature != self._rejected:
                self._rejected = signature
                say("worker: token file rejected, keeping the current token")  # SCAN-TOKEN-6: once per change
            return
        self._token, self._signature, self._rejected = token, signature, None


def move_token_and_exec(token, argv, environ):
    """SCAN-TOKEN-4, D2: re-execute this process without the token in argv or the environment.

    The token goes into a pipe the new image inherits and reads at once; the
    pid stays the same (exec), so a supervisor and PID 1 see one process.
    Deleting it from os.environ would not do: /proc/<pid>/environ shows the
    environment the process started with.
    """
    kept, skip = [], False
    for item in argv:
        if skip:
            skip = False
        elif item == "--token":
            skip = True
        elif not item.startswith("--token="):
            kept.append(item)
    read_fd, write_fd = os.pipe()
    os.write(write_fd, token.encode("ascii"))  # at most 512 bytes: a pipe takes them without blocking
    os.close(write_fd)
    os.set_inheritable(read_fd, True)
    environment = dict((k, v) for k, v in environ.items() if k != TOKEN_ENV)
    node = os.path.abspath(__file__)
    os.execve(sys.executable, [sys.executable, node] + kept + ["--token-fd", str(read_fd)], environment)


def token_from_fd(fd):
    try:
        data = os.read(fd, MAX_TOKEN_CHARS + 1)
    finally:
        os.close(fd)
    token = data.decode("ascii", "replace")
    if not valid_token(token):
        raise UsageError("the token handed over is not a valid token")
    return token


# 6.5 HTTP exchanges ===========================================================
# A connection whose answer was read whole is kept for the next request: an
# idle worker's poll is a request, not a TLS handshake (SCAN-HTTP-7, D37).
# A JSON exchange is bounded as a whole by a watchdog that shuts the socket: a per-read timeout lets a server that drips
# a byte a second hold a slot for ever (SCAN-HTTP-3).  An upload is bounded by
# its progress instead: a bundle of a GiB on a slow link takes as long as it
# takes while its bytes keep moving, and ends when they stop (D27).  No proxy
# is ever used: the transport block is handed none (SCAN-CONFIG-5); http.client
# never follows a redirect, so a 3xx is an error answer (SCAN-HTTP-6).

CLAIM_PATH = "/api/v1/worker/claim"
ASSIGNMENT_PATH = "/api/v1/worker/assignments/%d"

Answer = collections.namedtuple("Answer", "status headers body")  # body: parsed JSON object, or None when empty


def shut(sock):
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except (OSError, ValueError):
            pass


def announced_length(response):
    value = (response.getheader("Content-Length") or "").strip()
    return int(value) if value and len(value) <= 19 and value.isdigit() else None


def read_bounded(response, limit, budget):
    """At most `limit` body bytes; more, or a body cut short, raises (SCAN-HTTP-4)."""
    declared = announced_length(response)
    if declared is not None and declared > limit:
        raise WorkerClientError("an answer larger than its bound")  # refused before its body is read
    data = read_at_most(response.read, limit + 1)
    if len(data) > limit:
        raise WorkerClientError("an answer larger than its bound")
    if STOP.should_abandon() or budget.expired() or (declared is not None and len(data) < declared):
        raise WorkerNetworkError("the answer ended early")  # a cut body is never taken for whole
    return data


def parse_object(data, empty=None):
    """SCAN-HTTP-4, SCAN-PEER-1: a JSON object, else WorkerClientError; an empty body is None, or `empty` the error.

    D24: read as json.loads() reads it (floats, any member order, unknown
    members), but for what the strict_json block refuses.
    """
    if not data and empty is not None:
        raise WorkerClientError(empty)
    return strict_object(data, "an answer") if data else None


def strict_object(data, what, error=WorkerClientError, canonical=False):
    """A JSON object from `data`; `error` naming `what` (never its bytes) otherwise.

    D24: floats allowed, as the upstream's json.loads() reads an answer;
    slot states are read the same way (they keep the assignment as the server
    wrote it).  With `canonical` the bytes must be exactly the object's
    canonical ASCII encoding: a runner root's documents, which only this file writes.
    """
    try:
        value = parse_canonical(bytes(data), ascii=True) if canonical else parse_lenient(data, floats=True)
    except JsonError:
        raise error(detail=what + (" is not strict canonical JSON" if canonical else " is not strict JSON")) from None
    if not isinstance(value, dict):
        raise error(detail=what + " is not a JSON object")
    return value


def retry_after_of(headers):
    """SCAN-BACKOFF-2: whole seconds or an HTTP-date within MAX_RETRY_AFTER_S; None otherwise."""
    value = (headers.get("Retry-After") or "").strip()
    seconds = header_int(value)  # D25: "+5" and "005" are 5, as int() reads them
    if seconds is not None:
        return seconds if MIN_RETRY_AFTER_S <= seconds <= MAX_RETRY_AFTER_S else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    ahead = when.timestamp() - time.time()
    return min(max(ahead, 0.0), float(MAX_RETRY_AFTER_S)) if ahead <= MAX_RETRY_AFTER_S else None


def error_from(response, budget):
    """SCAN-HTTP-5: an error answer's status and code; its body kept only for diagnostics."""
    body = b""
    try:
        declared = announced_length(response)
        if declared is None or declared <= MAX_ERROR_BODY_BYTES:
            body = response.read(MAX_ERROR_BODY_BYTES + 1)[:MAX_ERROR_BODY_BYTES]
    except Exception:
        body = b""  # D7: the status decides even when the body is unreadable
    code = "request_rejected"
    try:
        value = parse_lenient(body, floats=True)  # D24: an error body is JSON as json.loads reads it too
        if isinstance(value, dict) and isinstance(value.get("error"), dict):
            code = error_code(value["error"].get("code"))
    except JsonError:
        pass  # D7: a body that is not the error shape only leaves the default code
    headers = dict((k.title(), v) for k, v in response.getheaders())
    return WorkerHTTPError(response.status, code, retry_after_of(headers), response.getheader("Content-Type"), body)


class ScanApi(object):
    """The five calls of the scan server, each one bounded exchange; connections kept between them (D37)."""

    def __init__(self, config, tokens):
        self.origin = config.origin
        self.http_timeout_s = config.http_timeout_s
        self.tokens = tokens
        self.keeper = Keeper()  # D37: an idle worker's poll is a request on an open connection, not a handshake

    def _exchange(self, method, path, token, budget_s, body=None, upload=None, accept=(200,), wait_callback=None):
        """One request.  A JSON one (or a status read) has `budget_s` for all of it (SCAN-HTTP-3).

        An upload (D27) has `budget_s` to connect, then `budget_s` for each
        piece of its body (the socket's timeout: no piece accepted that long
        is a stall), then `budget_s` for the whole answer after its last byte.
        A JSON request sent on a kept connection the server had closed meanwhile
        (no answer byte) goes once more on a new one, within the same budget:
        each is idempotent (a claim's request id, a report's bytes, an event's
        sequence, a status read); an upload always opens its own (D37).
        """
        budget = Deadline(budget_s)
        for attempt in (1, 2):
            session = KeptExchange(self.origin + path, STOP, timeout_s=max(0.05, budget.remaining()),
                                   connect_deadline_s=budget.remaining(), budget=None if upload else budget,
                                   ssl_context_factory=tls_context, keeper=self.keeper)  # verified (SCAN-HTTP-1)
            response = None
            try:
                try:
                    # SCAN-HTTP-3: the whole, not each read (an upload's body: each piece, D27)
                    with Watchdog(budget, session.cut) if upload is None else contextlib.nullcontext():
                        session.open(fresh=upload is not None or attempt > 1)  # D27: connect within budget_s
                        conn = session.conn
                        conn.putrequest(method, path)  # adds Host and Accept-Encoding: identity (SCAN-HTTP-2)
                        conn.putheader("Authorization", "Bearer " + token)
                        if upload is not None:
                            upload(conn)  # SCAN-UPLOAD-1: its own headers, then the body, each piece within budget_s
                            budget = Deadline(budget_s)  # D27: the answer, whole, from the last byte on
                        elif body is not None:
                            conn.putheader("Content-Type", "application/json")
                            conn.putheader("Content-Length", str(len(body)))
                            conn.endheaders(body)
                        else:
                            conn.endheaders()
                    with Watchdog(budget, session.cut):
                        if wait_callback is not None:
                            wait_callback()
                        response = conn.getresponse()
                        if response.status in accept and 200 <= response.status < 300:
                            data = read_bounded(response, MAX_API_RESPONSE_BYTES, budget)
                            headers = dict((k.title(), v) for k, v in response.getheaders())
                            session.keep(response)
                            return Answer(response.status, headers, data)
                        raise error_from(response, budget)
                except (OSError, http.client.HTTPException, StopRequested) as exc:
                    if STOP.should_abandon():
                        raise StopRequested("stop requested") from None
                    if attempt == 1 and upload is None and session.stale(exc, response is not None):
                        continue  # D37: the server closed the kept connection first; nothing was answered
                    raise WorkerNetworkError(type(exc).__name__) from None  # SCAN-SECRET-2: no text kept
            finally:
                session.close()

    def call(self, method, path, budget_s=None, body=None, upload=None, accept=(200,), wait_callback=None):
        """One request; after a 401, one immediate retry when the token file holds a new token (SCAN-TOKEN-7)."""
        budget_s = self.http_timeout_s if budget_s is None else budget_s
        token = self.tokens.current()  # SCAN-TOKEN-5: a rotated file is used from this request on
        try:
            return self._exchange(method, path, token, budget_s, body, upload, accept, wait_callback)
        except WorkerHTTPError as exc:
            if exc.status != 401:
                raise
            fresh = self.tokens.reread(token)
            if fresh is None:
                raise  # SCAN-TOKEN-7: nothing new to try: the error delay, state untouched
            return self._exchange(method, path, fresh, budget_s, body, upload, accept, wait_callback)

    def claim(self, request_id, build):
        """SCAN-CLAIM-2: the claim, with the persisted request id."""
        return self.call("POST", CLAIM_PATH, body=canonical({"build": build, "request_id": request_id}),
                         accept=(200, 201, 204))

    def status(self, reservation_id):
        """SCAN-RECONCILE-1: the status document, a JSON object (D6: an empty body is refused)."""
        return parse_object(self.call("GET", ASSIGNMENT_PATH % reservation_id).body, "an empty status")

    def terminal(self, reservation_id, report_bytes):
        """SCAN-TERMINAL-1: the stored report's exact bytes (SCAN-TERMINAL-4)."""
        answer = self.call("POST", (ASSIGNMENT_PATH % reservation_id) + "/terminal", body=report_bytes)
        return parse_object(answer.body, "an empty receipt")

    def upload(self, reservation_id, fd, size, digest, on_sent):
        """SCAN-UPLOAD-1/2: PUT the bundle on `fd`, streamed; the send pass re-hashes (D14)."""
        def send(conn):
            conn.putheader("Content-Type", "application/octet-stream")
            conn.putheader("Content-Length", str(size))
            conn.putheader("X-Truf-Payload-SHA256", digest)
            conn.endheaders()
            os.lseek(fd, 0, os.SEEK_SET)
            hasher, left = hashlib.sha256(), size
            while left > 0:
                chunk = os.read(fd, min(UPLOAD_CHUNK_BYTES, left))
                if not chunk:
                    raise StorageFailure()  # the file shrank since the first pass
                hasher.update(chunk)
                left -= len(chunk)
                if left == 0 and hasher.hexdigest() != digest:
                    raise StorageFailure()  # D14: the last chunk is never sent under the wrong digest
                view = memoryview(chunk)
                for start in range(0, len(view), UPLOAD_PIECE_BYTES):  # D27: each within the socket's timeout
                    conn.send(view[start:start + UPLOAD_PIECE_BYTES])
        answer = self.call("PUT", (ASSIGNMENT_PATH % reservation_id) + "/bundle", upload=send, accept=(200, 201),
                           wait_callback=on_sent)
        return parse_object(answer.body, "an empty receipt")

    def progress(self, reservation_id, event_bytes, budget_s):
        """SCAN-PROGRESS-2: one event, bounded by PROGRESS_REQUEST_TIMEOUT_S and the pass's budget."""
        answer = self.call("POST", (ASSIGNMENT_PATH % reservation_id) + "/progress", budget_s=budget_s,
                           body=event_bytes)
        return parse_object(answer.body)


# 6.6 State on disk ============================================================
# A slot's whole memory is one file, written atomically (temporary name,
# fsync, rename, directory fsync: the atomic_write block), checked against the
# schema before every save so an invalid state is never written
# (SCAN-STATE-2/3), and read back strictly.  A file the worker cannot read is
# left exactly as it is (SCAN-STATE-5): deleting it would abandon a live
# reservation.

PHASE_KEYS = {  # SCAN-STATE-3: phase -> (required, optional)
    "claiming": ({"schema", "phase", "request_id"}, set()),
    "assigned": ({"schema", "phase", "assignment", "runner", "retained_work"}, set()),
    "bundle_ready": ({"schema", "phase", "assignment", "runner", "retained_work", "bundle"}, {"transport_conflict"}),
    "terminal_pending": ({"schema", "phase", "assignment", "runner", "retained_work", "terminal"},
                         {"bundle", "transport_conflict"}),
    "awaiting_resolution": ({"schema", "phase", "assignment", "runner", "retained_work", "stale"},
                            {"bundle", "terminal", "transport_conflict"}),
}
LEGACY_KEYS = {  # SCAN-STATE-7: the upstream's schema-less states (plus an optional bundle)
    "claiming": {"phase", "request_id"},
    "assigned": {"phase", "assignment"},
    "bundle_ready": {"phase", "assignment"},
    "terminal_pending": {"phase", "assignment", "terminal"},
    "awaiting_resolution": {"phase", "assignment", "stale"},
}
RUNNER_KEYS = frozenset([
    "generation", "input_sha256", "root_name", "input_ref", "events_ref", "start_ref", "terminal_ref", "bundle_ref",
    "scan_started_at", "scan_deadline_at", "watchdog_deadline_at", "operation", "timeout_phase", "attempt",
    "status", "identity", "last_event", "terminal_sha256"])
RUNNER_STATUSES = ("created", "running", "stopping", "exited", "timed_out", "fenced")


def ensure_private_dir(path, error=StartupError, new=False):
    """SCAN-STATE-1, -6: a real directory, ours, mode 0700, never a symlink; `error` otherwise.

    Made if missing, and every directory made on the way is 0700 too
    (makedirs() gives its intermediate directories the umask's mode).  With
    `new` it must not exist yet (FileExistsError): a runner root is made fresh,
    and a leftover of the same name is someone's evidence, not ours to reuse.
    """
    missing, head = [], os.path.abspath(path)
    while (not missing) if new else not os.path.lexists(head):  # with `new`, the path alone
        missing.append(head)
        head = os.path.dirname(head)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            if new:
                raise
            # made meanwhile by another worker: lstat below judges it
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise error(detail="a directory that is a symlink, not a directory, or not ours")
    if stat.S_IMODE(info.st_mode) != 0o700:  # a umask can only remove bits; put exactly 0700 back
        os.chmod(path, 0o700)


def fsync_dir(directory):
    """fsync a directory so a create, link or rename in it survives a crash (SCAN-STATE-2)."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):  # a filesystem that cannot sync a directory
            raise
    finally:
        os.close(fd)


def remove_file(path):
    """Remove a file (never through a symlink's target: unlink removes the link itself); gone is fine."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    fsync_dir(os.path.dirname(path))
    return True


def open_regular(path, error, what):
    """(fd, fstat) of a regular file, opened for reading without following a symlink; None when absent.

    `error` naming `what` for a symlink or anything but a regular file
    (SCAN-STATE-6: a link planted in a file's place is never read through).
    O_NONBLOCK: a FIFO in a file's place would otherwise block the open for ever.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(detail=what + " is a symlink") from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise error(detail=what + " is not a regular file")
    return fd, info


def read_private(path, limit, error=WorkerClientError, what="a state file", owned=True):
    """SCAN-STATE-5/6: the bytes of a regular file, at most `limit`; None when absent; `error` naming `what` else.

    With `owned` (the state tree's files) it must be ours and private too; a
    runner root's files are judged by their contents instead (section 6.7).
    """
    opened = open_regular(path, error, what)
    if opened is None:
        return None
    fd, info = opened
    try:
        if owned and (info.st_uid != os.geteuid() or info.st_mode & 0o077):
            raise error(detail=what + " is not private to this user")
        data = read_at_most(fd, limit + 1) if info.st_size <= limit else None
    finally:
        os.close(fd)
    if data is None or len(data) > limit:  # too large, or grew while read
        raise error(detail=what + " is larger than its bound")
    return data


def read_at_most(source, limit):
    """At most `limit` bytes of a file descriptor (from its position on) or a read(size) callable, by IO_CHUNK_BYTES."""
    read = source if callable(source) else (lambda size: os.read(source, size))
    chunks, count = [], 0
    while count < limit:
        chunk = read(min(IO_CHUNK_BYTES, limit - count))
        if not chunk:
            break
        chunks.append(chunk)
        count += len(chunk)
    return b"".join(chunks)


def read_private_json(path, limit):
    data = read_private(path, limit)
    if data is None:
        return None
    return strict_object(data, "a state file")


def write_private_json(path, value, limit):
    """SCAN-STATE-2: canonical bytes, whole or not at all, mode 0600."""
    data = canonical(value)
    if len(data) > limit:
        raise WorkerClientError("a document larger than its bound")
    atomic_write(path, data, 0o600)


def identity_problem(value):
    """None when `value` is a process identity as SCAN-RUNNER-2 spells it, else what is wrong."""
    try:
        check_process_identity(value)
    except RunnerProtocolError as exc:
        return exc.detail
    return None


def runner_problem(runner, slot_id, reservation_id):
    """SCAN-RUNNER-2: the runner record's exact members and forms; None when it is good."""
    if not isinstance(runner, dict) or set(runner) != RUNNER_KEYS:
        return "runner members"
    if not root_binds(runner["root_name"], slot_id, reservation_id, runner["generation"]):
        return "runner root conflicts with the slot"
    root = runner["root_name"]
    refs = {"input_ref": "input.json", "events_ref": "events.jsonl", "start_ref": "start.json",
            "terminal_ref": "terminal.json"}
    if any(runner[key] != root + "/" + name for key, name in refs.items()):
        return "runner references"
    if not is_digest(runner["input_sha256"]):
        return "runner input digest"
    if runner["bundle_ref"] is not None and not (isinstance(runner["bundle_ref"], str)
                                                 and runner["bundle_ref"].startswith(root + "/bundle/ready/")
                                                 and ".." not in runner["bundle_ref"].split("/")
                                                 and "\\" not in runner["bundle_ref"]):
        return "runner bundle reference"
    started, deadline = parse_instant(runner["scan_started_at"]), parse_instant(runner["scan_deadline_at"])
    if started is None or deadline is None or parse_instant(runner["watchdog_deadline_at"]) is None \
            or deadline <= started:
        return "runner instants"
    if runner["operation"] == "execute":
        if runner["timeout_phase"] is not None:
            return "runner timeout phase"
    elif runner["operation"] == "timeout_bundle":
        if runner["timeout_phase"] not in RUNNER_PHASES:
            return "runner timeout phase"
    else:
        return "runner operation"
    if not (is_int(runner["attempt"]) and 1 <= runner["attempt"] <= RUNNER_MAX_ATTEMPTS):
        return "runner attempt"
    if runner["status"] not in RUNNER_STATUSES:
        return "runner status"
    identity = runner["identity"]
    if identity is not None:
        if not isinstance(identity, dict) or set(identity) != {"host", "payload", "job_membership_verified"} \
                or not isinstance(identity["job_membership_verified"], bool) \
                or identity_problem(identity["host"]) or identity_problem(identity["payload"]):
            return "runner identity"
    if runner["last_event"] is not None and not isinstance(runner["last_event"], dict):
        return "runner last event"
    if runner["terminal_sha256"] is not None and not is_digest(runner["terminal_sha256"]):
        return "runner terminal digest"
    return None


def reservation_of(assignment):
    """(reservation_id, bundle_id, scan_event_id) of an assignment; WorkerClientError when unusable (D5).

    The reservation id as the upstream's int() reads it (D25: 12, 12.0 and
    "12" are one reservation; 12.5 is none).
    """
    reservation = assignment.get("reservation") if isinstance(assignment, dict) else None
    if not isinstance(reservation, dict):
        raise WorkerClientError("an assignment without a reservation")
    rid, bundle_id, event_id = (upstream_int(reservation.get("reservation_id")), reservation.get("bundle_id"),
                                reservation.get("scan_event_id"))
    if not (is_reservation_id(rid) and is_long_id(bundle_id) and is_long_id(event_id)):
        raise WorkerClientError("an assignment without a usable reservation identity")
    return rid, bundle_id, event_id


def state_problem(state, slot_id):
    """SCAN-STATE-3: None when `state` is a valid schema-2 slot state for this slot, else what is wrong."""
    if not isinstance(state, dict) or state.get("schema") != SLOT_STATE_SCHEMA or not is_int(state.get("schema")):
        return "schema"
    phase = state.get("phase")
    if phase not in PHASE_KEYS:
        return "phase"
    required, optional = PHASE_KEYS[phase]
    if not required <= set(state) or set(state) - required - optional:
        return "members"
    if phase == "claiming":
        ok = isinstance(state["request_id"], str) and REQUEST_ID_RE.fullmatch(state["request_id"])
        return None if ok else "request_id"
    try:
        reservation_id = reservation_of(state["assignment"])[0]
    except WorkerClientError:
        return "assignment"
    retained = state["retained_work"]
    if not isinstance(retained, list) or len(retained) > MAX_RETAINED_WORK or len(set(map(str, retained))) != len(
            retained) or not all(isinstance(r, str) and RETAINED_RE.fullmatch(r) for r in retained):
        return "retained_work"
    if state["runner"] is not None:
        problem = runner_problem(state["runner"], slot_id, reservation_id)
        if problem:
            return problem
    if "bundle" in state and not isinstance(state["bundle"], dict):
        return "bundle"
    if "terminal" in state and terminal_problem(state["terminal"]):
        return "terminal"
    if "stale" in state:
        stale = state["stale"]
        if not isinstance(stale, dict) or set(stale) != {"status_code", "code"} or not is_int(stale["status_code"]) \
                or error_code(stale["code"]) != stale["code"]:
            return "stale"
    if "transport_conflict" in state:
        conflict = state["transport_conflict"]
        if not isinstance(conflict, dict) or set(conflict) != {"status_code", "code", "attempts"} \
                or conflict["status_code"] != 409 or error_code(conflict["code"]) != conflict["code"] \
                or not is_int(conflict["attempts"]) or not 1 <= conflict["attempts"] <= 2:
            return "transport_conflict"
    return None


def migrate_legacy(state):
    """SCAN-STATE-7: the upstream's schema-less state as schema 2; None when it is not one."""
    phase = state.get("phase")
    if "schema" in state or phase not in LEGACY_KEYS:
        return None
    expected = LEGACY_KEYS[phase]
    if not expected <= set(state) or set(state) - expected - {"bundle"}:
        return None
    migrated = dict(state, schema=SLOT_STATE_SCHEMA)
    if phase != "claiming":
        migrated.setdefault("runner", None)
        migrated.setdefault("retained_work", [])
    if phase == "bundle_ready":
        migrated.setdefault("bundle", {})
    return migrated


class SlotFiles(object):
    """A slot's state file and its stale record."""

    def __init__(self, state_dir, slot_id):
        self.slot_id = slot_id
        self.path = os.path.join(state_dir, "slot-%d.json" % slot_id)
        self.stale_path = os.path.join(state_dir, "slot-%d-stale.json" % slot_id)

    def exists(self):
        return os.path.lexists(self.path)

    def load(self):
        """The slot's state, or None; WorkerClientError for a file it cannot use (left untouched)."""
        state = read_private_json(self.path, MAX_PENDING_BYTES)
        if state is None:
            return None
        if "schema" not in state:
            migrated = migrate_legacy(state)
            if migrated is None:
                raise WorkerClientError("a legacy state of an unknown shape")
            if state_problem(migrated, self.slot_id):
                raise WorkerClientError("a legacy state that does not migrate")
            self.save(migrated)  # SCAN-STATE-7: the migration is persisted on its first load
            return migrated
        if state_problem(state, self.slot_id):
            raise WorkerClientError("a state that breaks the schema")  # SCAN-STATE-5: kept as it is
        return state

    def save(self, state):
        problem = state_problem(state, self.slot_id)
        if problem:  # SCAN-STATE-3: an invalid state is never written
            raise WorkerClientError("refusing to save a state that breaks the schema (%s)" % problem)
        write_private_json(self.path, state, MAX_PENDING_BYTES)

    def delete(self):
        remove_file(self.path)

    def stale_record(self):
        try:
            return read_private_json(self.stale_path, MAX_PENDING_BYTES)
        except WorkerClientError:
            return None  # an unreadable record matches nothing; the next stale event replaces it

    def write_stale(self, record):
        write_private_json(self.stale_path, record, MAX_PENDING_BYTES)

    def delete_stale(self):
        remove_file(self.stale_path)


def stale_record_for(assignment, status_code, code):
    """SCAN-RECONCILE-9: the record written before a state is deleted as stale."""
    rid, bundle_id, event_id = reservation_of(assignment)
    return {"schema": STALE_RECORD_SCHEMA, "outcome": "discarded_stale", "reservation_id": rid,
            "bundle_id": bundle_id, "scan_event_id": event_id, "status_code": status_code,
            "code": error_code(code),  # D9: recorded_at keeps the upstream's `+00:00` spelling
            "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")}


def stale_matches(record, assignment):
    if not isinstance(record, dict):
        return False
    rid, bundle_id, event_id = reservation_of(assignment)
    return (record.get("schema") == STALE_RECORD_SCHEMA and record.get("outcome") == "discarded_stale"
            and record.get("reservation_id") == rid and record.get("bundle_id") == bundle_id
            and record.get("scan_event_id") == event_id)


# 6.7 Child framing ============================================================
# The runner protocol: the files of a runner root, both sides of them.
# The worker and its runner share nothing but this directory; every document
# in it is canonical JSON, read back strictly and bounded, so a runner that
# misbehaves (or a root someone edited) is refused, never believed.

_RUNNER_DECIMAL_RE = re.compile(r"(0|[1-9][0-9]*)")
# The instants the worker reads: seconds, an optional 1..6 digit fraction, Z or +00:00.
_RUNNER_INSTANT_RE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?(?:Z|\+00:00)")

ROOT_NAME_RE = re.compile(r"worker-assignment-(0|[1-9][0-9]*)-([1-9][0-9]*)-([a-f0-9]{32})")

BUNDLE_STATUSES = ("completed", "timed_out")
RUNNER_OPERATIONS = ("execute", "timeout_bundle")
RUNNER_DECISIONS = ("completed", "timed_out", "fenced")

_RUNNER_INPUT_MEMBERS = frozenset((
    "schema", "generation", "slot_id", "reservation_id", "bundle_id", "scan_event_id",
    "execution_snapshot_sha256", "operation", "timeout_phase", "attempt", "scan_started_at",
    "scan_deadline_at", "watchdog_deadline_at", "declared_bundle_bytes", "targets"))
_RUNNER_TARGET_MEMBERS = frozenset(("name", "size", "sha256", "url"))
_RUNNER_IDENTITY_MEMBERS = frozenset(("pid", "creation_time", "executable"))
_RUNNER_GATE_MEMBERS = frozenset(("schema", "generation", "input_sha256", "identity"))
_RUNNER_EVENT_MEMBERS = frozenset(("sequence", "generation", "phase", "progress", "timestamp", "phase_started_at"))
_RUNNER_TERMINAL_COMMON = frozenset(("schema", "decision", "decided_at", "generation", "input_sha256"))
_RUNNER_OUTCOME_MEMBERS = frozenset(("status", "error", "final_phase", "identity", "last_event_sequence", "bundle"))
_RUNNER_BINDING_MEMBERS = frozenset(("slot_id", "reservation_id", "bundle_id", "scan_event_id",
                                     "execution_snapshot_sha256"))
_RUNNER_OUTCOME_BUNDLE_MEMBERS = frozenset(("ready_relative_path", "bytes", "payload_sha256", "events_sha256"))
_BUNDLE_HEADER_MEMBERS = frozenset(("format", "reservation_id", "bundle_id", "scan_event_id",
                                    "execution_snapshot_sha256", "slot_id", "generation", "status", "timeout_phase"))
_BUNDLE_TRAILER_MEMBERS = frozenset(("type", "event_count", "events_sha256"))
_BUNDLE_TARGET_DONE_MEMBERS = frozenset(("type", "target", "bytes", "sha256"))


# Times ------------------------------------------------------------------------

def instant_text(epoch):
    """An instant as the node writes it: milliseconds and Z (2026-01-01T00:00:00.000Z)."""
    moment = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (moment.microsecond // 1000)


def utc_now_text():
    return instant_text(time.time())


def parse_instant(text):
    """Epoch seconds of an instant the contract accepts, else None.

    YYYY-MM-DDTHH:MM:SS, an optional fraction of 1 to 6 digits, then Z or
    +00:00, naming a real calendar instant (no 24:00, no leap second, no
    February 30th).  Stricter than the utc_timestamp block on purpose.
    """
    if not isinstance(text, str):
        return None
    match = _RUNNER_INSTANT_RE.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(group) for group in match.groups()[:6])
    fraction = match.group(7) or ""
    try:
        moment = datetime.datetime(year, month, day, hour, minute, second, tzinfo=datetime.timezone.utc)
    except ValueError:  # not a calendar instant
        return None
    whole = (moment - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)).total_seconds()
    return whole + (int(fraction) / (10 ** len(fraction)) if fraction else 0.0)


# Small checks -----------------------------------------------------------------

def require(condition, detail):
    if not condition:
        raise RunnerProtocolError(detail=detail)


def require_members(value, members, detail):
    require(isinstance(value, dict) and frozenset(value) == members, detail)


def binding_of(document):
    """The members of a runner input, an outcome or a bundle header that name the slot's assignment."""
    return {name: document[name] for name in _RUNNER_BINDING_MEMBERS}


def bundle_header(binding, generation):
    """SCAN-BUNDLE-1, -2: the header of `generation`'s bundle (its runner input, or its record in a slot state)."""
    timed_out = generation["operation"] == "timeout_bundle"
    return dict(binding, format=BUNDLE_FORMAT, generation=generation["generation"],
                status="timed_out" if timed_out else "completed",
                timeout_phase=generation["timeout_phase"] if timed_out else None)


def check_binding(value, detail):
    """{slot_id, reservation_id, bundle_id, scan_event_id, execution_snapshot_sha256} (SCAN-RUNNER-6)."""
    require_members(value, _RUNNER_BINDING_MEMBERS, detail)
    require(is_int_in(value["slot_id"], 0, MAX_SLOT_ID), detail + ".slot_id")
    require(is_int_in(value["reservation_id"], 1, MAX_SAFE_INTEGER), detail + ".reservation_id")
    require(is_text(value["bundle_id"], LONG_ID_RE), detail + ".bundle_id")
    require(is_text(value["scan_event_id"], LONG_ID_RE), detail + ".scan_event_id")
    require(is_text(value["execution_snapshot_sha256"], DIGEST_RE),
                    detail + ".execution_snapshot_sha256")


def check_process_identity(value, detail="identity"):
    """Exactly {pid, creation_time, executable} as SCAN-RUNNER-2 spells them; RunnerProtocolError otherwise."""
    require_members(value, _RUNNER_IDENTITY_MEMBERS, detail)
    require(is_int_in(value["pid"], 1, MAX_SAFE_INTEGER), detail + ".pid")
    require(is_text(value["creation_time"], _RUNNER_DECIMAL_RE), detail + ".creation_time")
    executable = value["executable"]
    require(isinstance(executable, str) and 0 < len(executable) <= MAX_EXECUTABLE_CHARS,
                    detail + ".executable")


def validate_runner_input(value):
    """Check a runner input (the input document of section The runner); RunnerProtocolError naming the member."""
    require_members(value, _RUNNER_INPUT_MEMBERS, "runner input members")
    require(value["schema"] == 1 and is_int(value["schema"]), "runner input schema")
    require(is_text(value["generation"], REQUEST_ID_RE), "runner input generation")
    check_binding(binding_of(value), "runner input")
    require(value["operation"] in RUNNER_OPERATIONS, "runner input operation")
    if value["operation"] == "execute":
        require(value["timeout_phase"] is None, "runner input timeout_phase")
    else:  # SCAN-RUNNER-8: a timeout bundle names the phase the scan reached
        require(value["timeout_phase"] in RUNNER_PHASES, "runner input timeout_phase")
    require(is_int_in(value["attempt"], 1, 3), "runner input attempt")
    for name in ("scan_started_at", "scan_deadline_at", "watchdog_deadline_at"):
        require(parse_instant(value[name]) is not None, "runner input " + name)
    require(parse_instant(value["scan_deadline_at"]) > parse_instant(value["scan_started_at"]),
                    "runner input scan_deadline_at")
    require(is_int_in(value["declared_bundle_bytes"], 1, MAX_SAFE_INTEGER),
                    "runner input declared_bundle_bytes")
    targets = value["targets"]
    require(isinstance(targets, list) and 1 <= len(targets) <= MAX_TARGETS, "runner input targets")
    names = set()
    for target in targets:
        require_members(target, _RUNNER_TARGET_MEMBERS, "runner input targets[] members")
        require(is_text(target["name"], TARGET_NAME_RE) and target["name"] not in names,
                        "runner input targets[].name")
        names.add(target["name"])
        require(is_int_in(target["size"], 0, MAX_TARGET_BYTES), "runner input targets[].size")
        require(is_text(target["sha256"], DIGEST_RE), "runner input targets[].sha256")
        try:
            https = isinstance(target["url"], str) and split_url(target["url"]).scheme == "https"
        except ValueError:
            https = False
        require(https, "runner input targets[].url")  # never the URL itself: it is a credential


def check_runner_gate(value, detail="start gate"):
    """owner.json and start.json: exactly {schema: 1, generation, input_sha256, identity}."""
    require_members(value, _RUNNER_GATE_MEMBERS, detail + " members")
    require(value["schema"] == 1 and is_int(value["schema"]), detail + " schema")
    require(is_text(value["generation"], REQUEST_ID_RE), detail + " generation")
    require(is_text(value["input_sha256"], DIGEST_RE), detail + " input_sha256")
    check_process_identity(value["identity"], detail + " identity")


def check_runner_event(value, generation):
    """One runner event (a line of events.jsonl) of `generation`; the sequence is the caller's check."""
    require_members(value, _RUNNER_EVENT_MEMBERS, "runner event members")
    require(is_int_in(value["sequence"], 1, MAX_SAFE_INTEGER), "runner event sequence")
    require(value["generation"] == generation, "runner event generation")
    require(value["phase"] in RUNNER_PHASES, "runner event phase")
    require(isinstance(value["progress"], dict), "runner event progress")
    require(parse_instant(value["timestamp"]) is not None, "runner event timestamp")
    require(parse_instant(value["phase_started_at"]) is not None, "runner event phase_started_at")


def check_runner_terminal(value):
    """A terminal.json document (SCAN-RUNNER-5): exact members for its decision; RunnerProtocolError otherwise."""
    require(isinstance(value, dict) and "decision" in value, "runner terminal decision")
    decision = value["decision"]
    require(decision in RUNNER_DECISIONS, "runner terminal decision")
    last = "outcome" if decision == "completed" else "reason"
    require_members(value, _RUNNER_TERMINAL_COMMON | frozenset((last,)), "runner terminal members")
    require(value["schema"] == 1 and is_int(value["schema"]), "runner terminal schema")
    require(parse_instant(value["decided_at"]) is not None, "runner terminal decided_at")
    require(is_text(value["generation"], REQUEST_ID_RE), "runner terminal generation")
    require(is_text(value["input_sha256"], DIGEST_RE), "runner terminal input_sha256")
    if decision != "completed":
        require(value["reason"] in RUNNER_TERMINAL_REASONS, "runner terminal reason")
        return
    outcome = value["outcome"]
    require_members(outcome, _RUNNER_OUTCOME_MEMBERS, "runner outcome members")
    require(outcome["status"] in ("succeeded", "failed"), "runner outcome status")
    error = outcome["error"]
    require(error is None or (isinstance(error, dict) and frozenset(error) == frozenset(("code",))
                                      and is_text(error["code"], ERROR_CODE_RE)),
                    "runner outcome error")
    require(outcome["final_phase"] in RUNNER_PHASES, "runner outcome final_phase")
    check_binding(outcome["identity"], "runner outcome identity")
    require(is_int_in(outcome["last_event_sequence"], 0, MAX_SAFE_INTEGER),
                    "runner outcome last_event_sequence")
    bundle = outcome["bundle"]
    if outcome["status"] == "failed":
        require(bundle is None, "runner outcome bundle")  # a failed outcome has no bundle
        return
    require(error is None, "runner outcome error")  # a success with an error code is not a success
    require_members(bundle, _RUNNER_OUTCOME_BUNDLE_MEMBERS, "runner outcome bundle")
    require(bundle["ready_relative_path"] == "ready/%s.jsonl" % outcome["identity"]["bundle_id"],
                    "runner outcome bundle.ready_relative_path")
    require(is_int_in(bundle["bytes"], 1, MAX_SAFE_INTEGER), "runner outcome bundle.bytes")
    require(is_text(bundle["payload_sha256"], DIGEST_RE),
                    "runner outcome bundle.payload_sha256")
    require(is_text(bundle["events_sha256"], DIGEST_RE),
                    "runner outcome bundle.events_sha256")


# Files ------------------------------------------------------------------------

def runner_root_name(slot_id, reservation_id, generation):
    """worker-assignment-<slot>-<reservation_id>-<generation>; RunnerProtocolError for values that cannot name one."""
    require(is_int_in(slot_id, 0, MAX_SLOT_ID), "runner root slot")
    require(is_int_in(reservation_id, 1, MAX_SAFE_INTEGER), "runner root reservation")
    require(is_text(generation, REQUEST_ID_RE), "runner root generation")
    return "worker-assignment-%d-%d-%s" % (slot_id, reservation_id, generation)


def root_binds(name, slot_id, reservation_id, generation):
    """Whether `name` is the runner root of this slot, reservation and generation, and nothing else."""
    match = ROOT_NAME_RE.fullmatch(name) if isinstance(name, str) else None
    return match is not None and match.groups() == (str(slot_id), str(reservation_id), generation)


class RunnerPaths(object):
    """The fixed names inside one runner root (section The runner)."""

    def __init__(self, root):
        self.root = root
        self.name = os.path.basename(os.path.normpath(root))
        self.input = os.path.join(root, "input.json")
        self.owner = os.path.join(root, "owner.json")
        self.start = os.path.join(root, "start.json")
        self.events = os.path.join(root, "events.jsonl")
        self.terminal = os.path.join(root, "terminal.json")
        self.bundle = os.path.join(root, "bundle")
        self.bundle_tmp = os.path.join(self.bundle, "tmp")
        self.bundle_ready = os.path.join(self.bundle, "ready")

    def ready_bundle(self, bundle_id):
        """<root>/bundle/ready/<bundle_id>.jsonl: where a committed bundle waits for adoption."""
        return os.path.join(self.bundle_ready, "%s.jsonl" % bundle_id)

    def tmp_bundle(self, bundle_id, generation):
        return os.path.join(self.bundle_tmp, "%s.%s.part" % (bundle_id, generation))


def write_fully(fd, data):
    """Every byte with os.write, or the OSError: a disk that fails fails the write (the block's write_all,
    for output lines, swallows it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_new_private(path, data):
    """Create `path` (never an existing file, never through a symlink), 0600, with `data`, durably.

    O_EXCL|O_NOFOLLOW: a planted file or link makes this fail instead of
    writing through it (SCAN-STATE-6).  A failure removes what was created.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o600)
    try:
        try:
            write_fully(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise
    fsync_dir(os.path.dirname(os.path.abspath(path)))


def create_runner_root(work_root, root_name, runner_input):
    """Make a runner root with its input (SCAN-STATE-4: before the spawn); (root path, input digest).

    The input is checked first, so the worker never writes one its runner
    would refuse; the root must be new (ensure_private_dir's `new`).
    """
    validate_runner_input(runner_input)
    require(root_binds(root_name, runner_input["slot_id"], runner_input["reservation_id"], runner_input["generation"]),
            "runner root name binding")
    data = canonical_bytes(runner_input, ascii=True)
    require(len(data) <= MAX_RUNNER_INPUT_BYTES, "runner input size")
    root = os.path.join(work_root, root_name)
    paths = RunnerPaths(root)
    ensure_private_dir(root, RunnerProtocolError, new=True)
    try:
        for folder in (paths.bundle, paths.bundle_tmp, paths.bundle_ready):
            ensure_private_dir(folder, RunnerProtocolError, new=True)
        write_new_private(paths.input, data)
        fsync_dir(work_root)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)  # never follows a link: only what this call made goes
        raise
    return root, sha256_hex(data)


def load_runner_input(paths):
    """(input, digest) of input.json, checked; RunnerProtocolError when absent or malformed."""
    data = read_private(paths.input, MAX_RUNNER_INPUT_BYTES, RunnerProtocolError, "runner input", owned=False)
    require(data is not None, "runner input is missing")
    value = strict_object(data, "runner input", RunnerProtocolError, canonical=True)
    validate_runner_input(value)
    return value, sha256_hex(data)


def load_runner_gate(path, detail="start gate"):
    """owner.json or start.json, checked; None when absent."""
    data = read_private(path, MAX_RUNNER_DOC_BYTES, RunnerProtocolError, detail, owned=False)
    if data is None:
        return None
    value = strict_object(data, detail, RunnerProtocolError, canonical=True)
    check_runner_gate(value, detail)
    return value


# Process identity -------------------------------------------------------------

def read_proc_stat(pid):
    """(state letter, starttime text) of /proc/<pid>/stat; OSError as the kernel gives it."""
    with open("/proc/%d/stat" % pid, "rb") as handle:
        text = handle.read().decode("ascii", "replace")
    # The command name (field 2) may hold spaces and ")": fields are counted after the LAST ")".
    fields = text[text.rindex(")") + 1:].split()
    return fields[0], fields[19]  # field 3 (state) and field 22 (starttime, clock ticks after boot)


def process_identity(pid):
    """{pid, creation_time, executable} of a live process (SCAN-RUNNER-2); None when it is gone.

    A permission error propagates: "cannot tell" is not "gone".
    """
    try:
        state, starttime = read_proc_stat(pid)
        if state == "Z":  # a zombie has no executable: it runs nothing any more
            return None
        executable = os.readlink("/proc/%d/exe" % pid)
    except (FileNotFoundError, ProcessLookupError):
        return None
    except (ValueError, IndexError):  # a stat line we cannot read
        return None
    return {"pid": pid, "creation_time": starttime, "executable": executable}


def identity_state(identity):
    """"alive", "dead", "reused" or "unknown" for a recorded identity (SCAN-RUNNER-9).

    dead: no /proc entry, or a zombie of that start time (it runs nothing and
    its pid is not free until its parent reaps it); reused: the pid runs a
    process with another start time or executable, someone else's, never to be
    signalled; unknown: /proc would not say (permissions).
    """
    pid = identity["pid"]
    try:
        state, starttime = read_proc_stat(pid)
    except (FileNotFoundError, ProcessLookupError):
        return "dead"
    except (PermissionError, ValueError, IndexError):
        return "unknown"
    except OSError as exc:
        return "dead" if exc.errno == errno.ESRCH else "unknown"
    if starttime != identity["creation_time"]:
        return "reused"
    if state == "Z":
        return "dead"
    try:
        executable = os.readlink("/proc/%d/exe" % pid)
    except (FileNotFoundError, ProcessLookupError):
        return "dead"  # exited between the two reads
    except OSError:  # EACCES/EPERM: another user's process, or ptrace rules
        return "unknown"
    if executable != identity["executable"]:
        return "reused"
    return "alive"


def reap_child(pid):
    """Reap `pid` when it is our child and has exited; True when it was ours and is now gone."""
    try:
        done, _status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False  # not our child (or already reaped): its parent reaps it
    return done == pid


def stop_exact_identity(identity, timeout_s):
    """SIGKILL the runner's process group only if it is still exactly `identity`; "dead" or "unknown".

    Never on a pid alone (SCAN-RUNNER-9): the identity is checked, then (when
    the kernel has pidfds) a pidfd is opened and the identity checked AGAIN, so
    the process the pidfd holds is the recorded one.  The pid cannot be given
    to another process while that one lives, so the killpg() that follows hits
    the runner's group (the runner leads its group: start_new_session).

    Remaining race: if the runner exits, is reaped by someone else (init, once
    the worker that spawned it is gone) and its pid is handed to a new group
    leader, all in the instant between the re-check and killpg(), the signal
    reaches that group.  Without pidfd_open (kernel < 5.3) the same window
    exists, and the wait polls /proc instead.  A pid of ours cannot be reused
    before we reap it, so a runner of this worker's life has no such window.
    """
    state = identity_state(identity)
    pid = identity["pid"]
    if state in ("dead", "reused"):
        reap_child(pid)
        return "dead"
    if state != "alive":
        return "unknown"
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            reap_child(pid)
            return "dead"
        except OSError:
            pidfd = None  # ENOSYS (an older kernel) or a seccomp filter: the /proc way below
    try:
        state = identity_state(identity)  # re-checked once the pidfd pins the process
        if state in ("dead", "reused"):
            reap_child(pid)
            return "dead"
        if state != "alive":
            return "unknown"
        try:
            os.killpg(pid, signal.SIGKILL)  # SCAN-STOP-4: the whole group, so no grandchild outlives it
        except ProcessLookupError:  # it leads no group any more: signal the process itself
            try:
                if pidfd is not None and hasattr(signal, "pidfd_send_signal"):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # already gone
            except OSError:
                return "unknown"
        except OSError:  # EPERM: not ours to signal
            return "unknown"
        if wait_gone(identity, pidfd, timeout_s):
            return "dead"
        return "unknown"
    finally:
        if pidfd is not None:
            os.close(pidfd)


def wait_gone(identity, pidfd, timeout_s):
    """Wait at most `timeout_s` for the process to exit (reaping it when ours); True when it did."""
    pid = identity["pid"]
    deadline = Deadline(timeout_s)
    poller = None
    if pidfd is not None:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
    while True:
        if reap_child(pid):
            return True
        if poller is not None:
            if poller.poll(0):  # readable: the process has exited (a zombie at most)
                reap_child(pid)
                return True
        elif identity_state(identity) in ("dead", "reused"):
            reap_child(pid)
            return True
        if deadline.expired():
            return False
        wait = min(RUNNER_REAP_POLL_S if poller is None else 0.05, deadline.remaining())
        if poller is not None:
            poller.poll(max(1, int(wait * 1000)))
        else:
            time.sleep(wait)


# Gate and owner ---------------------------------------------------------------

def gate_document(generation, input_sha256, identity):
    document = {"schema": 1, "generation": generation, "input_sha256": input_sha256, "identity": identity}
    check_runner_gate(document)
    return canonical_bytes(document, ascii=True)


def write_whole(path, data):
    """D36: `path` replaced whole (a reader sees the old file or all of the new), 0600, with no fsync.

    For files whose durability protects nothing a restart reads: the owner and
    gate files name a live process, and after a power loss no runner is alive
    for them to name; the runners' code (D34) is written again by every life.
    """
    atomic_write(path, data, durable=False)


def write_owner(paths, generation, input_sha256, identity):
    """owner.json: whose root this is (SCAN-RUNNER-2: after the identity is persisted, before the gate)."""
    write_whole(paths.owner, gate_document(generation, input_sha256, identity))


def publish_start_gate(paths, generation, input_sha256, identity):
    """start.json, last: from now on the runner may work (SCAN-RUNNER-3)."""
    write_whole(paths.start, gate_document(generation, input_sha256, identity))


# Events -----------------------------------------------------------------------

def open_events(paths):
    """events.jsonl for appending (the runner's side); created 0600, never through a link."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    return os.open(paths.events, flags, 0o600)


def append_event(fd, event):
    """One canonical line, written with one write where the kernel allows (SCAN-STATE-2).

    D36: not fsynced here; the runner fsyncs the file once, before its terminal,
    which is the only moment a restart depends on the events being whole.
    """
    line = canonical_bytes(event, ascii=True) + b"\n"
    if len(line) > MAX_RUNNER_EVENT_BYTES:
        raise RunnerProtocolError(detail="runner event too long")
    write_fully(fd, line)  # O_APPEND: a short write's rest still lands at the end


def read_events(path, offset, generation, after_sequence):
    """New runner events from byte `offset`: (events after `after_sequence`, offset past them).

    Only complete lines count: a last line without its "\\n" is still being
    written and is read again next time.  Each line must be a canonical event
    of `generation` whose sequence follows the one before it with no gap
    (from 1 when reading from offset 0, else from `after_sequence` + 1);
    anything else is RunnerProtocolError.
    """
    opened = open_regular(path, RunnerProtocolError, "runner events")
    if opened is None:
        return [], offset  # the runner has written nothing yet
    fd, info = opened
    try:
        require(info.st_size >= offset, "runner events shrank")
        os.lseek(fd, offset, os.SEEK_SET)
        data = read_at_most(fd, MAX_RUNNER_EVENTS_READ_BYTES)
    finally:
        os.close(fd)
    events = []
    previous = 0 if offset == 0 else after_sequence
    position = 0
    while True:
        newline = data.find(b"\n", position)
        if newline < 0:
            # An unfinished line may only be shorter than a whole one could be.
            require(len(data) - position < MAX_RUNNER_EVENT_BYTES, "runner event too long")
            break
        line = data[position:newline]
        require(len(line) + 1 <= MAX_RUNNER_EVENT_BYTES, "runner event too long")
        event = strict_object(line, "runner event", RunnerProtocolError, canonical=True)
        check_runner_event(event, generation)
        require(event["sequence"] == previous + 1, "runner event sequence")
        previous = event["sequence"]
        if previous > after_sequence:
            events.append(event)
        position = newline + 1
    return events, offset + position


# Terminal ---------------------------------------------------------------------

def closing_terminal(generation, input_sha256, decision, reason):
    """The worker's terminal for a generation it closes: `timed_out` or `fenced`, with its reason."""
    terminal = {"schema": 1, "decision": decision, "decided_at": utc_now_text(), "generation": generation,
                "input_sha256": input_sha256, "reason": reason}
    require(decision in ("timed_out", "fenced"), "runner terminal decision")
    check_runner_terminal(terminal)
    return terminal


def worker_closes(paths, runner, decision, reason):
    """Publish the worker's own terminal for `runner`'s generation: publish_terminal's answer."""
    return publish_terminal(paths, closing_terminal(runner["generation"], runner["input_sha256"], decision, reason))


def publish_terminal(paths, terminal, writer=None):
    """Publish terminal.json if nobody has (SCAN-RUNNER-5); (the terminal on disk, whether ours won).

    The document goes to a fresh temporary file, fsynced, then os.link()ed to
    terminal.json: link() never replaces an existing name, so exactly one
    writer wins and the file is whole from the moment it has its name.  A
    loser reads the winner (strictly) and returns it.
    """
    check_runner_terminal(terminal)
    if writer is None:
        writer = "runner" if terminal["decision"] == "completed" else "worker"
    data = canonical_bytes(terminal, ascii=True)
    temporary = "%s.%s.%s.tmp" % (paths.terminal, writer, secrets.token_hex(8))
    write_new_private(temporary, data)
    try:
        try:
            os.link(temporary, paths.terminal)
            won = True
        except FileExistsError:
            won = False
    finally:
        try:
            os.unlink(temporary)
        except OSError:
            pass
    fsync_dir(paths.root)
    if won:
        return terminal, True
    loaded = load_terminal(paths)
    require(loaded is not None, "runner terminal vanished")
    return loaded[0], False


def load_terminal(paths):
    """(terminal, digest of its bytes) of terminal.json, checked; None when there is none yet."""
    data = read_private(paths.terminal, MAX_RUNNER_DOC_BYTES, RunnerProtocolError, "runner terminal", owned=False)
    if data is None:
        return None
    value = strict_object(data, "runner terminal", RunnerProtocolError, canonical=True)
    check_runner_terminal(value)
    return value, sha256_hex(data)


# Bundles ----------------------------------------------------------------------

def check_bundle_header(value, error=BundleInvalid):
    """A bundle header's own rules (SCAN-BUNDLE-1); `error` otherwise."""
    try:
        require_members(value, _BUNDLE_HEADER_MEMBERS, "bundle header members")
        require(value["format"] == BUNDLE_FORMAT, "bundle header format")
        check_binding(binding_of(value), "bundle header")
        require(is_text(value["generation"], REQUEST_ID_RE), "bundle header generation")
        require(value["status"] in BUNDLE_STATUSES, "bundle header status")
        if value["status"] == "completed":
            require(value["timeout_phase"] is None, "bundle header timeout_phase")
        else:
            require(value["timeout_phase"] in RUNNER_PHASES, "bundle header timeout_phase")
    except RunnerProtocolError as exc:
        raise error(detail=exc.detail) from None


def trailer_line(count, events_sha256):
    return canonical_bytes({"type": "end", "event_count": count, "events_sha256": events_sha256}, ascii=True) + b"\n"


def bundle_event_line(event):
    """The canonical line of a bundle event; BundleInvalid for what SCAN-BUNDLE-1 refuses."""
    if not isinstance(event, dict) or not isinstance(event.get("type"), str) or event["type"] == "end":
        raise BundleInvalid(detail="bundle event type")
    try:
        line = canonical_bytes(event, ascii=True) + b"\n"
    except (TypeError, ValueError):
        raise BundleInvalid(detail="bundle event is not JSON") from None
    if len(line) > MAX_BUNDLE_LINE_BYTES:
        raise BundleInvalid(detail="bundle line too long")
    return line


class BundleWriter(object):
    """A bundle written as a stream into bundle/tmp/, then committed into bundle/ready/.

    Lines go to disk as they come, so a bundle is never whole in memory.
    `add` refuses an event that would make the bundle, trailer included,
    exceed `max_bytes` (BundleTooLarge), so the scan fails at once instead of
    after writing it (SCAN-BUNDLE-4).
    """

    def __init__(self, tmp_path, header, max_bytes):
        check_bundle_header(header)
        self.path = tmp_path
        self.header = header
        self.max_bytes = max_bytes
        self.bytes = 0
        self.event_count = 0
        self._events_hash = hashlib.sha256()
        self._payload_hash = hashlib.sha256()
        self._buffer = bytearray()
        header_line = canonical_bytes(header, ascii=True) + b"\n"
        if len(header_line) + len(trailer_line(0, "0" * 64)) > max_bytes:
            raise BundleTooLarge()
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(tmp_path, flags, 0o600)
        self._put(header_line)

    def _put(self, line):
        self._buffer += line
        self.bytes += len(line)
        self._payload_hash.update(line)
        if len(self._buffer) >= TARGET_CHUNK_BYTES:
            self._flush()

    def _flush(self):
        if self._buffer:
            write_fully(self._fd, self._buffer)
            self._buffer = bytearray()

    def add(self, event):
        """Append one event line (not `end`, at most MAX_BUNDLE_LINE_BYTES)."""
        line = bundle_event_line(event)
        trailer = trailer_line(self.event_count + 1, "0" * 64)  # the trailer only grows with the count
        if self.bytes + len(line) + len(trailer) > self.max_bytes:
            raise BundleTooLarge()
        self._put(line)
        self._events_hash.update(line)
        self.event_count += 1

    def commit(self, ready_path):
        """Trailer, fsync, validate as a stream, rename into ready/, fsync it; the validated metadata."""
        events_sha256 = self._events_hash.hexdigest()
        self._put(trailer_line(self.event_count, events_sha256))
        self._flush()
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = None
        meta = validate_bundle(self.path, self.header, self.max_bytes)
        if (meta["bytes"] != self.bytes or meta["payload_sha256"] != self._payload_hash.hexdigest()
                or meta["events_sha256"] != events_sha256):
            raise BundleInvalid(detail="bundle changed on disk")  # what was read back is not what was written
        os.replace(self.path, ready_path)
        fsync_dir(os.path.dirname(os.path.abspath(ready_path)))
        return meta

    def abort(self):
        """Forget the bundle: close and remove the temporary file (a failed scan uploads nothing)."""
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None
        try:
            os.unlink(self.path)
        except OSError:
            pass


def validate_bundle(path, expected_header, max_bytes):
    """Check a bundle file as a stream (SCAN-BUNDLE-1..4); its metadata, or BundleInvalid.

    Matching its `target_done` events with the assignment's targets is the
    caller's (SCAN-BUNDLE-3).  Every line is read with a bound, so a line
    without an end costs MAX_BUNDLE_LINE_BYTES + 1 bytes of memory at most.
    """
    opened = open_regular(path, BundleInvalid, "bundle")
    if opened is None:
        raise FileNotFoundError(errno.ENOENT, "no bundle file")  # an OSError, as a failed open always was
    fd, info = opened
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > max_bytes:
            raise BundleInvalid(code=BUNDLE_TOO_LARGE, detail="bundle is too large")
        payload_hash = hashlib.sha256()
        events_hash = hashlib.sha256()
        total = 0
        header = None
        trailer = None
        count = 0
        target_done = []
        while True:
            line = handle.readline(MAX_BUNDLE_LINE_BYTES + 1)
            if not line:
                break
            total += len(line)
            if total > max_bytes:
                raise BundleInvalid(code=BUNDLE_TOO_LARGE, detail="bundle is too large")
            if len(line) > MAX_BUNDLE_LINE_BYTES:
                raise BundleInvalid(detail="bundle line too long")
            if not line.endswith(b"\n"):
                raise BundleInvalid(detail="bundle line without newline")
            payload_hash.update(line)
            if trailer is not None:
                raise BundleInvalid(detail="bundle line after the trailer")
            value = strict_object(line[:-1], "bundle line", BundleInvalid, canonical=True)
            if header is None:
                check_bundle_header(value)
                if expected_header is not None and canonical_bytes(value, ascii=True) != canonical_bytes(
                        expected_header, ascii=True):
                    raise BundleInvalid(detail="bundle header does not name this reservation")
                header = value
                continue
            kind = value.get("type")
            if not isinstance(kind, str):
                raise BundleInvalid(detail="bundle event type")
            if kind == "end":
                trailer = value
                continue
            if kind == "target_done":
                check_target_done(value)
                if len(target_done) >= MAX_TARGETS:
                    raise BundleInvalid(detail="bundle has too many target_done events")
                target_done.append(value)
            events_hash.update(line)
            count += 1
    if header is None:
        raise BundleInvalid(detail="bundle has no header")
    if trailer is None:
        raise BundleInvalid(detail="bundle has no trailer")
    if frozenset(trailer) != _BUNDLE_TRAILER_MEMBERS:
        raise BundleInvalid(detail="bundle trailer members")
    if not is_int(trailer["event_count"]) or trailer["event_count"] != count:
        raise BundleInvalid(detail="bundle trailer event_count")
    events_sha256 = events_hash.hexdigest()
    if trailer["events_sha256"] != events_sha256:
        raise BundleInvalid(detail="bundle trailer events_sha256")
    return {"bytes": total, "payload_sha256": payload_hash.hexdigest(), "events_sha256": events_sha256,
            "header": header, "target_done": target_done}


def check_target_done(value):
    """{"type": "target_done", "target", "bytes", "sha256"} (SCAN-BUNDLE-3), its forms only."""
    if (frozenset(value) != _BUNDLE_TARGET_DONE_MEMBERS
            or not is_text(value["target"], TARGET_NAME_RE)
            or not is_int_in(value["bytes"], 0, MAX_TARGET_BYTES)
            or not is_text(value["sha256"], DIGEST_RE)):
        raise BundleInvalid(detail="bundle target_done members")


# Target download --------------------------------------------------------------

def fetch_target(target, stop, deadline, on_data):
    """GET one target as pinned, handing its body to `on_data` chunk by chunk (SCAN-RUNNER-10).

    No proxy (SCAN-CONFIG-5) and only Host and Accept-Encoding sent, so no
    credential of the worker's can leave with it.  TargetFailed(code) on
    failure, its message the code alone: the URL is a credential.
    StopRequested on a stop; errors raised by `on_data` pass through.
    """
    size, expected = target["size"], target["sha256"]
    try:
        exchange = HttpExchange(target["url"], stop, TARGET_READ_TIMEOUT_S, TARGET_CONNECT_DEADLINE_S,
                                budget=deadline)
    except (ValueError, TypeError):
        raise TargetFailed(TARGET_URL_INVALID) from None
    if exchange.target.scheme != "https":  # SCAN-RUNNER-10: verified TLS, never plain HTTP
        raise TargetFailed(TARGET_URL_INVALID)
    watchdog = Watchdog(deadline, lambda: shut(exchange.sock))  # the whole download; shutdown() ends a blocked read

    def network(call, *args):
        try:
            return call(*args)
        except StopRequested:
            raise
        except (OSError, http.client.HTTPException, ValueError):  # ssl.SSLError and timeouts are OSErrors
            stop.check("a target download")  # a stop's shutdown leaves an error that is the stop's
            if watchdog.fired or deadline.expired():
                raise TargetFailed(TARGET_DEADLINE) from None
            raise TargetFailed(TARGET_TRANSPORT_FAILED) from None

    try:
        with watchdog:
            network(exchange.open)
            conn = exchange.conn

            def send():
                conn.putrequest("GET", exchange.target.request_target)  # adds Host and Accept-Encoding: identity
                conn.endheaders()
                return conn.getresponse()

            response = network(send)
            if response.status != 200:  # SCAN-RUNNER-10: no redirect followed, no error body read
                raise TargetFailed(TARGET_HTTP_STATUS)
            lengths = response.msg.get_all("Content-Length") or []
            if (len(lengths) != 1 or not is_text(lengths[0].strip(), _RUNNER_DECIMAL_RE)
                    or int(lengths[0].strip()) != size or response.chunked):
                raise TargetFailed(TARGET_SIZE_MISMATCH)  # refused before any byte of the body is read
            digest = hashlib.sha256()
            remaining = size
            while remaining > 0:
                chunk = network(response.read, min(TARGET_CHUNK_BYTES, remaining))
                if not chunk:
                    stop.check("a target download")
                    if watchdog.fired or deadline.expired():
                        raise TargetFailed(TARGET_DEADLINE)
                    raise TargetFailed(TARGET_SIZE_MISMATCH)  # the body ended before its Content-Length
                remaining -= len(chunk)
                digest.update(chunk)
                on_data(chunk)
            if digest.hexdigest() != expected:
                raise TargetFailed(TARGET_SHA256_MISMATCH)
    finally:
        exchange.close()


# Warm start ------------------------------------------------------------------
# D34: a runner starts from this file's bytecode, compiled once per worker life
# and per version of the file, not from its source: the compile of this file
# costs more than the rest of a runner's start.  The bytecode's name carries the
# SHA-256 of the very bytes it was compiled from, and every launch hashes the
# file again, so a runner never runs code other than the file's present text.

RUNNER_CODE_DIR = "runner-code"  # D34: under the state tree, 0700; one file per node digest and interpreter
RUNNER_CODE_RE = re.compile(r"runner-[a-f0-9]{64}\.[A-Za-z0-9_-]{1,64}\.pyc")


class RunnerCode(object):
    """What a runner's argv names after `-I -S -B`: cached bytecode of the node file, else the file itself."""

    def __init__(self, node_path, state_dir):
        self.node_path = node_path
        self.directory = os.path.join(state_dir, RUNNER_CODE_DIR)
        self.lock = threading.Lock()  # slots launch at once: one compile, one writer
        self.known = None  # (node digest, cache path, its (inode, size, mtime)) written by this life
        self.failed = None  # a node digest whose cache could not be written: its runners start from source
        self.swept = False  # older caches are removed once a life, before any runner of it can run them

    def path(self):
        """The file a runner runs now: the cache when it holds exactly the node's present bytes."""
        try:
            with open(self.node_path, "rb") as handle:
                source = handle.read()
        except OSError:
            return self.node_path  # as before D34: the runner meets the same error and the slot fences it
        digest = sha256_hex(source)
        with self.lock:
            if self.known is not None and self.known[0] == digest and self._intact(self.known):
                return self.known[1]
            if self.failed == digest:
                return self.node_path
            try:
                self.known = self._write(source, digest)
            except (OSError, ValueError, SyntaxError, WorkerError):
                self.known, self.failed = None, digest  # D34: no cache is never a failed assignment
                return self.node_path
            return self.known[1]

    @staticmethod
    def _intact(known):
        try:
            info = os.lstat(known[1])
        except OSError:
            return False
        return (info.st_ino, info.st_size, info.st_mtime_ns) == known[2] and stat.S_ISREG(info.st_mode)

    def _write(self, source, digest):
        """Compile `source` (the bytes just hashed) and replace the cache with it; (digest, path, signature)."""
        data = node_bytecode(source, self.node_path)  # the name's digest is the source check, made above
        ensure_private_dir(self.directory, RunnerProtocolError)
        name = "runner-%s.%s.pyc" % (digest, sys.implementation.cache_tag or "none")
        path = os.path.join(self.directory, name)
        # No fsync: each worker life writes its own cache before its first runner, so nothing a
        # restart reads depends on these bytes reaching the disk.
        write_whole(path, data)
        if not self.swept:  # an earlier version's code, left by an earlier life: never run again
            self.swept = True
            for old in os.listdir(self.directory):
                if old != name and (RUNNER_CODE_RE.fullmatch(old) or old.endswith(".partial")):
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(self.directory, old))
        info = os.lstat(path)
        return digest, path, (info.st_ino, info.st_size, info.st_mtime_ns)


# Argv ------------------------------------------------------------------------

def runner_child(tokens):
    """`-- _assignment_runner --root ROOT` (SCAN-RUNNER-1): the runner of section 7.4; 64 for any other shape."""
    sys.dont_write_bytecode = True  # SCAN-STATE-1: no __pycache__ in anyone's tree
    if len(tokens) != 2 or tokens[0] != "--root":
        return EXIT_USAGE
    status = runner_main(tokens[1])
    # Everything it wrote is closed and fsynced, and it prints nothing: the interpreter's teardown (every
    # module's objects freed, one by one) would only keep its slot waiting for the exit.
    os._exit(status)


CHILD_MODES = ((("--", RUNNER_COMMAND), runner_child),)  # (argv prefix, its function): main() looks here first


# 6.8 Progress =================================================================
# Every phase event of every slot is one line of the journal, fsynced when it
# names a reservation (D38); the outbox thread sends those lines, in order,
# and moves the cursor after each one the server acknowledged
# (SCAN-PROGRESS-2/3).  So delivery is at least once: after a crash only the
# events past the cursor are sent again.  Progress has its own thread and its
# own short deadlines: a server that hangs progress requests slows nothing
# else (SCAN-PROGRESS-4), and one that takes none fills the journal to a
# bound, not the disk (D41).

PHASES = ("idle", "claiming", "assigned", "preparing", "scanning", "bundling", "uploading", "awaiting_receipt",
          "backoff", "draining", "stopped")  # SCAN-PROGRESS-1: the only phases an event may name
ACK_KEYS = ("accepted", "reservation_id", "sequence", "received_at", "replayed")


class Journal(object):
    """`<state>/events.jsonl` and `<state>/progress-cursor.json` (SCAN-PROGRESS-1/3/5)."""

    def __init__(self, state_dir):
        self.path = os.path.join(state_dir, "events.jsonl")
        self.cursor_path = os.path.join(state_dir, "progress-cursor.json")
        self.lock = threading.Lock()
        self.changed = threading.Event()  # set by emit(): wakes the outbox at once
        self.fd = None
        self.next_sequence = 1
        self.cursor = self.cursor_on_disk = 0
        self.read_offset = 0  # the byte offset of the first line past the cursor
        self.size = 0  # the journal's bytes: at MAX_JOURNAL_HELD_BYTES, new events are dropped (D41)
        self.full = False  # the line saying so is printed once each time the journal fills

    def open(self):
        """Read the cursor and the journal's tail; cut a line a crash left half written."""
        cursor = read_private_json(self.cursor_path, MAX_CURSOR_BYTES)
        if cursor is None:
            cursor = {"schema": CURSOR_SCHEMA, "sequence": 0}
            write_private_json(self.cursor_path, cursor, MAX_CURSOR_BYTES)
        if set(cursor) != {"schema", "sequence"} or cursor["schema"] != CURSOR_SCHEMA \
                or not is_int(cursor["sequence"]) or cursor["sequence"] < 0:
            raise StartupError("a progress cursor of another shape")
        self.cursor = self.cursor_on_disk = cursor["sequence"]
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        info = os.fstat(self.fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise StartupError("a journal that is not a private regular file")
        previous, keep = 0, 0
        self.read_offset = None
        for sequence, _event, end in self._lines(0):
            if sequence <= previous:
                break  # out of order: what follows cannot be trusted; cut it
            if sequence > self.cursor and self.read_offset is None:
                self.read_offset = keep  # the start of this line
            previous, keep = sequence, end
        if keep < info.st_size:
            os.ftruncate(self.fd, keep)  # a torn or foreign tail is dropped: these are only progress events
            os.fsync(self.fd)
        if self.read_offset is None:
            self.read_offset = keep
        self.size = keep
        self.next_sequence = max(previous, self.cursor) + 1

    def _lines(self, offset):
        """(sequence, event, end offset) of each complete, valid line from `offset` on."""
        position, pending = offset, b""
        while True:
            chunk = os.pread(self.fd, IO_CHUNK_BYTES, position)
            if not chunk:
                return
            position += len(chunk)
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                try:
                    event = parse_lenient(line)
                except JsonError:
                    return
                if not isinstance(event, dict) or not is_int(event.get("sequence")):
                    return
                yield event["sequence"], event, position - len(pending)
            if len(pending) > MAX_BUNDLE_LINE_BYTES:
                return

    def emit(self, event):
        """Append one event under the next sequence (SCAN-PROGRESS-1); one to deliver is fsynced and wakes the outbox.

        D38: an event without a reservation is never sent, so no restart needs
        it on disk: an idle poll's two events cost two writes, no fsync, no wakeup.
        D41: while the server takes nothing, the journal stops at MAX_JOURNAL_HELD_BYTES
        (a full disk would stop the work too): the event is dropped, with no sequence.
        """
        with self.lock:
            if self.size >= MAX_JOURNAL_HELD_BYTES:
                if not self.full:
                    self.full = True
                    # SCAN-OUTPUT-1: fixed text, once; an operator learns why the server's progress stopped
                    say("worker: progress journal full, new events dropped")
                return
            event["sequence"] = self.next_sequence
            line = canonical(event) + b"\n"
            write_fully(self.fd, line)
            self.size += len(line)
            if event.get("reservation_id") is not None:
                os.fsync(self.fd)
            self.next_sequence += 1
        if event.get("reservation_id") is not None:
            self.changed.set()

    def pending(self, limit):
        """Up to `limit` (sequence, event, end offset) past the cursor, read from the file."""
        with self.lock:
            return list(itertools.islice(self._lines(self.read_offset), limit))

    def advance(self, sequence, end, delivered=True):
        """SCAN-PROGRESS-3: the cursor moves past a delivered event, on disk first; past a skipped one in
        memory (D38: a restart skips it again), on disk with the next delivered one or before a rotation."""
        with self.lock:
            rotate = sequence == self.next_sequence - 1 and end > MAX_JOURNAL_BYTES
            self.cursor, self.read_offset = sequence, end
            if delivered or rotate:  # SCAN-PROGRESS-5: the next sequence follows the cursor on disk
                self._save_cursor()
            if rotate:
                self._rotate()

    def _save_cursor(self):
        write_private_json(self.cursor_path, {"schema": CURSOR_SCHEMA, "sequence": self.cursor}, MAX_CURSOR_BYTES)
        self.cursor_on_disk = self.cursor

    def save_cursor(self):
        """At the end of a drain: the cursor on disk catches up with the skipped events too (D38)."""
        with self.lock:
            if self.cursor_on_disk != self.cursor:
                self._save_cursor()

    def _rotate(self):
        """SCAN-PROGRESS-5: everything is delivered; start an empty journal (the cursor keeps counting)."""
        atomic_write(self.path, b"", 0o600)
        os.close(self.fd)
        self.fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        self.read_offset = self.size = 0
        self.full = False

    def caught_up(self):
        with self.lock:
            return self.cursor >= self.next_sequence - 1


class NoJournal(object):
    """D31: with --no-progress, no journal and no cursor: events are dropped, nothing is delivered."""

    def __init__(self):
        self.changed = threading.Event()

    def open(self):
        pass

    def emit(self, event):
        pass

    def caught_up(self):
        return True

    def save_cursor(self):
        pass


def ack_problem(ack, reservation_id, sequence):
    """SCAN-PROGRESS-2: what a 200 must say for the event to count as delivered."""
    if not isinstance(ack, dict) or any(key not in ack for key in ACK_KEYS):
        return True
    # D25: the numbers as the upstream's int() reads them (12.0, "12"); other members ignored
    return not (ack["accepted"] is True and upstream_int(ack["reservation_id"]) == reservation_id
                and upstream_int(ack["sequence"]) == sequence and isinstance(ack["received_at"], str)
                and isinstance(ack["replayed"], bool))


class Outbox(object):
    """The progress thread: the journal to the server, in order, at least once."""

    def __init__(self, journal, api):
        self.journal = journal
        self.api = api

    def publish_once(self, budget):
        """Send what is pending within `budget` (D13); False when nothing was pending."""
        events = self.journal.pending(PROGRESS_BATCH)
        if not events:
            return False
        for sequence, event, end in events:
            reservation_id = event.get("reservation_id")
            if reservation_id is not None:
                if budget.expired():
                    return True  # D13: the pass's budget is spent; the next pass resumes from the cursor
                try:
                    ack = self.api.progress(reservation_id, canonical(event),
                                            min(PROGRESS_REQUEST_TIMEOUT_S, max(0.05, budget.remaining())))
                    if ack_problem(ack, reservation_id, sequence):
                        raise WorkerClientError("a progress acknowledgement of another shape")
                except WorkerHTTPError as exc:
                    if not (exc.status == 410 and exc.code == "progress_stale"):
                        raise  # SCAN-PROGRESS-2: the same event again later, nothing after it first
            self.journal.advance(sequence, end, reservation_id is not None)  # SCAN-PROGRESS-3: skipped ones too
        return True

    def run(self):
        retry = PROGRESS_RETRY_MIN_S
        while not FLOW.stopping.is_set():
            try:
                sent = self.publish_once(Deadline(PROGRESS_REQUEST_TIMEOUT_S))
                retry = PROGRESS_RETRY_MIN_S
            except StopRequested:
                return
            except Exception:  # SCAN-PROGRESS-4: backs off, doubling, jittered; work never waits for it
                FLOW.stopping.wait(jittered(retry))
                retry = min(retry * 2, PROGRESS_RETRY_MAX_S)
                continue
            if not sent:
                self.journal.changed.wait(PROGRESS_IDLE_S)
                self.journal.changed.clear()

    def drain(self, seconds):
        """SCAN-STOP-2: after a drain, deliver what is left for at most `seconds`."""
        deadline = Deadline(seconds)
        retry = 0.05
        # SCAN-STOP-2: only a stop cuts the flush; finish_drain has already set FLOW.stopping (to
        # send the outbox thread away), so stop_requested() here would skip the flush altogether.
        while not deadline.expired() and not STOP.requested:
            if self.journal.caught_up():
                self.journal.save_cursor()
                return True
            try:
                self.publish_once(Deadline(min(PROGRESS_REQUEST_TIMEOUT_S, deadline.remaining())))
                retry = 0.05
            except Exception:
                time.sleep(min(jittered(retry), deadline.remaining(), 0.5))  # a stop is noticed within 0.5 s
                retry = min(retry * 2, PROGRESS_RETRY_MAX_S)
        return self.journal.caught_up()


# 6.9 Terminal reports =========================================================
# A report says which failure ended the work, in fixed words, and what the
# server answered along the way; never how the worker's code looked (D10).
# It must fit 16 KiB: the error bodies share one budget, found by binary
# search (SCAN-TERMINAL-3).  The fitted report is persisted before it is sent
# and then only ever re-sent as the same bytes (SCAN-TERMINAL-4).

PROCESS_FAILED = ("client_process_failed", "local worker execution failed")  # SCAN-TERMINAL-1: fixed words
STORAGE_FAILED = ("client_storage_failed", "local worker storage operation failed")
BUNDLE_MISSING = ("client_storage_failed", "pending result bundle is missing")
FAILURE_CODES = frozenset(["client_process_failed", "client_storage_failed"])
DIAGNOSTIC_CODE_RE = re.compile(r"runner_protocol_failed|client_storage_failed|client_process_failed"
                                r"|client_result_conflict|worker_contract_invalid\.[a-z_.]{1,64}")
DIAGNOSTIC_KEYS = frozenset(["schema", "occurrence_id", "reservation_id", "scan_event_id", "slot_id", "source",
                             "phase", "kind", "category", "code", "summary", "retryable", "attempt", "occurred_at",
                             "exception"])


def terminal_problem(report):
    """SCAN-TERMINAL-1: a report's members and words; None when good."""
    if not isinstance(report, dict) or set(report) - {"diagnostics"} != {"failure_code", "detail"}:
        return "members"
    if (report["failure_code"], report["detail"]) not in (PROCESS_FAILED, STORAGE_FAILED, BUNDLE_MISSING):
        return "failure code or detail"
    diagnostics = report.get("diagnostics", [])
    if "diagnostics" in report and (not isinstance(diagnostics, list) or not 1 <= len(diagnostics) <= MAX_DIAGNOSTICS
                                    or not all(isinstance(d, dict) and DIAGNOSTIC_KEYS <= set(d) for d in diagnostics)):
        return "diagnostics"
    if len(canonical(report)) > TERMINAL_REPORT_MAX_BYTES:
        return "size"
    return None


class Diagnostic(object):
    """One failure of an assignment, before it is fitted (SCAN-TERMINAL-2)."""

    def __init__(self, slot, phase, code, category, exc=None, http_error=None, exit_code=None, timed_out=None):
        assignment = slot.assignment or {}
        try:
            rid, _bundle_id, event_id = reservation_of(assignment)
        except WorkerClientError:
            rid, event_id = None, None
        self.fields = {
            "schema": 1, "occurrence_id": secrets.token_hex(16), "slot_id": slot.slot_id,
            "reservation_id": rid, "scan_event_id": event_id,
            "source": source_of(assignment) or "unknown", "phase": phase, "code": code, "category": category,
            "retryable": False, "attempt": attempt_of(assignment), "occurred_at": utc_now_text(),
        }
        kind = "EXCEPTION"
        if exit_code is not None or timed_out is not None:
            kind = "SCANNER_PROCESS"
            self.fields["process"] = {"exit_code": exit_code, "timed_out": bool(timed_out)}
        elif http_error is not None:
            kind = "PROVIDER_HTTP"
        self.fields["kind"] = kind
        self.http = http_error
        type_name = type(exc).__name__ if exc is not None else "RunnerProtocolError"
        summary = summary_of(exc) if exc is not None else "worker protocol or state validation failed"
        self.fields["summary"] = summary.encode("utf-8")[:MAX_DIAGNOSTIC_SUMMARY_BYTES].decode("utf-8", "ignore")
        # D10: the class and a fingerprint of class and code; no message, path, argv or traceback.
        fingerprint = sha256_hex(("%s:%s" % (type_name, code)).encode())
        self.fields["exception"] = {"type": type_name, "fingerprint": fingerprint}

    def wanted(self):
        """Bytes of body text this diagnostic would like (SCAN-TERMINAL-3)."""
        return min(len(self.http.body), MAX_DIAGNOSTIC_BODY_BYTES) if self.http is not None else 0

    def envelope(self, body_bytes):
        value = dict(self.fields)
        if self.http is not None:
            content_type = self.http.content_type
            value["http"] = {"status_code": self.http.status,
                             "content_type": content_type[:128] if isinstance(content_type, str) else None,
                             "body": material(self.http.body, body_bytes)}
        return value


def material(data, budget):
    """SCAN-TERMINAL-2: a UTF-8-safe prefix of at most `budget` bytes, with the original's size and digest."""
    cut = data[:budget]
    for back in range(4):  # a prefix never ends inside a UTF-8 sequence
        try:
            text = cut[:len(cut) - back].decode("utf-8")
            cut = cut[:len(cut) - back]
            break
        except UnicodeDecodeError:
            continue
    else:
        text = cut.decode("utf-8", "replace")
    return {"text": text, "truncated": len(cut) < len(data), "original_bytes": len(data), "sha256": sha256_hex(data)}


def allocate(desired, budget):
    """Share `budget` bytes in proportion to `desired`, largest remainder first, ties by position."""
    total = sum(desired)
    budget = min(budget, total)
    if total == 0:
        return [0] * len(desired)
    shares = [budget * want // total for want in desired]
    remainders = sorted(range(len(desired)), key=lambda i: (-((budget * desired[i]) % total), i))
    left = budget - sum(shares)
    for index in remainders:
        if left <= 0:
            break
        if shares[index] < desired[index]:
            shares[index] += 1
            left -= 1
    return shares


def fitted_report(failure, diagnostics):
    """SCAN-TERMINAL-3: the largest report within 16 KiB; WorkerClientError if nothing fits."""
    code, detail = failure
    report = {"failure_code": code, "detail": detail[:MAX_DETAIL_CHARS]}
    if not diagnostics:
        return report
    diagnostics = diagnostics[-MAX_DIAGNOSTICS:]
    desired = [d.wanted() for d in diagnostics]

    def build(total):
        shares = allocate(desired, total)
        candidate = dict(report, diagnostics=[d.envelope(s) for d, s in zip(diagnostics, shares)])
        return candidate if len(canonical(candidate)) <= TERMINAL_REPORT_MAX_BYTES else None

    low, high, best = 0, sum(desired), None
    while low <= high:  # the largest budget whose report fits
        middle = (low + high) // 2
        candidate = build(middle)
        if candidate is not None:
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    if best is None:
        raise WorkerClientError("a terminal report that cannot fit")
    return best


def attempt_of(assignment):
    """The upstream's max(1, int(reservation.attempts or 1)), for events and diagnostics (D25); 1 when unreadable."""
    reservation = assignment.get("reservation") if isinstance(assignment, dict) else None
    attempts = upstream_int(reservation.get("attempts"), cut=True) if isinstance(reservation, dict) else None
    return max(1, attempts) if attempts is not None else 1


def source_of(assignment):
    """The assignment's source for events and diagnostics: reservation first, then the top-level copies."""
    reservation = assignment.get("reservation") if isinstance(assignment, dict) else None
    for holder, key in ((reservation, "source"), (assignment, "source"), (reservation, "platform"),
                        (assignment, "platform")):
        if isinstance(holder, dict) and short_text(holder.get(key)):
            return holder[key]
    return None


# 7 Lifecycle ==================================================================

# 7.1 A runner, from its slot ==================================================
# A generation's life: its record is saved, its root made, the child spawned
# in its own process group, its identity saved, and only then its start gate
# published (SCAN-RUNNER-2/3).  The slot waits on its exit and a stop (D35),
# and reads new events and the deadline every RUNNER_POLL_S.  However it ends, one terminal decides
# (SCAN-RUNNER-5); then the generation is closed: adopted, retried, turned into
# a timeout bundle, or reported.  After a restart the recorded generation is
# closed the same way, once its runner is proven gone (SCAN-RUNNER-9).

OPERATION_EXECUTE, OPERATION_TIMEOUT = "execute", "timeout_bundle"
STATUS_OF_DECISION = {"completed": "exited", "timed_out": "timed_out", "fenced": "fenced"}


def child_environment():
    """SCAN-RUNNER-1: only what a runner needs: the CA bundle variable and TMPDIR; never the token."""
    return dict((name, os.environ[name]) for name in ("SSL_CERT_FILE", "TMPDIR") if name in os.environ)


def assignment_binding(assignment, slot_id):
    """SCAN-RUNNER-6: what binds a generation's input, outcome and bundle to this slot's assignment."""
    rid, bundle_id, event_id = reservation_of(assignment)
    return {"slot_id": slot_id, "reservation_id": rid, "bundle_id": bundle_id, "scan_event_id": event_id,
            "execution_snapshot_sha256": assignment["execution_snapshot_sha256"]}


def validate_bundle_file(path, assignment, slot_id, header=None):
    """SCAN-BUNDLE-1..4: a bundle on disk, judged as a stream; its meta, or WorkerClientError.

    With `header` the whole header must equal it; without, only its binding
    (a bundle found again after its runner record was cleared).
    """
    plan = check_assignment(assignment, CAPABILITIES)
    try:
        meta = validate_bundle(path, header, plan["declared_bundle_bytes"])
    except (BundleInvalid, OSError):
        raise RunnerProtocolError(detail="a bundle that does not validate") from None
    if binding_of(meta["header"]) != assignment_binding(assignment, slot_id):
        raise RunnerProtocolError(detail="a bundle for another reservation")
    if meta["header"]["status"] == "completed":
        done = [(e.get("target"), e.get("bytes"), e.get("sha256")) for e in meta["target_done"]]
        pins = [(t["name"], t["size"], t["sha256"]) for t in plan["targets"]]
        if done != pins:
            # SCAN-BUNDLE-3: a completed bundle names every target, pins and all
            raise RunnerProtocolError(detail="a completed bundle that does not account for every target")
    return meta


class ExitWatch(object):
    """What a slot waits on while its runner runs: the runner's pidfd and the stop's wake pipe.

    Its exit is seen the moment it happens, not at the next poll; without a
    pidfd (Linux < 5.3, or a seccomp filter) the slot looks every
    RUNNER_REAP_POLL_S instead.
    """

    def __init__(self, pid):
        self.fd = None
        if hasattr(os, "pidfd_open"):
            try:
                self.fd = os.pidfd_open(pid)  # our child, not reaped yet: the pid still names it
            except OSError:
                self.fd = None  # ENOSYS or EPERM: the poll below

    def wait(self, seconds):
        """Return once the runner may have exited, a stop was asked, or `seconds` passed."""
        if self.fd is None:
            FLOW.stopping.wait(min(seconds, RUNNER_REAP_POLL_S))
            return
        watch = [self.fd]
        if STOP.wait_fd() is not None:
            watch.append(STOP.wait_fd())  # SCAN-STOP-4: a stop ends this wait at once
        try:
            select.select(watch, [], [], seconds)
        except InterruptedError:
            pass

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class RunnerControl(object):
    """The runner half of a Slot (mixed into it): everything about generations."""

    # -- starting a generation ----------------------------------------------------
    def new_generation(self, state, operation, attempt, window=None, timeout_phase=None):
        """SCAN-STATE-4: the record (status created) and input.json are on disk before the spawn."""
        assignment = state["assignment"]
        plan = check_assignment(assignment, CAPABILITIES)  # the worker's own spelling of what it reads (D25)
        now = time.time()
        deadline = plan["assignment_deadline"]
        if window is None:  # SCAN-RUNNER-4: fixed when the first generation starts, kept by every retry
            scan_deadline = min(now + plan["target_scan_timeout_s"], deadline)
            if scan_deadline <= now:
                raise RunnerProtocolError(detail="the scan deadline is already over")
            window = (now, scan_deadline)
        if operation == OPERATION_EXECUTE:
            watchdog = window[1]
        else:  # SCAN-RUNNER-8: a timeout bundle never runs past the assignment's deadline
            watchdog = now + min(TIMEOUT_BUNDLE_PUBLICATION_S, deadline - now)
            if watchdog <= now:
                raise RunnerProtocolError(detail="no time is left for a timeout bundle")
        generation = secrets.token_hex(16)
        root_name = runner_root_name(self.slot_id, plan["reservation_id"], generation)
        runner_input = dict(assignment_binding(assignment, self.slot_id), **{
            "schema": RUNNER_FILE_SCHEMA, "generation": generation, "operation": operation,
            "timeout_phase": timeout_phase, "attempt": attempt, "scan_started_at": instant_text(window[0]),
            "scan_deadline_at": instant_text(window[1]), "watchdog_deadline_at": instant_text(watchdog),
            "declared_bundle_bytes": plan["declared_bundle_bytes"],
            "targets": plan["targets"],  # exactly the four members each: nothing unknown reaches the runner
        })
        _root, input_sha256 = create_runner_root(self.worker.config.work_dir, root_name, runner_input)
        record = {
            "generation": generation, "input_sha256": input_sha256, "root_name": root_name,
            "input_ref": root_name + "/input.json", "events_ref": root_name + "/events.jsonl",
            "start_ref": root_name + "/start.json", "terminal_ref": root_name + "/terminal.json",
            "bundle_ref": None, "scan_started_at": runner_input["scan_started_at"],
            "scan_deadline_at": runner_input["scan_deadline_at"],
            "watchdog_deadline_at": runner_input["watchdog_deadline_at"], "operation": operation,
            "timeout_phase": timeout_phase, "attempt": attempt, "status": "created", "identity": None,
            "last_event": None, "terminal_sha256": None,
        }
        self.last_sequence = 0
        return self.save(dict(state, runner=record))

    def root_of(self, runner):
        """Where a generation's root is now: in the work tree, or already handed to abandoned/."""
        work = self.worker.config.work_dir
        live = os.path.join(work, runner["root_name"])
        if os.path.isdir(live):
            return live
        moved = os.path.join(work, "abandoned", runner["root_name"])
        return moved if os.path.isdir(moved) else None

    def launch(self, state):
        """Spawn, record the identity, bind the owner, open the gate; then supervise (SCAN-RUNNER-1..3)."""
        runner = dict(state["runner"])
        root = self.root_of(runner)
        paths = RunnerPaths(root)
        if time.time() >= parse_instant(runner["watchdog_deadline_at"]):
            return self.close_by_worker(state, paths, "timed_out", "startup_deadline")
        # D34: the node's bytecode, compiled from its present bytes, else the node file itself
        command = [sys.executable, "-I", "-S", "-B", self.worker.runner_code.path(), "--", RUNNER_COMMAND,
                   "--root", root]
        try:
            # SCAN-RUNNER-1: its own session and group (one kill reaches every descendant), no inherited
            # descriptor, nothing of ours on its output, and an environment without the token.
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True,
                                       env=child_environment())
        except OSError:
            self.save(dict(state, runner=dict(runner, status="fenced")))
            raise
        identity = process_identity(process.pid)
        try:
            leads_group = os.getpgid(process.pid) == process.pid
        except OSError:
            leads_group = False
        if identity is None:  # gone before it could be named: a crash like any other
            process.wait()
            self.last_exit = process.returncode
            return self.close_by_worker(state, paths, "fenced", "runner_crash")
        runner.update(identity={"host": identity, "payload": identity, "job_membership_verified": leads_group},
                      status="running")
        state = self.save(dict(state, runner=runner))  # SCAN-RUNNER-2: named on disk before it may work
        if not leads_group:
            self.kill_own(process, identity)
            raise RunnerProtocolError(detail="a runner that does not lead its process group")
        write_owner(paths, runner["generation"], runner["input_sha256"], identity)
        # SCAN-RUNNER-3: last of all; until now the runner waits, so it never works unrecorded
        publish_start_gate(paths, runner["generation"], runner["input_sha256"], identity)
        return self.supervise(state, paths, process)

    def kill_own(self, process, identity):
        """SIGKILL a runner this life started (its group), and reap it within RUNNER_STOP_TIMEOUT_S."""
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)  # the zombie keeps the pid ours until it is reaped
            except OSError:
                pass
        try:
            process.wait(RUNNER_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return False
        self.last_exit = process.returncode
        return True

    def supervise(self, state, paths, process):
        """Watch a running generation until one terminal decides how it ended."""
        runner = state["runner"]
        identity = runner["identity"]["payload"]
        watchdog_at = parse_instant(runner["watchdog_deadline_at"])
        offset = 0
        exited = ExitWatch(process.pid)
        try:
            return self._supervise(runner, paths, process, identity, watchdog_at, offset, exited)
        finally:
            exited.close()

    def _supervise(self, runner, paths, process, identity, watchdog_at, offset, exited):
        while True:
            if stop_requested():  # SCAN-STOP-4: no runner outlives a stop; its record says fenced
                self.kill_own(process, identity)
                worker_closes(paths, runner, "fenced", "stop")
                self.save(dict(self.state, runner=dict(self.state["runner"], status="fenced")))
                raise StopRequested("stop requested")
            code = process.poll()
            offset = self.drain_events(paths, offset)
            if code is not None:
                self.last_exit = code
                break
            if time.time() >= watchdog_at:  # SCAN-RUNNER-4: the watchdog, then the kill
                reason = "scan_stage_deadline" if runner["operation"] == OPERATION_EXECUTE \
                    else "timeout_bundle_deadline"
                terminal, won = worker_closes(paths, runner, "timed_out", reason)
                if not self.kill_own(process, identity):
                    self.save(dict(self.state, runner=dict(self.state["runner"], status="stopping")))
                    raise ContainmentPending()
                self.drain_events(paths, offset)
                return self.decided(terminal)
            exited.wait(min(RUNNER_POLL_S, max(0.0, watchdog_at - time.time())))
        self.drain_events(paths, offset)
        try:
            loaded = load_terminal(paths)
        except RunnerProtocolError:
            return self.decided(None)  # a terminal nobody can read: closed, unusable
        if loaded is None:  # SCAN-RUNNER-7: it ended without a word: fenced as a crash
            terminal, _won = worker_closes(paths, runner, "fenced", "runner_crash")
            return self.decided(terminal)
        return self.decided(loaded[0])

    def close_by_worker(self, state, paths, decision, reason):
        terminal, _won = worker_closes(paths, state["runner"], decision, reason)
        return self.decided(terminal)

    def decided(self, terminal):
        """Record how the generation ended; (decision, terminal).  A terminal that is not whole counts as fenced."""
        runner = dict(self.state["runner"])
        decision = terminal["decision"] if isinstance(terminal, dict) else "fenced"
        if decision == "completed" and runner["status"] in ("stopping", "timed_out", "fenced"):
            decision = "fenced"  # SCAN-RUNNER-5: output of a generation already closed is never adopted
        runner["status"] = STATUS_OF_DECISION[decision]
        if isinstance(terminal, dict):
            runner["terminal_sha256"] = digest_of(terminal, ascii=True)
        self.save(dict(self.state, runner=runner))
        return decision, terminal

    def drain_events(self, paths, offset):
        """New runner events into the journal, tagged with their generation (SCAN-PROGRESS-1)."""
        runner = self.state["runner"]
        events, offset = read_events(paths.events, offset, runner["generation"], self.last_sequence)
        for event in events:
            self.last_sequence = event["sequence"]
            extras = dict(event["progress"]) if isinstance(event.get("progress"), dict) else {}
            extras.update(runner_generation=runner["generation"], runner_sequence=event["sequence"])
            self.emit(event["phase"], timestamp=event.get("timestamp"),
                      phase_started_at=event.get("phase_started_at"), **extras)
        if events:
            self.save(dict(self.state, runner=dict(self.state["runner"], last_event=events[-1])))
        return offset

    # -- after a restart ----------------------------------------------------------
    def recover(self, state):
        """SCAN-RUNNER-9: close a generation recorded by a previous life, its runner proven gone first."""
        runner = state["runner"]
        root = self.root_of(runner)
        terminal = None
        if root is not None:
            paths = RunnerPaths(root)
            try:
                loaded = load_terminal(paths)
                terminal = loaded[0] if loaded else None
                if terminal is None:  # fence first: a runner still alive can no longer win
                    terminal, _won = worker_closes(paths, runner, "fenced", "controller_recovery")
            except RunnerProtocolError:
                terminal = None  # malformed: closed but unusable
        identity = runner["identity"]
        if identity is not None:  # SCAN-RUNNER-9: only the exact pid + start time + executable is ever signalled
            if stop_exact_identity(identity["payload"], RUNNER_STOP_TIMEOUT_S) != "dead":
                self.save(dict(state, runner=dict(runner, status="stopping")))
                raise ContainmentPending()
        self.last_sequence = 0
        if root is not None:
            try:
                self.drain_events(RunnerPaths(root), 0)
            except RunnerProtocolError:
                terminal = None  # a malformed event tail: retried as a new generation
        return self.decided(terminal)

    def fence_recorded_runner(self, state):
        """Before a state is dropped, any runner it recorded is proven gone (never left unsupervised)."""
        runner = state.get("runner")
        if runner and runner.get("identity") and runner.get("status") in ("created", "running", "stopping"):
            if stop_exact_identity(runner["identity"]["payload"], RUNNER_STOP_TIMEOUT_S) != "dead":
                raise ContainmentPending()

    # -- closing a generation -----------------------------------------------------
    def janitor(self, state):
        """Hand a closed generation's root to abandoned/ and name it in retained_work (SCAN-RUNNER-7)."""
        runner = state["runner"]
        work = self.worker.config.work_dir
        reference = "abandoned/" + runner["root_name"]
        live = os.path.join(work, runner["root_name"])
        if os.path.isdir(live):
            os.rename(live, os.path.join(work, reference))
            fsync_dir(work)
            fsync_dir(os.path.join(work, "abandoned"))
        retained = [r for r in state["retained_work"] if r != reference] + [reference]
        for old in retained[:-MAX_RETAINED_WORK]:
            shutil.rmtree(os.path.join(work, old), ignore_errors=True)
        return dict(state, runner=None, retained_work=retained[-MAX_RETAINED_WORK:])

    def release_work(self, state):
        """Once a state is gone, the roots it retained go too (nothing refers to them any more)."""
        work = self.worker.config.work_dir
        names = list(state.get("retained_work") or [])
        if state.get("runner"):
            names += [state["runner"]["root_name"], "abandoned/" + state["runner"]["root_name"]]
        for name in names:
            shutil.rmtree(os.path.join(work, name), ignore_errors=True)

    def next_generation(self, state, decision):
        """SCAN-RUNNER-7/8: retry, fall back to a timeout bundle, or give up with RunnerProtocolError."""
        runner = state["runner"]
        window = (parse_instant(runner["scan_started_at"]), parse_instant(runner["scan_deadline_at"]))
        state = self.janitor(state)
        if runner["operation"] == OPERATION_TIMEOUT:
            if decision == "timed_out" or runner["attempt"] >= RUNNER_MAX_ATTEMPTS:
                self.save(state)
                raise RunnerProtocolError(detail="the timeout bundle could not be made")
            return self.new_generation(state, OPERATION_TIMEOUT, runner["attempt"] + 1, window,
                                       runner["timeout_phase"])
        if decision == "timed_out" or window[1] - time.time() < RUNNER_MIN_RETRY_S:
            last = runner["last_event"] or {}
            phase = last.get("phase") if last.get("phase") in RUNNER_PHASES else "preparing"
            return self.new_generation(state, OPERATION_TIMEOUT, 1, window, phase)
        if runner["attempt"] >= RUNNER_MAX_ATTEMPTS:
            self.save(state)
            raise RunnerProtocolError(detail="every generation failed")
        self.emit(runner["last_event"]["phase"] if runner["last_event"] else "preparing",
                  runner_retry_reason="runner_crash", next_runner_attempt=runner["attempt"] + 1)
        return self.new_generation(state, OPERATION_EXECUTE, runner["attempt"] + 1, window)

    def adopt(self, state, terminal):
        """SCAN-RUNNER-6: a completed outcome, bound to this generation and slot, becomes bundle_ready."""
        runner = state["runner"]
        assignment = state["assignment"]
        bundle_id = reservation_of(assignment)[1]
        root = self.root_of(runner)
        if root is None:
            raise RunnerProtocolError(detail="a completed generation whose root is gone")
        paths = RunnerPaths(root)
        with open(paths.input, "rb") as handle:
            if sha256_hex(handle.read(MAX_PENDING_BYTES + 1)) != runner["input_sha256"]:
                raise RunnerProtocolError(detail="a runner input changed after its digest was recorded")
        outcome = terminal["outcome"]
        deadline = runner["scan_deadline_at"] if runner["operation"] == OPERATION_EXECUTE \
            else runner["watchdog_deadline_at"]
        if terminal["generation"] != runner["generation"] or terminal["input_sha256"] != runner["input_sha256"]:
            raise RunnerProtocolError(detail="a terminal for another generation")
        if parse_instant(terminal["decided_at"]) > parse_instant(deadline):
            raise RunnerProtocolError(detail="a completion after its deadline")  # SCAN-RUNNER-5: a late result is not trusted as on time
        identity = assignment_binding(assignment, self.slot_id)
        if not same(outcome["identity"], identity):
            raise RunnerProtocolError(detail="an outcome for another assignment")
        if outcome["last_event_sequence"] != self.last_sequence:
            raise RunnerProtocolError(detail="an outcome whose event tail is incomplete")
        if outcome["status"] != "succeeded" or not isinstance(outcome["bundle"], dict):
            raise RunnerProtocolError(detail="the scan did not succeed")
        declared = outcome["bundle"]
        if declared["ready_relative_path"] != "ready/%s.jsonl" % bundle_id:
            raise RunnerProtocolError(detail="a bundle in another place")
        source = os.path.join(root, "bundle", declared["ready_relative_path"])
        target = self.ready_path(bundle_id)
        header = bundle_header(identity, runner)
        found = source if os.path.lexists(source) else target  # a crash may have moved it already
        meta = validate_bundle_file(found, assignment, self.slot_id, header)
        if (meta["payload_sha256"], meta["bytes"], meta["events_sha256"]) != (
                declared["payload_sha256"], declared["bytes"], declared["events_sha256"]):
            raise RunnerProtocolError(detail="a bundle other than the one the outcome names")
        if found == source:
            os.replace(source, target)  # SCAN-BUNDLE-4: same filesystem, atomic
            fsync_dir(os.path.dirname(target))
        state = self.janitor(state)
        state.update(phase="bundle_ready", bundle={"bytes": meta["bytes"], "payload_sha256": meta["payload_sha256"],
                                                   "canonical_scan_event_hash": meta["events_sha256"]})
        return self.save(state)

    # -- the whole of it ---------------------------------------------------------
    def run_generations(self, state):
        """Generations until one completes and is adopted; RunnerProtocolError when none can."""
        if state["runner"] is None:
            state = self.new_generation(state, OPERATION_EXECUTE, 1)
            decision, terminal = self.launch(state)
        else:
            decision, terminal = self.recover(state)
        while True:
            state = self.state
            if decision == "completed":
                return self.adopt(state, terminal)
            state = self.next_generation(state, decision)
            decision, terminal = self.launch(state)

    def execute(self, state):
        """Run the assignment's scan; bundle_ready, or terminal_pending with the reason (SCAN-ASSIGN-2)."""
        try:
            check_assignment(state["assignment"], CAPABILITIES)
        except AssignmentIncompatible as exc:
            return self.make_report(state, PROCESS_FAILED, Diagnostic(
                self, "assigned", "worker_contract_invalid." + exc.member, "PROTOCOL", exc))
        try:
            return self.run_generations(state)
        except (StopRequested, ContainmentPending):
            raise
        except RunnerProtocolError as exc:
            failure, code, category = PROCESS_FAILED, "runner_protocol_failed", "PROTOCOL"
            error = exc
        except OSError as exc:
            failure, code, category = STORAGE_FAILED, "client_storage_failed", "STORAGE"
            error = exc
        except Exception as exc:
            if stop_requested():
                raise StopRequested("stop requested") from None
            failure, code, category = PROCESS_FAILED, "client_process_failed", "INTERNAL"
            error = exc
        current = self.state
        if current.get("runner"):
            current = self.save(self.janitor(current)) if current["runner"]["status"] in (
                "exited", "timed_out", "fenced") else current
        return self.make_report(current, failure, Diagnostic(
            self, "scanning", code, category, error, exit_code=self.last_exit))


# 7.2 A slot ===================================================================
# One thread per slot repeats step(): load the state, act on it, and persist
# each transition before the request that depends on it (SCAN-STATE-4).  A
# step that fails leaves the state as it was and waits on the jittered error
# schedule (SCAN-BACKOFF-1); the next step starts again from the file.

WORK, IDLE, NO_WORK, NOTHING = "work", "idle", "no_work", "nothing"  # what a step did: it decides the wait
RESOLUTIONS = ("bundle_accepted", "prebundle_report", "expired")  # SCAN-RECONCILE-2: any other is not ours to act on
RECONCILED_STATUSES = (404, 409, 410)  # SCAN-RECONCILE-6: the statuses that ask the server


def check_assignment(assignment, capabilities):
    """SCAN-ASSIGN-1/2, SCAN-PEER-2: what the worker reads of an assignment; AssignmentIncompatible else.

    The upstream keeps any JSON object a 201 carries and reads the members it
    needs with .get(); its validator is not in the seed.  So this reads only
    what the scan needs, in the order of SCAN-ASSIGN-1, ignores every other
    member at every level (a later server release adds them), and takes the
    number and instant forms the upstream takes (D25, D26).  What it returns
    is the worker's own spelling: whole numbers, epoch seconds, targets of
    exactly four members.
    """
    def need(ok, member):
        if not ok:
            raise AssignmentIncompatible(member)

    need(isinstance(assignment, dict), "assignment")
    reservation = assignment.get("reservation")
    need(isinstance(reservation, dict), "reservation")
    rid = upstream_int(reservation.get("reservation_id"))
    need(rid is not None and is_reservation_id(rid), "reservation.reservation_id")
    need(is_long_id(reservation.get("bundle_id")), "reservation.bundle_id")
    need(is_long_id(reservation.get("scan_event_id")), "reservation.scan_event_id")
    # the capability's source and platform: the reservation's, else the upstream's top-level copies
    source = reservation.get("source", assignment.get("source"))
    need(short_text(source), "reservation.source")
    platform = reservation.get("platform", assignment.get("platform"))
    need(short_text(platform), "reservation.platform")
    declared = upstream_int(reservation.get("declared_bundle_bytes"), cut=True)
    need(declared is not None and 1 <= declared <= MAX_SAFE_INTEGER, "reservation.declared_bundle_bytes")
    deadlines = assignment.get("deadlines")
    need(isinstance(deadlines, dict), "deadlines")
    # the upstream's deadline: deadlines.assignment_deadline_at, else reservation.remote_expires_at
    deadline = read_instant(deadlines.get("assignment_deadline_at") or reservation.get("remote_expires_at"))
    need(deadline is not None, "deadlines.assignment_deadline_at")
    timeout = upstream_int(deadlines.get("target_scan_timeout_seconds"), cut=True)
    need(timeout is not None and 1 <= timeout <= MAX_SAFE_INTEGER, "deadlines.target_scan_timeout_seconds")
    need(is_digest(assignment.get("execution_snapshot_sha256")), "execution_snapshot_sha256")
    need(short_text(assignment.get("planning_kind")), "planning_kind")
    targets = assignment.get("targets")
    need(isinstance(targets, list) and 1 <= len(targets) <= MAX_TARGETS
         and all(isinstance(target, dict) for target in targets), "targets")
    pins, names = [], set()
    for target in targets:
        name = target.get("name")
        # D33: the name goes into every finding and target_done line, and must tell the targets apart
        need(isinstance(name, str) and TARGET_NAME_RE.fullmatch(name) is not None and name not in names,
             "targets.name")
        names.add(name)
        size = upstream_int(target.get("size"))  # D25: a pin: 10.0 is 10 bytes, 10.5 is no size
        need(size is not None and 0 <= size <= MAX_TARGET_BYTES, "targets.size")
        need(is_digest(target.get("sha256")), "targets.sha256")
        need(presigned_url_ok(target.get("url")), "targets.url")
        pins.append({"name": name, "size": size, "sha256": target["sha256"], "url": target["url"]})
    need([source, platform, assignment["planning_kind"]] in [list(c) for c in capabilities], "capability")
    return {"reservation_id": rid, "bundle_id": reservation["bundle_id"], "scan_event_id": reservation["scan_event_id"],
            "execution_snapshot_sha256": assignment["execution_snapshot_sha256"], "declared_bundle_bytes": declared,
            "assignment_deadline": deadline, "target_scan_timeout_s": timeout, "targets": pins}


def presigned_url_ok(url):
    """SCAN-ASSIGN-1: an https URL with a host, no user or fragment, a query allowed; never quoted anywhere."""
    if not isinstance(url, str) or not 1 <= len(url) <= 8192 or any(ord(c) <= 32 or ord(c) >= 127 for c in url):
        return False
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return False
    return (parts.scheme == "https" and bool(parts.hostname) and parts.username is None and parts.password is None
            and not parts.fragment and port != 0 and parts.path.startswith("/"))


class Slot(RunnerControl):
    """One slot: its state file, its thread, its current assignment's diagnostics."""

    def __init__(self, worker, slot_id, claim_enabled):
        self.worker = worker
        self.api = worker.api
        self.slot_id = slot_id
        self.files = SlotFiles(worker.config.state_dir, slot_id)
        self.claim_enabled = claim_enabled  # SCAN-SLOT-2: a leftover slot beyond --parallelism never claims
        self.first_step = True
        self.state = None  # the state as last loaded or saved
        self.assignment = None  # for events and diagnostics
        self.diagnostics = []  # SCAN-TERMINAL-2: this assignment's failures so far, oldest first
        self.failures = 0  # failed steps in a row (SCAN-BACKOFF-1)
        self.said_past_deadline = None  # the reservation whose past-deadline line was printed
        self.last_sequence = 0  # the runner's last event drained
        self.last_exit = None  # the runner's last exit status, for a diagnostic
        self.ended = None  # "retired", "stopped" or "died", once the thread is over
        self.thread = None

    # -- the thread -------------------------------------------------------------
    def may_claim(self):
        return self.claim_enabled and not FLOW.draining.is_set()  # SCAN-STOP-2: no new claim in a drain

    def run(self):
        try:
            self._loop()
        except StopRequested:
            self.ended = "stopped"
        except ContainmentPending:
            say("worker slot %d: containment authority remains pending" % self.slot_id)  # SCAN-SLOT-4: the operator learns why the slot stopped claiming
            self.ended = "died"
        except BaseException:  # SCAN-SLOT-4: anything the state machine does not cover ends the worker
            if stop_requested():
                self.ended = "stopped"
            else:
                say("worker slot %d: worker operation failed" % self.slot_id)
                self.ended = "died"
        finally:
            PROCESS.wake()

    def _loop(self):
        while True:
            if stop_requested():
                raise StopRequested("stop requested before the next step")
            if not self.may_claim() and not self.files.exists():
                reason = "graceful_drain" if FLOW.draining.is_set() else "lowered_parallelism_recovery_complete"
                self.assignment = None
                self.emit("stopped", reason=reason)
                say("worker slot %d: retired (%s)" % (self.slot_id, reason))  # SCAN-SLOT-2: a fixed reason, never a value
                self.ended = "retired"
                return
            try:
                kind, delay = self.step()
                self.failures = 0
            except (StopRequested, ContainmentPending):
                raise
            except Exception as exc:
                if stop_requested():
                    raise StopRequested("stop requested") from None
                self.failures += 1
                say("worker slot %d: %s" % (self.slot_id, summary_of(exc)))  # SCAN-OUTPUT-1: a fixed line
                kind, delay = "error", self.error_delay(exc)
            if kind == WORK:
                delay = 0.0
            elif kind in (IDLE, NOTHING):
                delay = self.worker.config.poll_s
            self.wait(max(MIN_STEP_S, delay))  # SCAN-BACKOFF-4: never more often than every 0.1 s

    def wait(self, seconds):
        """Sleep in the kernel; a stop (and, for a slot that holds nothing, a drain) wakes it at once."""
        if FLOW.draining.is_set() or self.files.exists():
            FLOW.stopping.wait(seconds)
        else:
            FLOW.either.wait(seconds)

    def error_delay(self, exc):
        """SCAN-BACKOFF-1/2: equal jitter on a doubling base, capped; a Retry-After is a floor."""
        base = self.worker.config.error_delay_s
        delay = jittered(min(base * 2 ** min(self.failures - 1, 16), BACKOFF_CAP_FACTOR * base))
        if isinstance(exc, WorkerHTTPError) and exc.status in (429, 503) and exc.retry_after is not None:
            delay = max(delay, exc.retry_after)
        return delay

    # -- events -----------------------------------------------------------------
    def emit(self, phase, timestamp=None, phase_started_at=None, **extras):
        """SCAN-PROGRESS-1: one phase event for the journal (the outbox sends those with a reservation)."""
        assignment = self.assignment if isinstance(self.assignment, dict) else {}
        reservation = assignment.get("reservation") if isinstance(assignment.get("reservation"), dict) else {}
        deadlines = assignment.get("deadlines") if isinstance(assignment.get("deadlines"), dict) else {}

        def instant_or_none(holder, key):
            moment = read_instant(holder.get(key))  # D26: written back in the worker's own form
            return instant_text(moment) if moment is not None else None

        rid = upstream_int(reservation.get("reservation_id"))
        progress = {"attempt": attempt_of(assignment)}
        progress.update(extras)
        now = utc_now_text()
        self.worker.journal.emit({
            "slot_id": self.slot_id, "phase": phase,
            "reservation_id": rid if rid is not None and is_reservation_id(rid) else None,
            "source": source_of(assignment) if assignment else None,
            "scan_deadline_at": instant_or_none(deadlines, "scan_deadline_at") or instant_or_none(
                reservation, "scan_deadline_at"),
            "assignment_deadline_at": instant_or_none(deadlines, "assignment_deadline_at"),
            "progress": progress, "timestamp": timestamp or now, "phase_started_at": phase_started_at or now,
        })

    def resume_event(self, state):
        """The first step of a life says where the slot stands (the upstream's resume events)."""
        if state is None:
            self.emit("idle", reason="startup")
        elif state["phase"] == "claiming":
            self.emit("claiming", recovered=True)
        elif state["phase"] == "assigned":
            if state["runner"] is None:
                self.emit("assigned", recovered=True)
        elif state["phase"] == "bundle_ready":
            self.emit("backoff", recovered=True, reason="bundle_upload_recovery")
        else:
            self.emit("backoff", recovered=True, reason="terminal_reconciliation_recovery")

    # -- files ------------------------------------------------------------------
    def save(self, state):
        self.files.save(state)  # SCAN-STATE-3: checked before it is written
        self.state = state
        return state

    def ready_path(self, bundle_id):
        return os.path.join(self.worker.config.bundle_dir, "ready", "%s.jsonl" % bundle_id)

    # -- the step ---------------------------------------------------------------
    def step(self):
        state = self.files.load()  # SCAN-STATE-5: a file it cannot read raises, and stays as it is
        self.state = state
        if self.first_step:
            self.first_step = False
            self.assignment = state.get("assignment") if state else None
            self.resume_event(state)
        if state is None:
            if not self.may_claim():
                return NOTHING, None
            state = self.save({"schema": SLOT_STATE_SCHEMA, "phase": "claiming",
                               "request_id": secrets.token_hex(16)})  # SCAN-CLAIM-1: on disk before the claim
            self.assignment = None
            self.emit("claiming")
        if state["phase"] == "claiming":
            return self.claim(state)
        return self.step_assignment(state)

    def claim(self, state):
        """SCAN-CLAIM-2..6: the claim with the persisted id, and what each answer means."""
        answer = self.api.claim(state["request_id"], self.worker.build)  # SCAN-CLAIM-3: the same id until answered
        if answer.status == 204:
            retry_after = header_int(answer.headers.get("Retry-After"))
            reason = answer.headers.get("X-Truf-No-Work-Reason")
            # SCAN-CLAIM-4, D25: whole seconds as the upstream's int() reads them ("+5", " 05"); no HTTP-date
            if retry_after is None or not MIN_RETRY_AFTER_S <= retry_after <= MAX_RETRY_AFTER_S:
                raise WorkerClientError("a no-work answer without a usable Retry-After")
            if reason is not None and reason.strip() not in NO_WORK_REASONS:
                raise WorkerClientError("a no-work answer with an unknown reason")
            self.files.delete()  # SCAN-CLAIM-4: the next claim takes a fresh id
            extras = {"retry_after_seconds": retry_after,
                      "next_claim_at": instant_text(time.time() + retry_after)}
            if reason is not None:
                extras["reason"] = reason.strip()
            self.emit("backoff", **extras)
            return NO_WORK, retry_after * random.uniform(1.0, 1.0 + NO_WORK_JITTER)  # SCAN-BACKOFF-3: never early; jittered so a fleet does not poll in step
        body = parse_object(answer.body)
        if answer.status == 200:
            resolution = body.get("resolution") if body else None
            if not claim_resolution_ok(resolution):
                raise WorkerClientError("a claim resolution of another shape")  # SCAN-CLAIM-5: state kept
            self.files.delete()
            say("worker slot %d: reservation %d resolved (%s)" % (
                self.slot_id, upstream_int(resolution["reservation_id"]), resolution["resolution"]))
            self.emit("idle", reason="claim_reconciled")
            return WORK, None
        assignment = body.get("assignment") if body else None
        if not isinstance(assignment, dict):
            raise WorkerClientError("an assignment answer without an assignment")  # SCAN-CLAIM-6: state kept, the same id claimed again
        reservation_of(assignment)  # D5: no usable identity, nothing is kept; the same id is claimed again
        state = self.save({"schema": SLOT_STATE_SCHEMA, "phase": "assigned", "assignment": assignment,
                           "runner": None, "retained_work": []})
        self.assignment = assignment
        self.diagnostics = []
        self.emit("assigned")
        return self.step_assignment(state)

    def step_assignment(self, state):
        assignment = state["assignment"]
        self.assignment = assignment
        if stale_matches(self.files.stale_record(), assignment):
            self.finish_stale(state)  # SCAN-RECONCILE-9: the crash window closes with no request
            return WORK, None
        status = self.ask_status(state)  # SCAN-RECONCILE-1: the server is asked before anything is repeated
        if status is None:
            return WORK, None
        phase = state["phase"]
        if phase == "awaiting_resolution":
            return IDLE, None  # SCAN-RECONCILE-8: only status reads until the server decides
        if phase == "assigned":
            # SCAN-ASSIGN-3: the status's deadline, else the reservation's (D26: as fromisoformat reads them)
            expires = read_instant(status.get("expires_at"))
            if expires is None:
                reservation = assignment.get("reservation") if isinstance(assignment.get("reservation"), dict) else {}
                expires = read_instant(reservation.get("remote_expires_at"))
            rid = reservation_of(assignment)[0]
            if expires is not None and expires <= time.time():
                if self.said_past_deadline != rid:  # SCAN-ASSIGN-3: one line, then quiet polling
                    self.said_past_deadline = rid
                    say("worker slot %d: reservation %d is past its deadline; waiting for the server"
                        % (self.slot_id, rid))
                return IDLE, None
        if status.get("state") != "scanning" and phase != "bundle_ready":
            raise WorkerClientError("an assignment the server no longer lets run")
        if phase == "terminal_pending":
            return self.send_terminal(state)
        if phase == "assigned":
            state = self.execute(state)
            if state["phase"] == "terminal_pending":
                return self.send_terminal(state)
        if state["phase"] == "bundle_ready":
            return self.upload(state)
        raise WorkerClientError("a phase this step cannot act on")

    # -- resolutions -------------------------------------------------------------
    def ask_status(self, state):
        """The reservation's status; None when the answer settled the state (stale, or resolved)."""
        try:
            status = self.api.status(reservation_of(state["assignment"])[0])
        except WorkerHTTPError as exc:
            if exc.status in RECONCILED_STATUSES:  # SCAN-RECONCILE-6: to the status read itself, the state is stale
                self.mark_stale(state, exc.status, exc.code)
                return None
            raise
        return None if self.resolved(state, status) else status

    def resolved(self, state, status, known_digest=None):
        """SCAN-RECONCILE-2..5: True (and cleaned up) when `status` resolves what the slot holds."""
        if not isinstance(status, dict) or not status.get("resolution"):
            return False  # as the upstream: a resolution that is empty, null, false or 0 is none yet
        rid, bundle_id, event_id = reservation_of(state["assignment"])
        resolution = status["resolution"]
        if (upstream_int(status.get("reservation_id")) != rid  # D25: 12.0 and "12" name reservation 12
                or status.get("bundle_id") != bundle_id or status.get("scan_event_id") != event_id
                or resolution not in RESOLUTIONS or not is_digest(status.get("receipt_id"))):
            raise WorkerClientError("a resolution for something this slot does not hold")  # SCAN-RECONCILE-2: else another slot's work is closed as ours
        phase = state["phase"]
        if resolution == "bundle_accepted":
            if phase not in ("assigned", "bundle_ready", "awaiting_resolution") or not is_digest(
                    status.get("payload_sha256")):
                raise WorkerClientError("bundle_accepted in a phase without a bundle")
            path = self.ready_path(bundle_id)
            if os.path.lexists(path) and known_digest != status["payload_sha256"]:
                # SCAN-RECONCILE-3: believed only for the bytes held
                meta = validate_bundle_file(path, state["assignment"], self.slot_id)
                if meta["payload_sha256"] != status["payload_sha256"]:
                    raise WorkerClientError("bundle_accepted for other bytes than the bundle held")
        elif resolution == "prebundle_report":
            terminal = state.get("terminal")
            if phase not in ("terminal_pending", "awaiting_resolution") or terminal is None:  # D3
                raise WorkerClientError("prebundle_report without a report held")
            if status.get("failure_code") != terminal["failure_code"] or status.get(
                    "payload_sha256") != digest_of(terminal, ascii=True):
                raise WorkerClientError("prebundle_report for another report")  # SCAN-RECONCILE-4: else a report we never sent counts as ours
        self.cleanup(state, "resolved (%s)" % resolution, "terminal_reconciled")
        return True

    def cleanup(self, state, outcome, reason):
        """SCAN-RECONCILE-5: the ready bundle, then the state; then the line, the event, the leftovers."""
        self.fence_recorded_runner(state)
        rid, bundle_id, _ = reservation_of(state["assignment"])
        remove_file(self.ready_path(bundle_id))
        self.files.delete()
        self.release_work(state)
        say("worker slot %d: reservation %d %s" % (self.slot_id, rid, outcome))
        self.emit("idle", reason=reason)
        self.assignment, self.diagnostics, self.state = None, [], None

    def mark_stale(self, state, status_code, code):
        """SCAN-RECONCILE-9: the record first, then the cleanup; no report for stale work."""
        self.files.write_stale(stale_record_for(state["assignment"], status_code, code))
        self.finish_stale(state)

    def finish_stale(self, state):
        self.cleanup(state, "discarded as stale", "stale_reconciled")
        self.files.delete_stale()  # D8: its work is done once the state is gone

    def reconcile(self, state, exc):
        """SCAN-RECONCILE-6..8: a mutation answered 404, 409 or 410 asks the server what happened."""
        status = self.ask_status(state)
        if status is None:
            return WORK, None
        if exc.status == 409 and status.get("state") == "scanning":
            conflict = state.get("transport_conflict")
            attempts = conflict["attempts"] + 1 if conflict and conflict["code"] == exc.code else 1
            if attempts == 1:  # SCAN-RECONCILE-7: the first strike survives a restart
                self.save(dict(state, transport_conflict={"status_code": 409, "code": exc.code, "attempts": 1}))
                return IDLE, None
            state = dict((k, v) for k, v in state.items() if k != "transport_conflict")
            if state["phase"] == "bundle_ready":
                conflict_diagnostic = Diagnostic(self, "uploading", "client_result_conflict", "PROTOCOL", exc,
                                                 http_error=exc)
                return self.report_now(state, PROCESS_FAILED, conflict_diagnostic)
            self.save(dict(state, phase="awaiting_resolution", stale={"status_code": 409, "code": exc.code}))
            return IDLE, None
        if exc.status == 410:  # SCAN-RECONCILE-8: wait for the server's decision
            self.save(dict(state, phase="awaiting_resolution", stale={"status_code": 410, "code": exc.code}))
            return IDLE, None
        self.mark_stale(state, exc.status, exc.code)
        return WORK, None

    # -- reports ----------------------------------------------------------------
    def make_report(self, state, failure, diagnostic):
        """SCAN-TERMINAL-4: the fitted report is persisted before it is first sent."""
        diagnostics = (self.diagnostics + [diagnostic])[-MAX_DIAGNOSTICS:]
        report = fitted_report(failure, diagnostics)
        new = dict((k, v) for k, v in state.items() if k not in ("transport_conflict", "stale"))
        new.update(phase="terminal_pending", terminal=report)
        self.save(new)
        say("worker slot %d: reservation %d reported (%s)" % (
            self.slot_id, reservation_of(state["assignment"])[0], failure[0]))
        return new

    def report_now(self, state, failure, diagnostic):
        return self.send_terminal(self.make_report(state, failure, diagnostic))

    def send_terminal(self, state):
        """SCAN-TERMINAL-1/4: the stored report's bytes, exactly; the receipt bound to them."""
        rid = reservation_of(state["assignment"])[0]
        try:
            receipt = self.api.terminal(rid, canonical(state["terminal"]))
        except WorkerHTTPError as exc:
            self.emit("backoff", reason="terminal_retry")
            if exc.status in RECONCILED_STATUSES:
                return self.reconcile(state, exc)
            raise
        # SCAN-TERMINAL-1, SCAN-PEER-4: any resolution that binds what the slot holds ends it, `expired` too
        if not self.resolved(state, receipt):
            raise WorkerClientError("a terminal receipt that is not final")
        return WORK, None

    # -- upload -----------------------------------------------------------------
    def upload(self, state):
        """SCAN-UPLOAD-1..5: the adopted bundle, hashed then streamed, its receipt checked."""
        rid, bundle_id, _ = reservation_of(state["assignment"])
        bundle = state["bundle"]
        path = self.ready_path(bundle_id)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return self.report_now(state, BUNDLE_MISSING, Diagnostic(
                self, "uploading", "client_storage_failed", "STORAGE", StorageFailure(True)))
        if not stat.S_ISREG(info.st_mode):
            return self.report_now(state, STORAGE_FAILED, Diagnostic(
                self, "uploading", "client_storage_failed", "STORAGE", StorageFailure()))
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            return self.report_now(state, STORAGE_FAILED, Diagnostic(
                self, "uploading", "client_storage_failed", "STORAGE", exc))
        try:
            try:
                size, digest = hash_fd(fd)  # SCAN-UPLOAD-2: the first pass
                if size != bundle.get("bytes") or digest != bundle.get("payload_sha256"):
                    raise StorageFailure()  # SCAN-UPLOAD-3: only the bytes adopted are ever sent
                self.emit("uploading")
                receipt = self.api.upload(rid, fd, size, digest, lambda: self.emit("awaiting_receipt"))
            except StorageFailure as exc:
                return self.report_now(state, STORAGE_FAILED, Diagnostic(
                    self, "uploading", "client_storage_failed", "STORAGE", exc))
            except WorkerHTTPError as exc:
                self.diagnostics.append(Diagnostic(
                    self, "uploading", "client_result_conflict" if exc.status == 409 else "client_process_failed",
                    "PROTOCOL", exc, http_error=exc))
                self.diagnostics = self.diagnostics[-MAX_DIAGNOSTICS:]
                self.emit("backoff", reason="upload_retry")
                if exc.status in RECONCILED_STATUSES:
                    return self.reconcile(state, exc)
                raise
        finally:
            os.close(fd)
        if receipt.get("payload_sha256") != digest:
            raise WorkerClientError("a receipt for other bytes")  # SCAN-UPLOAD-4: state and bundle kept
        # SCAN-UPLOAD-4, SCAN-PEER-4: any resolution that binds what the slot holds ends it, `expired` too
        if not self.resolved(state, receipt, known_digest=digest):
            raise WorkerClientError("an upload receipt that is not final")
        return WORK, None


def hash_fd(fd):
    """(size, sha256) of an open file, read UPLOAD_CHUNK_BYTES at a time from its start."""
    os.lseek(fd, 0, os.SEEK_SET)
    hasher, size = hashlib.sha256(), 0
    while True:
        chunk = os.read(fd, UPLOAD_CHUNK_BYTES)
        if not chunk:
            return size, hasher.hexdigest()
        hasher.update(chunk)
        size += len(chunk)


def claim_resolution_ok(value):
    """SCAN-CLAIM-5: a 200's resolution object (other members ignored; D25: the id as int() reads it)."""
    rid = upstream_int(value.get("reservation_id")) if isinstance(value, dict) else None
    return (isinstance(value, dict) and rid is not None and is_reservation_id(rid)
            and value.get("resolution") in RESOLUTIONS and is_digest(value.get("receipt_id"))
            and is_long_id(value.get("bundle_id")) and is_long_id(value.get("scan_event_id")))


# 7.3 The worker ===============================================================
# Trees, lock, slots, the progress thread; then the main thread waits for a
# signal or a slot's end and decides how the process ends (SCAN-ARGV-2).

def build_document(template, code_sha256):
    """SCAN-CLAIM-2: the claim's build, CLAIM_BUILD with each placeholder string replaced (D30)."""
    values = {"$capabilities": [list(c) for c in CAPABILITIES], "$code_sha256": code_sha256, "$node": NODE_NAME,
              "$version": NODE_VERSION}

    def fill(node):
        if isinstance(node, str) and node in values:
            return json.loads(json.dumps(values[node]))  # a copy: the build is sent, never shared
        if isinstance(node, dict):
            return dict((key, fill(item)) for key, item in node.items())
        if isinstance(node, (list, tuple)):
            return [fill(item) for item in node]
        return node
    return fill(template)


class Worker(object):
    def __init__(self, config):
        self.config = config
        self.api = ScanApi(config, config.token_source)
        # D31: --no-progress keeps no journal at all (a server without the route would let it grow forever)
        self.journal = Journal(config.state_dir) if config.progress else NoJournal()
        self.outbox = Outbox(self.journal, self.api)
        self.outbox_thread = None
        self.runner_code = RunnerCode(config.node_path, config.state_dir)  # D34: what runners start from
        self.slots = []
        self.lock_fd = None
        self.build = None

    def start(self):
        """Everything before the first request: trees, lock, leftovers, slots, the ready line."""
        config = self.config
        for path in (config.state_dir, config.bundle_dir, config.work_dir):
            ensure_private_dir(path)  # SCAN-STATE-1: 0700, so no other user reads the token's neighbours
        self.lock_fd = take_lock(os.path.join(config.state_dir, "remote-worker.lock"))  # SCAN-STATE-8, first
        for name in ("tmp", "ready", "quarantine"):
            ensure_private_dir(os.path.join(config.bundle_dir, name))
        ensure_private_dir(os.path.join(config.work_dir, "abandoned"))
        slot_ids = persisted_slot_ids(config.state_dir)  # SCAN-SLOT-2, SCAN-STATE-6
        remove_partials(config.state_dir)  # SCAN-STATE-2: an interrupted write's temporary file
        with open(config.node_path, "rb") as handle:
            code_sha256 = sha256_hex(handle.read())
        # SCAN-CLAIM-2: the build document every claim carries, filled once (the server matches work to it)
        self.build = build_document(CLAIM_BUILD, code_sha256)
        self.journal.open()
        ids = sorted(set(range(config.parallelism)) | set(slot_ids))
        self.slots = [Slot(self, slot_id, slot_id < config.parallelism) for slot_id in ids]
        sweep_work(config, self.slots)
        if config.progress:  # D31: no outbox thread without progress
            self.outbox_thread = threading.Thread(target=self.outbox.run, name="worker-progress-outbox",
                                                  daemon=True)
            self.outbox_thread.start()
        for slot in self.slots:
            slot.thread = threading.Thread(target=slot.run, name="worker-slot-%d" % slot.slot_id, daemon=True)
        say("worker: started with %d slots" % len(self.slots))  # SCAN-SLOT-3: before the first request
        for slot in self.slots:
            slot.thread.start()

    def run(self):
        """Wait for signals and slot ends; return the outcome (SCAN-ARGV-2)."""
        drain_deadline = None
        while True:
            timeout = None if drain_deadline is None else max(0.0, drain_deadline.remaining())
            try:
                select.select([PROCESS.wake_r], [], [], timeout)
            except InterruptedError:
                pass
            PROCESS.drain_wake()
            if STOP.requested:
                return self.stop(OUTCOME_STOPPED)  # SCAN-STOP-3: a second signal or SIGINT cuts the work in hand
            if any(slot.ended == "died" for slot in self.slots):
                return self.stop(OUTCOME_SLOT_DIED)  # SCAN-SLOT-4: one dead slot ends the worker, so a supervisor restarts it
            if FLOW.drain_asked and drain_deadline is None:
                say("worker: draining")  # SCAN-STOP-2: no new claims; the work in hand finishes
                drain_deadline = Deadline(self.config.drain_s)
                FLOW.draining.set()
                FLOW.either.set()
            if drain_deadline is not None:
                if all(slot.ended for slot in self.slots):
                    return self.finish_drain()
                if drain_deadline.expired():
                    return self.stop(OUTCOME_STOPPED)  # D11: a drain is bounded; then it is a stop

    def finish_drain(self):
        """SCAN-STOP-2: every slot retired; flush progress for at most PROGRESS_FINAL_DRAIN_S; drained."""
        flush = Deadline(PROGRESS_FINAL_DRAIN_S)
        FLOW.stopping.set()  # the outbox thread leaves; the flush below is the only sender
        if self.outbox_thread is None:
            return OUTCOME_DRAINED  # D31: --no-progress: nothing to flush
        self.journal.changed.set()
        self.outbox_thread.join(min(PROGRESS_REQUEST_TIMEOUT_S + 0.5, flush.remaining()))
        if not self.outbox_thread.is_alive():
            self.outbox.drain(flush.remaining())
        return OUTCOME_DRAINED

    def stop(self, outcome):
        """SCAN-STOP-3/4: every request cut, every runner killed and recorded, bounded joins."""
        say("worker: stopping")
        # The flag; shutdown() of every socket in flight, whatever thread waits on it; a byte in the wake
        # pipe, so a slot in select() on its runner's exit (ExitWatch) leaves at once.
        STOP.handle(signal.SIGINT)
        FLOW.stopping.set()
        FLOW.either.set()
        budget = Deadline(STOP_JOIN_S)
        for slot in self.slots:
            if slot.thread is not None and slot.thread.is_alive():
                slot.thread.join(budget.remaining())
        return outcome


def take_lock(path):
    """SCAN-STATE-8: an exclusive flock held for the process's life; LockHeld when another has it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise LockHeld() from None
    os.ftruncate(fd, 0)
    os.write(fd, ("%d\n" % os.getpid()).encode("ascii"))  # for a person looking: which process holds it
    return fd


def persisted_slot_ids(state_dir):
    """SCAN-SLOT-2, SCAN-STATE-6: ids of every slot file; StartupError for a link, an odd file or a flood."""
    found = []
    with os.scandir(state_dir) as entries:
        for count, entry in enumerate(entries, 1):
            if count > MAX_STATE_DIR_ENTRIES:
                raise StartupError("more entries in the state tree than are scanned")
            match = SLOT_FILE_RE.fullmatch(entry.name)
            if match is None:
                continue
            if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
                raise StartupError("a slot file that is a symlink or not a regular file")
            slot_id = int(match.group(1))
            if slot_id > MAX_SLOT_ID:
                raise StartupError("a slot id beyond the limit")
            found.append(slot_id)
    return found


def remove_partials(directory):
    """SCAN-STATE-2: temporary files of writes a crash interrupted are ignored, and removed."""
    for name in os.listdir(directory):
        if name.startswith(".") and name.endswith(".partial"):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass


def sweep_work(config, slots):
    """Runner roots no slot state refers to: their runner fenced by exact identity, then removed.

    Such a root is left when the worker died between making a root and saving
    its record, or after a state was deleted.  When any slot file cannot be
    read, nothing is swept: its references are unknown.
    """
    referenced = set()
    for slot in slots:
        try:
            state = slot.files.load()
        except (WorkerClientError, OSError):
            return
        if state and state.get("runner"):
            referenced.add(state["runner"]["root_name"])
            referenced.add("abandoned/" + state["runner"]["root_name"])
        referenced.update(state.get("retained_work", []) if state else [])
    for folder, prefix in ((config.work_dir, ""), (os.path.join(config.work_dir, "abandoned"), "abandoned/")):
        for name in os.listdir(folder):
            if ROOT_NAME_RE.fullmatch(name) is None or prefix + name in referenced:
                continue
            root = os.path.join(folder, name)
            try:
                owner = read_private_json(os.path.join(root, "owner.json"), MAX_CURSOR_BYTES)
            except (WorkerClientError, OSError):
                owner = None
            if owner and isinstance(owner.get("identity"), dict) and not identity_problem(owner["identity"]):
                if stop_exact_identity(owner["identity"], RUNNER_STOP_TIMEOUT_S) != "dead":
                    continue  # SCAN-RUNNER-9: not proven gone: leave its root alone
            shutil.rmtree(root, ignore_errors=True)


# How the worker's life ends (STYLE 7: string constants), and the exit status of each (SCAN-ARGV-2).
OUTCOME_DRAINED = "drained"  # every slot retired after the first SIGTERM
OUTCOME_SLOT_DIED = "slot_died"  # SCAN-SLOT-4: a slot could not go on
OUTCOME_START_FAILED = "start_failed"  # a tree or a state file the worker cannot use at start
OUTCOME_LOCKED = "locked"  # SCAN-STATE-8: another worker holds the state tree
OUTCOME_STOPPED = "stopped"  # a second SIGTERM or SIGINT, or a drain past its bound (D11)
OUTCOME_DEFECT = "defect"  # an exception nothing below main() caught: the worker cannot go on
EXIT_STATUS = {OUTCOME_DRAINED: EXIT_OK, OUTCOME_SLOT_DIED: EXIT_SLOT_DIED, OUTCOME_START_FAILED: EXIT_SLOT_DIED,
               OUTCOME_LOCKED: EXIT_LOCKED, OUTCOME_STOPPED: EXIT_STOPPED, OUTCOME_DEFECT: EXIT_SLOT_DIED}


def lifecycle(config):
    """The worker's life: start-up, then the slots until a drain ends, a slot dies or a stop; the outcome."""
    worker = Worker(config)
    try:
        worker.start()
    except LockHeld:
        say("worker: another worker holds this state directory")
        return OUTCOME_LOCKED  # SCAN-STATE-8: two workers on one tree would claim for the same slots
    except (StartupError, WorkerClientError, OSError):
        say("worker: start-up failed")  # SCAN-OUTPUT-1: a fixed line, never which file or why
        return OUTCOME_START_FAILED
    return worker.run()


def defect_outcome(exc):
    """The outcome of an exception that reached main(): stopped when a stop was seen, else a defect.

    Nothing is printed: SCAN-OUTPUT-1 has no line for a defect, and a
    traceback would carry paths and values (SCAN-SECRET-2).
    """
    return OUTCOME_STOPPED if stop_requested() else OUTCOME_DEFECT


def finish(outcome):
    """The exit status of `outcome`, fixed once (the worker prints no final line: each line is said as it happens)."""
    return PROCESS.settle(1, None, EXIT_STATUS[outcome])


# 7.4 The runner child =========================================================
# What `_assignment_runner --root ROOT` does: it reads its input, waits for the
# start gate, scans each target into a bundle and publishes how the generation
# ended.  It prints nothing and never talks to the scan server: everything it
# says goes through the files of its root.

def wait_gate(paths, runner_input, input_sha256, stop, deadline):
    """True once start.json names this generation, this input and this process (SCAN-RUNNER-3).

    False, meaning "exit and do nothing", when the gate names something else,
    cannot be read, or the watchdog deadline passes first.
    """
    try:
        me = process_identity(os.getpid())
    except OSError:
        me = None  # /proc will not say: the pid alone is compared
    wake = stop.wait_fd()
    pause = START_GATE_FIRST_WAIT_S
    while True:
        stop.check("the start gate")
        try:
            gate = load_runner_gate(paths.start)
        except (RunnerProtocolError, OSError):
            return False  # a gate we cannot trust is no gate
        if gate is not None:
            return (gate["generation"] == runner_input["generation"]
                    and gate["input_sha256"] == input_sha256
                    and gate["identity"]["pid"] == os.getpid()
                    and (me is None or gate["identity"] == me))
        if deadline.expired():
            return False
        wait = min(pause, deadline.remaining())
        pause = min(2 * pause, START_GATE_POLL_S)  # the gate is usually open by the time the runner looks
        if wake is not None:
            select.select([wake], [], [], wait)
        else:
            time.sleep(wait)


class _RunnerGeneration(object):
    """One generation's work, once its gate is open: events, targets, bundle, terminal."""

    def __init__(self, paths, runner_input, input_sha256, stop, deadline):
        self.paths = paths
        self.input = runner_input
        self.input_sha256 = input_sha256
        self.stop = stop
        self.deadline = deadline
        self.sequence = 0
        self.phase = "preparing"
        self.phase_started_at = None
        self.events_fd = None

    def emit(self, phase, progress):
        """Append the next event (SCAN-RUNNER-6: sequence from 1, no gap; fsynced once, before the terminal: D36)."""
        now = utc_now_text()
        if phase != self.phase or self.phase_started_at is None:
            self.phase, self.phase_started_at = phase, now
        self.sequence += 1
        append_event(self.events_fd, {"sequence": self.sequence, "generation": self.input["generation"],
                                      "phase": phase, "progress": progress, "timestamp": now,
                                      "phase_started_at": self.phase_started_at})

    def publish(self, status, error_code, bundle):
        outcome = {"status": status, "error": None if error_code is None else {"code": error_code},
                   "final_phase": self.phase, "identity": binding_of(self.input),
                   "last_event_sequence": self.sequence, "bundle": bundle}
        terminal = {"schema": 1, "decision": "completed", "decided_at": utc_now_text(),
                    "generation": self.input["generation"], "input_sha256": self.input_sha256,
                    "outcome": outcome}
        # D36: every event on disk before the terminal that counts them (after a power loss, a terminal
        # whose events were lost would be refused at adoption, and the assignment failed, not retried).
        os.fsync(self.events_fd)
        publish_terminal(self.paths, terminal, "runner")  # SCAN-RUNNER-5: a loss means the worker decided

    def run(self):
        self.events_fd = open_events(self.paths)
        try:
            return self._run()
        finally:
            os.close(self.events_fd)

    def _run(self):
        bundle_id = self.input["bundle_id"]
        self.emit("preparing", {})
        writer = None
        try:
            header = bundle_header(binding_of(self.input), self.input)
            writer = BundleWriter(self.paths.tmp_bundle(bundle_id, self.input["generation"]), header,
                                  self.input["declared_bundle_bytes"])
            if self.input["operation"] == "execute":  # a timeout bundle fetches nothing (SCAN-RUNNER-8)
                for index, target in enumerate(self.input["targets"]):
                    self.stop.check("the next target")
                    self.emit("scanning", {"target": target["name"], "index": index})
                    self.scan_target(target, writer)
            self.stop.check("bundling")
            self.emit("bundling", {})
            meta = writer.commit(self.paths.ready_bundle(bundle_id))
        except (TargetFailed, ScanRefused, BundleTooLarge, BundleInvalid) as exc:
            if writer is not None:
                writer.abort()
            if self.deadline.expired():
                return RUNNER_EXIT_DEADLINE  # the worker's watchdog publishes timed_out (SCAN-RUNNER-4)
            self.publish("failed", exc.code, None)  # SCAN-RUNNER-10: nothing of a failed generation is uploaded
            return RUNNER_EXIT_OK
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        self.publish("succeeded", None, {"ready_relative_path": "ready/%s.jsonl" % bundle_id,
                                         "bytes": meta["bytes"], "payload_sha256": meta["payload_sha256"],
                                         "events_sha256": meta["events_sha256"]})
        return RUNNER_EXIT_OK

    def scan_target(self, target, writer):
        """Fetch one target through the scan, then account for it (SCAN-BUNDLE-3)."""
        scan = TargetScan(target["name"])

        def on_data(chunk):
            for event in scan.feed(chunk):
                writer.add(event)

        fetch_target(target, self.stop, self.deadline, on_data)
        for event in scan.finish():
            writer.add(event)
        writer.add({"type": "target_done", "target": target["name"], "bytes": target["size"],
                    "sha256": target["sha256"]})


def runner_main(root):
    """The runner (SCAN-RUNNER-1..10): the exit status, never an exception; nothing printed.

    No terminal is published when the input is unusable, the gate never
    opens for this process, the watchdog deadline passes, a stop arrives or
    the disk fails: the worker then decides (fenced or timed_out) and retries
    as SCAN-RUNNER-7 says.
    """
    stop = Stop("scan runner", stderr_fd=None)  # stderr is /dev/null; the line would go nowhere
    stop.open()
    install_handlers(stop.handle)  # SIGTERM and SIGINT end the runner promptly: the flag, its sockets shut
    paths = RunnerPaths(root)
    try:
        runner_input, input_sha256 = load_runner_input(paths)
        require(root_binds(paths.name, runner_input["slot_id"], runner_input["reservation_id"],
                           runner_input["generation"]), "runner root name binding")
    except (RunnerProtocolError, OSError):
        return RUNNER_EXIT_FAILED
    watchdog_at = parse_instant(runner_input["watchdog_deadline_at"])
    deadline = Deadline(max(0.0, watchdog_at - time.time()))

    def out_of_time():
        # SCAN-RUNNER-4: a runner stops itself at its watchdog deadline, whatever it is blocked in.
        os._exit(RUNNER_EXIT_DEADLINE)

    try:
        with Watchdog(deadline, out_of_time):
            if not wait_gate(paths, runner_input, input_sha256, stop, deadline):
                return RUNNER_EXIT_OK  # SCAN-RUNNER-3: no gate for us, no effect
            return _RunnerGeneration(paths, runner_input, input_sha256, stop, deadline).run()
    except StopRequested:
        return RUNNER_EXIT_STOPPED
    except Exception:  # RunnerError, OSError, or a defect: no terminal, so the worker fences and retries
        return RUNNER_EXIT_FAILED


# 8 main() =====================================================================

USAGE = build_parser().format_help()  # SCAN-ARGV-1: what --help prints (argparse's text, made once at import)


def main(argv=None):
    """Run the node, or the child mode its command line names; return the exit status.  Never raises."""
    tokens = list(sys.argv[1:] if argv is None else argv)
    for prefix, child_main in CHILD_MODES:  # 6.7: this file, started again as its own child
        if tokens[:len(prefix)] == list(prefix):
            return child_main(tokens[len(prefix):])
    try:
        config = configure(tokens, os.environ)  # 6.3: argv and environment, read once; None: --help
    except UsageError as exc:  # SCAN-ARGV-1: a fixed text naming the option, never its value
        write_all(2, exc.text.encode("ascii", "replace"))
        return exc.exit_code
    if config is None:  # SCAN-NODE-2: the usage, with nothing read and nothing sent
        write_all(1, USAGE.encode("ascii"))
        return EXIT_OK
    try:
        start_process()  # 6.1: wake pipes and stop handlers, before the first request (SCAN-STOP-1)
        outcome = lifecycle(config)
    except BaseException as exc:  # a defect in this file still ends in the final line, never a traceback
        outcome = defect_outcome(exc)
    return finish(outcome)


# 9 Shared blocks ==============================================================
# Verbatim copies of nodes/blocks/*.py, rewritten by `python3 -m conformance.sync`.

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

# The stop and process blocks' objects: made here, at import, because their
# classes are defined in section 9 above; they open nothing until start_process().
STOP = Stop(PROGRAM, stderr_fd=None)  # SCAN-OUTPUT-1: stderr carries only the usage line, so no courtesy line
PROCESS = Process()


if __name__ == "__main__":
    sys.exit(main())
