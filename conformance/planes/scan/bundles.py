"""Reading and judging a scan bundle (SCAN-BUNDLE-1 to -4), and building good ones for tests.

    problems = bundle_problems(path_or_bytes, expect)       # [] when the bundle is good
    report = read_bundle(path_or_bytes, expect)             # BundleReport: header, target_done, ...
    data = build_bundle(expect, slot_id=0, generation=g)    # a good bundle, to break on purpose

``expect`` says what the bundle must bind to: a plane Reservation (reservations.Reservation), or a
dict with reservation_id, bundle_id, scan_event_id, execution_snapshot_sha256, targets (the
pins: name, size, sha256, in the assignment's order), declared_bundle_bytes, and optionally
slot_id and generation (checked when given). A bundle is read line by line, each read bounded
by MAX_BUNDLE_LINE_BYTES + 1, so a bundle of any size costs one line of memory; every problem
names the line it is on. What is judged is the platform's envelope (D23): the header and its
binding, canonical lines, the line limit, the trailer's count and digest, one target_done per
target matching its pins, the size; the scan's own events (findings) only as "an object with a
string type".
"""

import collections
import hashlib
import io
import re

from conformance.planes.scan import deploy as _deploy
from conformance.planes.scan.protocol import JsonError, canonical, parse_strict

__all__ = ["bundle_problems", "read_bundle", "build_bundle", "BundleReport", "expectation", "HEADER_KEYS",
           "TRAILER_KEYS", "TARGET_DONE_KEYS", "FORMAT", "MAX_BUNDLE_LINE_BYTES", "SCAN_STAGE_PHASES"]

# The contract's values; the checks read the ones in force (--deploy, D30) from deploy at call time.
FORMAT = _deploy.DEFAULTS["BUNDLE_FORMAT"]
MAX_BUNDLE_LINE_BYTES = _deploy.DEFAULTS["MAX_BUNDLE_LINE_BYTES"]   # one line, its newline included (SCAN-BUNDLE-1)
HEADER_KEYS = ("bundle_id", "execution_snapshot_sha256", "format", "generation", "reservation_id", "scan_event_id",
               "slot_id", "status", "timeout_phase")
TRAILER_KEYS = ("event_count", "events_sha256", "type")
TARGET_DONE_KEYS = ("bytes", "sha256", "target", "type")
STATUSES = ("completed", "timed_out")
# The phases a runner event names (section *The runner*): a timed_out bundle's timeout_phase.
SCAN_STAGE_PHASES = ("preparing", "scanning", "bundling")
# More problems than this in one bundle are summed up in one last line.
MAX_PROBLEMS = 20

_GENERATION_RE = re.compile(r"^[a-f0-9]{32}\Z")
_DIGEST_RE = re.compile(r"^[a-f0-9]{64}\Z")

BundleReport = collections.namedtuple("BundleReport", "size sha256 header events event_count events_sha256 "
                                                      "trailer target_done problems")
BundleReport.__doc__ = """What a bundle holds: its size and SHA-256, its header (dict or None), its
events (the first MAX_KEPT_EVENTS event documents), how many event lines and their digest as read,
the trailer (dict or None), the target_done events in order, and the problems found."""
# A report keeps this many event documents (findings can be many).
MAX_KEPT_EVENTS = 1000


def expectation(reservation, slot_id=None, generation=None):
    """The dict `expect` of a Reservation (or of a dict that already is one)."""
    if isinstance(reservation, dict):
        found = dict(reservation)
    else:
        found = dict(reservation.identity, targets=[dict(t) for t in reservation.targets],
                     declared_bundle_bytes=reservation.declared_bundle_bytes)
    if slot_id is not None:
        found["slot_id"] = slot_id
    if generation is not None:
        found["generation"] = generation
    return found


def _open(source):
    if isinstance(source, (bytes, bytearray)):
        return io.BytesIO(bytes(source))
    return open(source, "rb")


