"""Judging a scan run across the plane: what must hold after every check (ScanPlane.invariants).

    unsafe_lines(stdout)                        # SCAN-OUTPUT-1: lines that are not safe lines
    slot_file_problems(name, raw)               # SCAN-STATE-2, -3: a slot file or stale record as left
    token_hits(tokens, texts)                   # SCAN-SECRET-1: a token, or a 16-character piece of one
    server_violations(server)                   # what the scan server's records show
    PlaneVerdict(plane).violations()            # all of it, and what the lives and the trees show

The plane's invariants() is PlaneVerdict's violations(); a check may call any of the functions on
what it holds.
"""

import collections
import os
import re
import signal as _signal

from conformance import lifecycle as _lifecycle
from conformance.invariants import Violation, read_for_scan
from conformance.planes.scan.protocol import JsonError, canonical, parse_document, token_pieces

__all__ = ["SAFE_LINE", "unsafe_lines", "slot_file_problems", "token_hits", "server_violations", "PlaneVerdict",
           "PHASES", "SLOT_FILE_RE", "STALE_FILE_RE", "TRACEBACK"]

# SCAN-OUTPUT-1: every line the worker may print on stdout.
SAFE_LINE = re.compile(
    r"^(?:worker: (?:started with [0-9]+ slots|draining|stopping|token file rejected, keeping the current token"
    r"|another worker holds this state directory|start-up failed|progress journal full, new events dropped)"
    r"|worker slot [0-9]+: (?:worker API request failed \(HTTP [0-9]{3}\)|worker network operation failed"
    r"|worker protocol or state validation failed|local I/O operation failed|worker operation failed"
    r"|containment authority remains pending"
    r"|reservation [0-9]+ resolved \((?:bundle_accepted|prebundle_report|expired)\)"
    r"|reservation [0-9]+ discarded as stale"
    r"|reservation [0-9]+ reported \((?:client_process_failed|client_storage_failed)\)"
    r"|reservation [0-9]+ is past its deadline; waiting for the server"
    r"|retired \([a-z0-9_]+\)))\Z")
TRACEBACK = "Traceback (most recent call last)"
# SCAN-STATE-3: the phases and their members (required, optional).
ASSIGNED = ("assignment", "phase", "retained_work", "runner", "schema")
PHASES = {
    "claiming": (("phase", "request_id", "schema"), ()),
    "assigned": (ASSIGNED, ()),
    "bundle_ready": (ASSIGNED + ("bundle",), ("transport_conflict",)),
    "terminal_pending": (ASSIGNED + ("terminal",), ("bundle", "transport_conflict")),
    "awaiting_resolution": (ASSIGNED + ("stale",), ("bundle", "terminal", "transport_conflict")),
}
STALE_KEYS = ("bundle_id", "code", "outcome", "recorded_at", "reservation_id", "scan_event_id", "schema",
              "status_code")
SLOT_FILE_RE = re.compile(r"^slot-(0|[1-9][0-9]{0,5})\.json\Z")
STALE_FILE_RE = re.compile(r"^slot-(0|[1-9][0-9]{0,5})-stale\.json\Z")


def unsafe_lines(text):
    """The lines of text (a run's stdout) that are not safe lines, in order."""
    lines = (text or "").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line for line in lines if not SAFE_LINE.match(line)]


def slot_file_problems(name, raw):
    """What is wrong with a slot file (slot-N.json) or stale record (slot-N-stale.json) as a
    worker left it: strict JSON, canonical, the schema and the phase's members."""
    try:
        doc = parse_document(raw)  # the assignment is kept as the server wrote it, floats included (D24)
    except JsonError as exc:
        return ["not strict JSON (%s)" % exc]
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    found = [] if canonical(doc) == raw else ["not canonical JSON"]
    if STALE_FILE_RE.match(name):
        if sorted(doc) != list(STALE_KEYS) or doc.get("schema") != 1 or doc.get("outcome") != "discarded_stale":
            found.append("not exactly the stale record (schema 1, outcome discarded_stale, its six members)")
        return found
    if doc.get("schema") != 2 or isinstance(doc.get("schema"), bool):
        return found + ["schema is %r, not 2" % (doc.get("schema"),)]
    phase = doc.get("phase")
    if phase not in PHASES:
        return found + ["phase %r is not one of %s" % (phase, ", ".join(PHASES))]
    required, optional = PHASES[phase]
    missing = sorted(set(required) - set(doc))
    extra = sorted(set(doc) - set(required) - set(optional))
    if missing or extra:
        found.append("phase %s: %s%s" % (phase, "missing %s" % ", ".join(missing) if missing else "",
                                         ("; " if missing and extra else "") + ("extra %s" % ", ".join(extra)
                                                                                if extra else "")))
    return found