def read_bundle(source, expect):
    """A BundleReport of a bundle (a path or bytes) judged against expect (see the module docstring)."""
    expect = expectation(expect)
    problems = []
    digest, events_digest = hashlib.sha256(), hashlib.sha256()
    header = trailer = None
    events, target_done = [], []
    size = event_count = 0
    number = 0
    pending_end = None   # an "end" line: the trailer only if nothing follows it

    def problem(text):
        if len(problems) < MAX_PROBLEMS:
            problems.append(text)
        elif len(problems) == MAX_PROBLEMS:
            problems.append("... and more")

    with _open(source) as handle:
        while True:
            line = handle.readline(_deploy.MAX_BUNDLE_LINE_BYTES + 1)
            if not line:
                break
            number += 1
            size += len(line)
            digest.update(line)
            if len(line) > _deploy.MAX_BUNDLE_LINE_BYTES:
                problem("line %d is longer than %d bytes" % (number, _deploy.MAX_BUNDLE_LINE_BYTES))
                rest = line
                while rest and not rest.endswith(b"\n"):  # skip the rest of the long line
                    rest = handle.readline(_deploy.MAX_BUNDLE_LINE_BYTES + 1)
                    size += len(rest)
                    digest.update(rest)
                if number > 1:
                    event_count += 1
                continue
            if not line.endswith(b"\n"):
                problem("line %d does not end with a newline" % number)
            content = line[:-1] if line.endswith(b"\n") else line
            try:
                doc = parse_strict(content)
            except JsonError as exc:
                problem("line %d is not strict JSON (%s)" % (number, exc))
                doc = None
            if doc is not None and not isinstance(doc, dict):
                problem("line %d is not a JSON object" % number)
                doc = None
            if doc is not None and canonical(doc) != content:
                problem("line %d is not canonical JSON" % number)
            if number == 1:
                header = doc
                _judge_header(doc, expect, problem)
                continue
            if pending_end is not None:
                problem("line %d follows the end line (line %d)" % (number, pending_end[0]))
                event_count += 1
                events_digest.update(pending_end[1])
                pending_end = None
            if isinstance(doc, dict) and doc.get("type") == "end":
                pending_end = (number, line, doc)
                continue
            event_count += 1
            events_digest.update(line)
            if doc is None:
                continue
            if not isinstance(doc.get("type"), str):
                problem("line %d: an event without a string type" % number)
            elif doc["type"] == "target_done":
                target_done.append((number, doc))
            if len(events) < MAX_KEPT_EVENTS:
                events.append(doc)
    if number == 0:
        problem("the bundle is empty")
    elif pending_end is None:
        problem("the last line is not the end line (type end)")
    else:
        trailer = pending_end[2]
        _judge_trailer(trailer, pending_end[0], event_count, events_digest.hexdigest(), problem)
    declared = expect.get("declared_bundle_bytes")
    if declared is not None and size > declared:
        problem("%d bytes, more than declared_bundle_bytes %d (SCAN-BUNDLE-4)" % (size, declared))
    if isinstance(header, dict) and header.get("status") in STATUSES:
        _judge_targets(header["status"], target_done, expect.get("targets") or [], problem)
    return BundleReport(size, digest.hexdigest(), header, events, event_count, events_digest.hexdigest(), trailer,
                        [doc for _n, doc in target_done], problems)


def bundle_problems(source, expect):
    """[] when the bundle is good, else one line per problem (see read_bundle)."""
    return read_bundle(source, expect).problems


def _judge_header(header, expect, problem):
    if header is None:
        problem("line 1 (the header) is not a JSON object")
        return
    if sorted(header) != list(HEADER_KEYS):
        problem("the header's members are %s, not exactly %s" % (", ".join(sorted(header)), ", ".join(HEADER_KEYS)))
    if header.get("format") != _deploy.BUNDLE_FORMAT:
        problem("the header's format is %r, not %r" % (header.get("format"), _deploy.BUNDLE_FORMAT))
    for key in ("reservation_id", "bundle_id", "scan_event_id", "execution_snapshot_sha256"):
        if key in expect and header.get(key) != expect[key]:
            problem("the header's %s is %r, not the reservation's %r (SCAN-BUNDLE-2)"
                    % (key, header.get(key), expect[key]))
    slot = header.get("slot_id")
    if isinstance(slot, bool) or not isinstance(slot, int) or slot < 0:
        problem("the header's slot_id is not a slot id")
    elif expect.get("slot_id") is not None and slot != expect["slot_id"]:
        problem("the header's slot_id is %d, not %d" % (slot, expect["slot_id"]))
    generation = header.get("generation")
    if not isinstance(generation, str) or not _GENERATION_RE.match(generation):
        problem("the header's generation is not 32 lowercase hex digits")
    elif expect.get("generation") is not None and generation != expect["generation"]:
        problem("the header's generation is not the one that wrote it")
    status, phase = header.get("status"), header.get("timeout_phase")
    if status not in STATUSES:
        problem("the header's status is %r, not completed or timed_out" % (status,))
    elif status == "completed" and phase is not None:
        problem("a completed bundle's timeout_phase is %r, not null" % (phase,))
    elif status == "timed_out" and phase not in SCAN_STAGE_PHASES:
        problem("a timed_out bundle's timeout_phase is %r, not one of %s" % (phase, ", ".join(SCAN_STAGE_PHASES)))


def _judge_trailer(trailer, number, event_count, events_sha256, problem):
    if sorted(trailer) != list(TRAILER_KEYS):
        problem("the end line's members are %s, not exactly %s" % (", ".join(sorted(trailer)),
                                                                   ", ".join(TRAILER_KEYS)))
    count = trailer.get("event_count")
    if count != event_count or isinstance(count, bool):
        problem("the end line says event_count %r; %d event lines precede it" % (count, event_count))
    if trailer.get("events_sha256") != events_sha256:
        problem("the end line's events_sha256 is not the digest of the event lines")


def _judge_targets(status, done, targets, problem):
    """SCAN-BUNDLE-3: one target_done per target, in order, matching its pins (a timed_out
    bundle: those it finished, in order)."""
    names = [t.get("name") for t in targets]
    pins = dict((t.get("name"), t) for t in targets)
    seen = []
    for number, doc in done:
        if sorted(doc) != list(TARGET_DONE_KEYS):
            problem("line %d: target_done members are %s, not exactly %s" % (number, ", ".join(sorted(doc)),
                                                                           ", ".join(TARGET_DONE_KEYS)))
        name = doc.get("target")
        pin = pins.get(name)
        if pin is None:
            problem("line %d: target_done for %r, not a target of the assignment" % (number, name))
            continue
        if name in seen:
            problem("line %d: a second target_done for %r" % (number, name))
            continue
        seen.append(name)
        if doc.get("bytes") != pin.get("size") or isinstance(doc.get("bytes"), bool):
            problem("line %d: target_done %r says %r bytes, the pin %r" % (number, name, doc.get("bytes"),
                                                                          pin.get("size")))
        if doc.get("sha256") != pin.get("sha256"):
            problem("line %d: target_done %r names another sha256 than its pin" % (number, name))
    if seen != [n for n in names if n in seen]:
        problem("target_done events are not in the assignment's order (%s)" % ", ".join(map(str, seen)))
    if status == "completed":
        missing = [n for n in names if n not in seen]
        if missing:
            problem("a completed bundle has no target_done for %s" % ", ".join(map(str, missing)))


def build_bundle(expect, slot_id=0, generation="0" * 32, status="completed", timeout_phase=None, events=None,
                 done=None):
    """A bundle's bytes: the header, `events` (documents; default none), a target_done per target
    of `done` (default: every target when completed, none when timed_out), the trailer. For tests
    and for checks that hand-make a bundle."""
    expect = expectation(expect)
    header = {"format": _deploy.BUNDLE_FORMAT, "reservation_id": expect["reservation_id"],
              "bundle_id": expect["bundle_id"],
              "scan_event_id": expect["scan_event_id"],
              "execution_snapshot_sha256": expect["execution_snapshot_sha256"], "slot_id": slot_id,
              "generation": generation, "status": status,
              "timeout_phase": timeout_phase if status == "timed_out" else None}
    targets = expect.get("targets") or []
    if done is None:
        done = [t["name"] for t in targets] if status == "completed" else []
    pins = dict((t["name"], t) for t in targets)
    lines = [canonical(e) + b"\n" for e in (events or [])]
    lines += [canonical({"type": "target_done", "target": name, "bytes": pins[name]["size"],
                         "sha256": pins[name]["sha256"]}) + b"\n" for name in done]
    body = b"".join(lines)
    trailer = {"type": "end", "event_count": len(lines), "events_sha256": hashlib.sha256(body).hexdigest()}
    return canonical(header) + b"\n" + body + canonical(trailer) + b"\n"