def token_hits(tokens, texts):
    """[(label, token, whole)] for every token found in texts ({label: str or bytes}); whole is
    False when only a TOKEN_PIECE_CHARS-long piece of it is there. One hit per label and token."""
    found = []
    for label, blob in texts.items():
        if blob is None:
            continue
        data = blob if isinstance(blob, (bytes, bytearray)) else str(blob).encode("utf-8", "surrogateescape")
        for token in tokens:
            raw = token.encode("utf-8")
            if raw in data:
                found.append((label, token, True))
            elif any(piece.encode("utf-8") in data for piece in token_pieces(token)):
                found.append((label, token, False))
    return found


def file_texts(paths):
    """{label: bytes} of every file under paths (for token_hits), each read as read_for_scan does."""
    texts = {}
    for root in paths:
        for top, _dirs, names in os.walk(root):
            for name in names:
                path = os.path.join(top, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                try:
                    texts["file %s" % os.path.relpath(path, os.path.dirname(root))] = read_for_scan(path)
                except OSError:
                    continue
    return texts


def _v(name, expected, offenders, describe, diagnosis=None):
    if not offenders:
        return []
    shown = "; ".join(describe(item) for item in offenders[:5])
    more = " (and %d more)" % (len(offenders) - 5) if len(offenders) > 5 else ""
    return [Violation(name, expected, shown + more, diagnosis)]


def server_violations(server):
    """What the scan server's records show against SCAN-SECRET-1, SCAN-UPLOAD-5 and the
    one-outcome rule (SCAN-RECONCILE-3, -4), and SCAN-CLAIM-3 (no reservation to two request ids)."""
    calls = server.calls()
    found = _v("SCAN-SECRET-1: the token only in the Authorization header",
               "no token, nor a 16-character piece of one, in a request target, another header or a body",
               [(c, where) for c in calls for where in c.secret_places],
               lambda item: "%s %s: in %s" % (item[0].method, item[0].path, item[1]),
               "send the token only as 'Authorization: Bearer <token>'")
    different, both, after = [], [], []
    for res in server.reservations():
        digests = []
        for call in res.puts:
            if call.complete and call.body_sha256 not in digests:
                digests.append(call.body_sha256)
        if len(digests) > 1:
            different.append((res, len(digests)))
        accepted_put = next((c for c in res.puts if c.accepted), None)
        accepted_report = next((c for c in res.terminals if c.accepted), None)
        if accepted_put is not None and accepted_report is not None:
            both.append(res)
        if res.touched:  # the check changed the server's mind: what came after is the check's story
            continue
        first = accepted_put or accepted_report
        if first is None:
            continue
        for call in res.puts + res.terminals:
            if call.t <= first.t or call is first:
                continue
            same = (call.verb == first.verb and ((call.verb == "bundle" and call.body_sha256 == first.body_sha256)
                                                 or (call.verb == "terminal" and call.body == first.body)))
            if not same:
                after.append((res, first, call))
    found += _v("SCAN-UPLOAD-5: a retried upload is the same upload", "every whole upload of a reservation "
                "carries the same bytes", different,
                lambda item: "reservation %d: %d different bundles" % (item[0].reservation_id, item[1]),
                "upload the bundle adopted once, byte for byte, on every retry")
    found += _v("SCAN-RECONCILE-3, -4: one outcome per reservation", "an accepted bundle or an accepted report, "
                "never both", both, lambda res: "reservation %d" % res.reservation_id)
    found += _v("SCAN-RECONCILE-1: once accepted, nothing else is sent", "no other mutation for a reservation "
                "after the server accepted one", after,
                lambda item: "reservation %d: %s %s after its %s was accepted" % (
                    item[0].reservation_id, item[2].method, item[2].path.rsplit("/", 1)[-1],
                    "bundle" if item[1].verb == "bundle" else "report"),
                "read the status before any mutation, and believe a resolution")
    granted = collections.defaultdict(list)
    for request_id, rid in server.granted().items():
        granted[rid].append(request_id)
    found += _v("SCAN-CLAIM-3: one request id per reservation", "no reservation granted to two request ids",
                sorted((rid, ids) for rid, ids in granted.items() if len(ids) > 1),
                lambda item: "reservation %d to %d request ids" % (item[0], len(item[1])))
    return found


# ---------------------------------------------------------------- across the plane

class PlaneVerdict(object):
    """What must hold after any check, judged on what one plane saw (ScanPlane.invariants), each
    broken rule a Violation: SCAN-SECRET-1 (the token, or a 16-character piece of it, in no
    output, argv, file of the three trees or TMPDIR, slot state left by any life, request target,
    header but Authorization, or body), SCAN-ASSIGN-4 (target URLs in no output and no body sent),
    SCAN-SECRET-2 (no error marker printed), SCAN-OUTPUT-1 (only safe lines on stdout; no
    traceback), SCAN-STATE-2/-3 (each slot file a life left is a whole canonical schema-2 state),
    SCAN-UPLOAD-5 and one outcome per reservation (server_violations), SCAN-CONFIG-5 (no proxy),
    and SCAN-STOP-4 (no process left; those of a life the harness killed are killed, not judged).

    plane: a ScanPlane once its check is over; its server, tripwire, tokens, targets, trees and
    worker are read, and every life's Watch is stopped."""

    def __init__(self, plane):
        self.plane = plane
        self.tokens = plane.tokens.secrets()
        self.targets = plane.targets.url_secrets()

    def violations(self):
        """Every broken rule, in the order of the class docstring."""
        plane, tokens = self.plane, self.tokens
        found = server_violations(plane.server)
        if plane.tripwire.connections:
            found.append(Violation("SCAN-CONFIG-5: no proxies", "no connection to the tripwire (every proxy "
                                   "variable names it)", "%d connection(s) to it" % len(plane.tripwire.connections),
                                   "connect directly to the origin; never read the proxy variables"))
        bodies = dict(("%s %s #%d" % (c.method, c.path, c.exchange.seq), c.body)
                      for c in plane.server.calls() if c.body)
        for res in plane.server.reservations():
            for path in res.bundle_files.values():
                bodies["the bundle %s" % os.path.basename(path)] = _read_scan(path)
        token_places = token_hits(tokens, dict((k, v) for k, v in bodies.items() if k.startswith("the bundle")))
        found += self._secret_violations(token_places)
        found += self._url_violations(bodies, "a body sent to the scan server")
        runs = []
        for number, (proc, watch, args) in enumerate(plane.worker.runs(), 1):
            watch.stop()
            if proc.result is not None:
                runs.append((number, proc, watch, args))
        for number, proc, watch, args in runs:
            found += self._run_violations(number, proc, watch, args, len(plane.worker.runs()))
        state = {}
        for lives in plane.worker.lifecycles:
            for life in lives.lives:
                state.update(("life %d: %s" % (life.index, name), raw)
                             for name, raw in (life.state_files or {}).items())
                found += self._slot_violations(life)
        texts = file_texts([plane.state_home, plane.data_home, plane.tmp])
        texts.update(state)
        found += self._secret_violations(token_hits(tokens, texts))
        found += self._leftovers()
        return found

    def _secret_violations(self, hits):
        return [Violation("SCAN-SECRET-1: the token stays in the worker", "no token, nor any 16-character piece "
                          "of one, anywhere but the Authorization header",
                          "%s of %s in %s" % ("the whole" if whole else "a 16-character piece",
                                              self.plane.tokens.describe(token), label),
                          "never print, write, pass or send the token but as the bearer")
                for label, token, whole in hits]

    def _url_violations(self, texts, where):
        hits = [(label, secret) for label, blob in texts.items() if blob
                for secret in self.targets if secret.encode("utf-8") in (blob if isinstance(blob, bytes)
                                                                         else blob.encode("utf-8", "replace"))]
        seen = sorted(set(label for label, _secret in hits))
        if not seen:
            return []
        return [Violation("SCAN-ASSIGN-4: a target URL is a credential", "no target URL (its signature or "
                          "token) in %s" % where, "found in %s" % ", ".join(seen[:5]),
                          "keep target URLs in the slot state and the runner's input only")]

    def _run_violations(self, number, proc, watch, args, count):
        """What the number-th of count lives printed, ran and wrote under TMPDIR."""
        result = proc.result
        label = "life %d " % number if count > 1 else ""
        outputs = {label + "stdout": result.stdout, label + "stderr": result.stderr}
        texts = dict(outputs)
        on_argv = any(any(piece in arg for piece in token_pieces(token)) for arg in args for token in self.tokens)
        for pid, argv in (result.seen_cmdlines or {}).items():
            if pid == result.host_pid and on_argv:  # the check put it there (SCAN-TOKEN-4 judges the rest)
                continue
            texts["%sargv of pid %s" % (label, pid)] = "\0".join(argv or [])
        for seen in watch.processes():
            for index, argv in enumerate(seen.argvs):
                if seen.pid == result.host_pid and on_argv and index == 0:
                    continue
                texts["%sargv of pid %d" % (label, seen.pid)] = "\0".join(argv)
        found = self._secret_violations(token_hits(self.tokens, texts))
        found += self._url_violations(outputs, "stdout or stderr")
        for path, is_target in sorted(set((path, secret in self.targets) for path, secret in watch.file_hits)):
            if is_target:
                found.append(Violation("SCAN-ASSIGN-4: a target URL is a credential", "no target URL in a file "
                                       "under TMPDIR", "a target URL's signature or token in %s (under TMPDIR), "
                                       "seen while %slife ran" % (path, label)))
            else:
                found.append(Violation("SCAN-SECRET-1: the token stays in the worker", "no piece of the token in "
                                       "a file under TMPDIR", "a 16-character piece of the token in %s (under "
                                       "TMPDIR), seen while %slife ran" % (path, label)))
        marked = [name for name, text in outputs.items() if self.plane.server.marker in (text or "")]
        if marked:
            found.append(Violation("SCAN-SECRET-2: only safe lines are printed", "no text of an error answer on "
                                   "stdout or stderr", "the server's error marker in %s" % ", ".join(marked)))
        if "--help" not in args:
            bad = unsafe_lines(result.stdout)
            if bad:
                found.append(Violation("SCAN-OUTPUT-1: the lines", "only the safe lines on stdout",
                                       "%s%d other line(s), the first %r" % (label, len(bad), bad[0][:120]),
                                       "print only the fixed lines of SCAN-OUTPUT-1"))
        if TRACEBACK in (result.stderr or ""):
            found.append(Violation("SCAN-OUTPUT-1: the lines", "on stderr only the usage line",
                                   "%sa Python traceback on stderr" % label))
        return found

    def _slot_violations(self, life):
        found = []
        planted = self.plane.trees.planted()
        for name, raw in sorted((life.state_files or {}).items()):
            base = os.path.basename(name)
            if name != base or not (SLOT_FILE_RE.match(base) or STALE_FILE_RE.match(base)):
                continue
            if raw in planted or (len(raw) >= _lifecycle.MAX_STATE_FILE_BYTES
                                  and any(p.startswith(raw) for p in planted)):
                continue  # kept as planted (a snapshot holds the first MAX_STATE_FILE_BYTES of a file)
            problems = slot_file_problems(base, raw)
            if problems:
                found.append(Violation("SCAN-STATE-2, -3: whole, valid state files", "every slot file a life "
                                       "leaves behind is a canonical schema-2 state of its phase",
                                       "after life %d, %s: %s" % (life.index, base, "; ".join(problems[:3])),
                                       "validate before every save; write a new file, fsync, os.replace"))
        return found

    def _leftovers(self):
        found = []
        for lives in self.plane.worker.lifecycles:
            last = lives.current
            result = last.result if last is not None else None
            killed = result is None or result.killed or result.timed_out or last.fired or any(
                signum == _signal.SIGKILL for _t, signum in result.signals)
            for proc, watch, _args in self.plane.worker.runs():
                if not any(life.proc is proc for life in lives.lives):
                    continue
                alive = watch.leftovers(grace_s=0.0 if killed else None)
                watch.kill_leftovers()
                if killed:
                    if alive:
                        self.plane.ctx.note("plane: killed %d process(es) left after a life the harness killed"
                                            % len(alive))
                    continue
                found += [Violation("SCAN-STOP-4: nothing outlives the worker", "no process of the worker alive "
                                    "after its last life exited", "pid %d (%s) was still running; killed"
                                    % (seen.pid, " ".join(seen.argvs[-1][:6]) if seen.argvs else "?"))
                          for seen in alive]
        return found


def _read_scan(path):
    try:
        return read_for_scan(path)
    except OSError:
        return b""
