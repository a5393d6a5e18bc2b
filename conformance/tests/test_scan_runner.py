"""Tests of the runner half of nodes/scan_worker.py (sections 3, 7.7 and 8.4).

Run: python3 -m unittest conformance.tests.test_scan_runner
Standard library only; every process and server started here is stopped and reaped.
"""
import hashlib
import http.server
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

from conformance.tests import reference_node

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE_FILE = os.path.join(ROOT, "nodes", "scan_worker.py")

rp = reference_node.load_node("scan_worker", "runner")
from nodes.blocks.deadline import Deadline  # noqa: E402
from nodes.blocks.stop import Stop, StopRequested  # noqa: E402
from nodes.blocks.strict_json import canonical_bytes  # noqa: E402

CA_DIR = os.path.join(ROOT, "conformance", "ca")
SHORT_TIMEOUT_S = 5.0  # a step that should take milliseconds, on a noisy machine
LONG_TIMEOUT_S = 30.0  # a whole runner process, start to exit

AKIA = "AKIAABCDEFGHIJKLMNOP"  # 20 characters, the aws_access_key_id rule
GEN = "a" * 32
BUNDLE_ID = "b" * 32
SCAN_EVENT_ID = "c" * 40
SNAPSHOT = "d" * 64

_saved_cert_file = None


def setUpModule():
    # The runner trusts the harness's test CA through SSL_CERT_FILE, as in a real run (D17).
    global _saved_cert_file
    _saved_cert_file = os.environ.get("SSL_CERT_FILE")
    os.environ["SSL_CERT_FILE"] = os.path.join(CA_DIR, "ca.pem")


def tearDownModule():
    if _saved_cert_file is None:
        os.environ.pop("SSL_CERT_FILE", None)
    else:
        os.environ["SSL_CERT_FILE"] = _saved_cert_file


def sha(data):
    return hashlib.sha256(data).hexdigest()


def instant(offset_s):
    t = time.time() + offset_s
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % (int(t * 1000) % 1000)


def make_input(targets, operation="execute", timeout_phase=None, watchdog_s=LONG_TIMEOUT_S, declared=1048576,
               slot_id=0, reservation_id=7, generation=GEN):
    return {
        "schema": 1, "generation": generation, "slot_id": slot_id, "reservation_id": reservation_id,
        "bundle_id": BUNDLE_ID, "scan_event_id": SCAN_EVENT_ID, "execution_snapshot_sha256": SNAPSHOT,
        "operation": operation, "timeout_phase": timeout_phase, "attempt": 1,
        "scan_started_at": instant(0), "scan_deadline_at": instant(watchdog_s), "watchdog_deadline_at":
        instant(watchdog_s), "declared_bundle_bytes": declared, "targets": targets,
    }


def header(status="completed", timeout_phase=None, generation=GEN):
    return {"format": "scan-bundle/1", "reservation_id": 7, "bundle_id": BUNDLE_ID,
            "scan_event_id": SCAN_EVENT_ID, "execution_snapshot_sha256": SNAPSHOT, "slot_id": 0,
            "generation": generation, "status": status, "timeout_phase": timeout_phase}


class TempDir(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="runner-part-")
        self.addCleanup(shutil.rmtree, self.tmp, True)


# ---------------------------------------------------------------------------
# The reference scan (SCAN-WORK-1..3)

class TargetScanTest(unittest.TestCase):
    def scan(self, data, chunk=None):
        scan = rp.TargetScan("t.txt")
        events = []
        if chunk is None:
            events += scan.feed(data)
        else:
            for i in range(0, len(data), chunk):
                events += scan.feed(data[i:i + chunk])
        return events + scan.finish()

    def test_planted_akia_key_is_redacted_with_its_fingerprint(self):
        events = self.scan(b"first line\nkey=" + AKIA.encode() + b" tail\n")
        self.assertEqual(events, [{"type": "finding", "target": "t.txt", "line": 2, "rule": "aws_access_key_id",
                                   "fingerprint": sha(AKIA.encode()), "redacted": "AKIA\u2026"}])
        self.assertNotIn(AKIA, json.dumps(events))  # SCAN-WORK-2: the secret never reaches an event
        self.assertEqual(len(canonical_bytes(events[0], ascii=True)) + 1 <= rp.MAX_BUNDLE_LINE_BYTES, True)

    def test_each_rule_matches_and_fails_against_a_broken_input(self):
        cases = {
            "aws_access_key_id": (AKIA, ["AKIAABCDEFGHIJKLMNO", "akiaabcdefghijklmnop", "AKIAabcdefghijklmnop"]),
            "private_key_block": ("-----BEGIN RSA PRIVATE KEY-----",
                                  ["----BEGIN RSA PRIVATE KEY-----", "-----BEGIN rsa PRIVATE KEY-----",
                                   "-----BEGIN RSA PUBLIC KEY-----"]),
            "github_token": ("ghp_" + "A" * 36, ["ghp_" + "A" * 35, "gha_" + "A" * 36, "ghp-" + "A" * 36]),
            "generic_secret_assignment": ("API_KEY = '" + "x" * 16,
                                          ["API_KEY = '" + "x" * 15, "apikey " + "x" * 16, "name = " + "x" * 20]),
        }
        for rule, (good, broken) in cases.items():
            with self.subTest(rule=rule):
                events = self.scan(good.encode() + b"\n")
                self.assertEqual([e["rule"] for e in events], [rule])
                self.assertEqual(events[0]["fingerprint"], sha(good.encode()))
                self.assertEqual(events[0]["redacted"], good[:4] + "\u2026")
                for text in broken:
                    self.assertEqual(self.scan(text.encode() + b"\n"), [], text)

    def test_order_is_line_then_rule_then_position(self):
        token = "ghp_" + "B" * 36
        line1 = ("x " + token + " " + AKIA + " AKIAZZZZZZZZZZZZZZZZ\n").encode()
        line2 = ("password: " + "p" * 20 + "\n").encode()
        events = self.scan(line1 + line2)
        self.assertEqual([(e["line"], e["rule"], e["redacted"]) for e in events],
                         [(1, "aws_access_key_id", "AKIA\u2026"), (1, "aws_access_key_id", "AKIA\u2026"),
                          (1, "github_token", "ghp_\u2026"), (2, "generic_secret_assignment", "pass\u2026")])
        self.assertEqual(events[0]["fingerprint"], sha(AKIA.encode()))
        self.assertEqual(events[1]["fingerprint"], sha(b"AKIAZZZZZZZZZZZZZZZZ"))
        # SCAN-WORK-3: the same bytes give the same events however they are chunked
        for chunk in (1, 7, 4096):
            self.assertEqual(self.scan(line1 + line2, chunk), events)

    def test_long_lines_are_split_at_the_piece_size(self):
        piece = rp.SCAN_LINE_PIECE_BYTES
        self.assertEqual(piece, rp.MAX_BUNDLE_LINE_BYTES // 4)
        # a key wholly inside the third piece of line 1 is found, with line number 1
        inside = b"x" * (2 * piece + 10) + AKIA.encode() + b"y" * 100 + b"\n" + AKIA.encode()
        events = self.scan(inside, chunk=5000)
        self.assertEqual([(e["line"], e["rule"]) for e in events], [(1, "aws_access_key_id"),
                                                                     (2, "aws_access_key_id")])
        # a key straddling a piece boundary is not found: the price of never holding a whole line
        straddle = b"x" * (piece - 10) + AKIA.encode() + b"\n"
        self.assertEqual(self.scan(straddle), [])
        # a line of exactly one piece, then its newline, does not shift the line numbers
        exact = b"z" * piece + b"\n" + AKIA.encode() + b"\n"
        self.assertEqual([e["line"] for e in self.scan(exact, chunk=999)], [2])

    def test_never_holds_more_than_one_piece(self):
        scan = rp.TargetScan("t")
        for _ in range(20):
            scan.feed(b"q" * 10000)
            self.assertLessEqual(len(scan._piece), rp.SCAN_LINE_PIECE_BYTES)

    def test_invalid_utf8_is_replaced_not_fatal(self):
        events = self.scan(b"\xff\xfe" + AKIA.encode() + b"\n")
        self.assertEqual(len(events), 1)

    def test_rules_are_the_four_in_order(self):
        self.assertEqual([name for name, _ in rp.SCAN_RULES],
                         ["aws_access_key_id", "private_key_block", "github_token", "generic_secret_assignment"])


# ---------------------------------------------------------------------------
# Instants

class InstantTest(unittest.TestCase):
    def test_accepts(self):
        self.assertEqual(rp.parse_instant("1970-01-01T00:00:00Z"), 0.0)
        self.assertEqual(rp.parse_instant("1970-01-01T00:00:01+00:00"), 1.0)
        self.assertAlmostEqual(rp.parse_instant("1970-01-01T00:00:00.5Z"), 0.5)
        self.assertAlmostEqual(rp.parse_instant("1970-01-01T00:00:00.123456Z"), 0.123456)
        self.assertEqual(rp.parse_instant("2024-02-29T23:59:59Z"), 1709251199.0)

    def test_refuses(self):
        for text in ("2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-01-01T24:00:00Z",
                     "2026-01-01T00:00:60Z", "2026-01-01T00:00:00", "2026-01-01T00:00:00+01:00",
                     "2026-01-01T00:00:00.1234567Z", "2026-01-01T00:00:00.Z", "2026-01-01 00:00:00Z",
                     "0000-01-01T00:00:00Z", "2026-01-01T00:00:00z", "\u0662026-01-01T00:00:00Z",
                     "2026-01-01T00:00:00Z\n", None, 5, ""):
            self.assertIsNone(rp.parse_instant(text), repr(text))

    def test_now_text(self):
        text = rp.utc_now_text()
        self.assertRegex(text, r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z\Z")
        self.assertLess(abs(rp.parse_instant(text) - time.time()), 5)


# ---------------------------------------------------------------------------
# Roots, private files, input

class RootTest(TempDir):
    def test_root_name(self):
        self.assertEqual(rp.runner_root_name(3, 7, GEN), "worker-assignment-3-7-" + GEN)
        self.assertIsNotNone(rp.ROOT_NAME_RE.fullmatch("worker-assignment-0-1-" + GEN))
        for bad in ((-1, 7, GEN), (0, 0, GEN), (0, 7, "A" * 32), (True, 7, GEN), (0, 7, GEN[:-1])):
            with self.assertRaises(rp.RunnerProtocolError):
                rp.runner_root_name(*bad)
        for bad in ("worker-assignment-01-1-" + GEN, "worker-assignment-0-0-" + GEN, "x/worker-assignment-0-1-" + GEN):
            self.assertIsNone(rp.ROOT_NAME_RE.fullmatch(bad))

    def test_create_root_private_and_digest(self):
        runner_input = make_input([{"name": "a", "size": 1, "sha256": "e" * 64, "url": "https://127.0.0.1:1/a?x=1"}])
        name = rp.runner_root_name(0, 7, GEN)
        root, digest = rp.create_runner_root(self.tmp, name, runner_input)
        paths = rp.RunnerPaths(root)
        for directory in (root, paths.bundle, paths.bundle_tmp, paths.bundle_ready):
            self.assertEqual(os.stat(directory).st_mode & 0o777, 0o700)
        self.assertEqual(os.stat(paths.input).st_mode & 0o777, 0o600)
        with open(paths.input, "rb") as handle:
            data = handle.read()
        self.assertEqual(data, canonical_bytes(runner_input, ascii=True))
        self.assertEqual(digest, sha(data))
        self.assertEqual(rp.load_runner_input(paths), (runner_input, digest))
        with self.assertRaises(FileExistsError):  # a leftover root is never reused
            rp.create_runner_root(self.tmp, name, runner_input)

    def test_create_root_refuses_unbound_or_invalid_input(self):
        target = {"name": "a", "size": 1, "sha256": "e" * 64, "url": "https://h/a"}
        with self.assertRaises(rp.RunnerProtocolError):  # generation in the name differs
            rp.create_runner_root(self.tmp, rp.runner_root_name(0, 7, "f" * 32), make_input([target]))
        bad_inputs = [make_input([dict(target, url="http://h/a")]), make_input([target, target]),
                      make_input([dict(target, name=".hidden")]), make_input([]),
                      make_input([target], operation="timeout_bundle"),
                      make_input([target], timeout_phase="scanning"),
                      dict(make_input([target]), extra=1)]
        for runner_input in bad_inputs:
            with self.assertRaises(rp.RunnerProtocolError):
                rp.create_runner_root(self.tmp, rp.runner_root_name(0, 7, GEN), runner_input)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_write_new_private_refuses_existing_and_links(self):
        path = os.path.join(self.tmp, "f")
        rp.write_new_private(path, b"one")
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
        with self.assertRaises(FileExistsError):
            rp.write_new_private(path, b"two")
        link = os.path.join(self.tmp, "link")
        os.symlink(os.path.join(self.tmp, "elsewhere"), link)
        with self.assertRaises(OSError):
            rp.write_new_private(link, b"x")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "elsewhere")))

    def test_gate_and_owner_documents(self):
        paths = rp.RunnerPaths(self.tmp)
        identity = {"pid": 12, "creation_time": "345", "executable": "/usr/bin/python3"}
        rp.write_owner(paths, GEN, "e" * 64, identity)
        rp.publish_start_gate(paths, GEN, "e" * 64, identity)
        for path in (paths.owner, paths.start):
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
            self.assertEqual(rp.load_runner_gate(path)["identity"], identity)
        with self.assertRaises(rp.RunnerProtocolError):
            rp.publish_start_gate(paths, GEN, "e" * 64, dict(identity, creation_time=345))


# ---------------------------------------------------------------------------
# Bundles (SCAN-BUNDLE-1..4)

class BundleTest(TempDir):
    def write_good(self, events=None, max_bytes=1048576):
        paths = rp.RunnerPaths(self.tmp)
        os.makedirs(paths.bundle_tmp)
        os.makedirs(paths.bundle_ready)
        writer = rp.BundleWriter(paths.tmp_bundle(BUNDLE_ID, GEN), header(), max_bytes)
        for event in events if events is not None else [
                {"type": "finding", "target": "a", "line": 1, "rule": "r", "fingerprint": "f" * 64,
                 "redacted": "AKIA\u2026"},
                {"type": "target_done", "target": "a", "bytes": 3, "sha256": "e" * 64}]:
            writer.add(event)
        ready = paths.ready_bundle(BUNDLE_ID)
        meta = writer.commit(ready)
        return ready, meta

    def lines(self, path):
        with open(path, "rb") as handle:
            return handle.read().split(b"\n")[:-1]

    def rewrite(self, path, lines, newline_at_end=True):
        with open(path, "wb") as handle:
            handle.write(b"\n".join(lines) + (b"\n" if newline_at_end else b""))

    def trailer_for(self, events):
        body = b"".join(e + b"\n" for e in events)
        return canonical_bytes({"type": "end", "event_count": len(events), "events_sha256": sha(body)}, ascii=True)

    def test_commit_writes_a_valid_bundle(self):
        ready, meta = self.write_good()
        with open(ready, "rb") as handle:
            data = handle.read()
        self.assertEqual(meta["bytes"], len(data))
        self.assertEqual(meta["payload_sha256"], sha(data))
        self.assertEqual(meta["header"], header())
        self.assertEqual(meta["target_done"], [{"type": "target_done", "target": "a", "bytes": 3, "sha256": "e" * 64}])
        lines = self.lines(ready)
        self.assertEqual(json.loads(lines[-1])["events_sha256"], sha(b"".join(l + b"\n" for l in lines[1:-1])))
        self.assertEqual(os.stat(ready).st_mode & 0o777, 0o600)
        self.assertEqual(os.listdir(os.path.join(self.tmp, "bundle", "tmp")), [])
        self.assertEqual(rp.validate_bundle(ready, header(), 1048576), meta)

    def assertInvalid(self, path, expected_header=None, max_bytes=1048576):
        with self.assertRaises(rp.BundleInvalid) as caught:
            rp.validate_bundle(path, expected_header if expected_header is not None else header(), max_bytes)
        return caught.exception

    def test_refuses_wrong_header(self):
        ready, _ = self.write_good()
        self.assertInvalid(ready, expected_header=header(generation="f" * 32))
        lines = self.lines(ready)
        bad = dict(header())
        del bad["timeout_phase"]
        self.rewrite(ready, [canonical_bytes(bad, ascii=True)] + lines[1:])
        self.assertInvalid(ready)
        self.rewrite(ready, [canonical_bytes(header(status="timed_out"), ascii=True)] + lines[1:])
        with self.assertRaises(rp.BundleInvalid):  # timed_out without a phase, even with no expectation
            rp.validate_bundle(ready, None, 1048576)

    def test_refuses_missing_trailer(self):
        ready, _ = self.write_good()
        self.rewrite(ready, self.lines(ready)[:-1])
        self.assertIn("trailer", self.assertInvalid(ready).detail)

    def test_refuses_wrong_count(self):
        ready, _ = self.write_good()
        lines = self.lines(ready)
        trailer = json.loads(lines[-1])
        trailer["event_count"] += 1
        self.rewrite(ready, lines[:-1] + [canonical_bytes(trailer, ascii=True)])
        self.assertIn("event_count", self.assertInvalid(ready).detail)

    def test_refuses_wrong_hash(self):
        ready, _ = self.write_good()
        lines = self.lines(ready)
        trailer = json.loads(lines[-1])
        trailer["events_sha256"] = "0" * 64
        self.rewrite(ready, lines[:-1] + [canonical_bytes(trailer, ascii=True)])
        self.assertIn("events_sha256", self.assertInvalid(ready).detail)
        # an event changed under an unchanged trailer
        lines = self.lines(self.write_good_again())
        event = json.loads(lines[1])
        event["line"] = 2
        self.rewrite(self.ready2, [lines[0], canonical_bytes(event, ascii=True)] + lines[2:])
        self.assertIn("events_sha256", self.assertInvalid(self.ready2).detail)

    def write_good_again(self):
        shutil.rmtree(os.path.join(self.tmp, "bundle"))
        self.ready2, _ = self.write_good()
        return self.ready2

    def test_refuses_oversize(self):
        ready, meta = self.write_good()
        self.assertEqual(rp.validate_bundle(ready, header(), meta["bytes"])["bytes"], meta["bytes"])
        exc = self.assertInvalid(ready, max_bytes=meta["bytes"] - 1)
        self.assertEqual(exc.code, rp.BUNDLE_TOO_LARGE)

    def test_refuses_non_canonical_line(self):
        ready, _ = self.write_good()
        lines = self.lines(ready)
        spaced = json.dumps(json.loads(lines[1]), sort_keys=True).encode()  # ", " and ": " separators
        body = [spaced]
        self.rewrite(ready, [lines[0]] + body + [self.trailer_for(body)])
        self.assertIn("canonical", self.assertInvalid(ready).detail)
        unsorted = b'{"type":"finding","a":1}'
        self.rewrite(ready, [lines[0], unsorted, self.trailer_for([unsorted])])
        self.assertIn("canonical", self.assertInvalid(ready).detail)
        not_ascii = '{"redacted":"AKIA\u2026","type":"finding"}'.encode("utf-8")
        self.rewrite(ready, [lines[0], not_ascii, self.trailer_for([not_ascii])])
        self.assertIn("canonical", self.assertInvalid(ready).detail)
        duplicate = b'{"type":"x","type":"x"}'
        self.rewrite(ready, [lines[0], duplicate, self.trailer_for([duplicate])])
        self.assertIn("strict", self.assertInvalid(ready).detail)

    def test_refuses_line_too_long(self):
        ready, _ = self.write_good()
        lines = self.lines(ready)
        long_event = canonical_bytes({"type": "note", "x": "y" * rp.MAX_BUNDLE_LINE_BYTES}, ascii=True)
        self.rewrite(ready, [lines[0], long_event, self.trailer_for([long_event])])
        self.assertIn("too long", self.assertInvalid(ready).detail)
        # exactly at the bound (newline included) is accepted
        filler = rp.MAX_BUNDLE_LINE_BYTES - 1 - len(canonical_bytes({"type": "note", "x": ""}, ascii=True))
        at_bound = canonical_bytes({"type": "note", "x": "y" * filler}, ascii=True)
        self.assertEqual(len(at_bound) + 1, rp.MAX_BUNDLE_LINE_BYTES)
        self.rewrite(ready, [lines[0], at_bound, self.trailer_for([at_bound])])
        rp.validate_bundle(ready, header(), 1048576)

    def test_refuses_other_defects(self):
        ready, _ = self.write_good()
        lines = self.lines(ready)
        self.rewrite(ready, lines, newline_at_end=False)  # last line without its newline
        self.assertIn("newline", self.assertInvalid(ready).detail)
        self.rewrite(ready, lines + [lines[1]])  # a line after the trailer
        self.assertIn("after the trailer", self.assertInvalid(ready).detail)
        no_type = b'{"kind":"x"}'
        self.rewrite(ready, [lines[0], no_type, self.trailer_for([no_type])])
        self.assertIn("type", self.assertInvalid(ready).detail)
        bad_done = b'{"target":"a","type":"target_done"}'
        self.rewrite(ready, [lines[0], bad_done, self.trailer_for([bad_done])])
        self.assertIn("target_done", self.assertInvalid(ready).detail)
        trailer = json.loads(lines[-1])
        trailer["extra"] = 1
        self.rewrite(ready, lines[:-1] + [canonical_bytes(trailer, ascii=True)])
        self.assertIn("trailer members", self.assertInvalid(ready).detail)
        open(ready, "wb").close()  # an empty file
        self.assertIn("no header", self.assertInvalid(ready).detail)
        link = os.path.join(self.tmp, "link.jsonl")
        os.symlink(ready, link)
        self.assertIn("symlink", self.assertInvalid(link).detail)

    def test_writer_refuses_end_and_long_lines_and_oversize(self):
        paths = rp.RunnerPaths(self.tmp)
        os.makedirs(paths.bundle_tmp)
        writer = rp.BundleWriter(paths.tmp_bundle(BUNDLE_ID, GEN), header(), 1048576)
        self.addCleanup(writer.abort)
        with self.assertRaises(rp.BundleInvalid):
            writer.add({"type": "end", "event_count": 0, "events_sha256": "0" * 64})
        with self.assertRaises(rp.BundleInvalid):
            writer.add({"kind": "x"})
        with self.assertRaises(rp.BundleInvalid):
            writer.add({"type": "x", "y": "z" * rp.MAX_BUNDLE_LINE_BYTES})
        small = len(canonical_bytes(header(), ascii=True)) + 200
        writer2 = rp.BundleWriter(paths.tmp_bundle(BUNDLE_ID, "f" * 32), header(), small)
        self.addCleanup(writer2.abort)
        with self.assertRaises(rp.BundleTooLarge):
            for i in range(100):
                writer2.add({"type": "x", "i": i})
        with self.assertRaises(rp.BundleTooLarge):  # not even the header and trailer fit
            rp.BundleWriter(paths.tmp_bundle(BUNDLE_ID, "e" * 32), header(), 100)

    def test_writer_fills_up_to_the_byte(self):
        # A bundle exactly at max_bytes commits; one byte less refuses the last event.
        events = [{"type": "x", "i": i} for i in range(5)]
        _, meta = self.write_good(events)
        shutil.rmtree(os.path.join(self.tmp, "bundle"))
        _, meta2 = self.write_good(events, max_bytes=meta["bytes"])
        self.assertEqual(meta2["bytes"], meta["bytes"])
        shutil.rmtree(os.path.join(self.tmp, "bundle"))
        with self.assertRaises(rp.BundleTooLarge):
            self.write_good(events, max_bytes=meta["bytes"] - 1)


# ---------------------------------------------------------------------------
# Terminal (SCAN-RUNNER-5)

def completed_terminal(status="succeeded", generation=GEN):
    outcome = {"status": status, "error": None if status == "succeeded" else {"code": "target_http_status"},
               "final_phase": "bundling" if status == "succeeded" else "scanning",
               "identity": {"slot_id": 0, "reservation_id": 7, "bundle_id": BUNDLE_ID,
                            "scan_event_id": SCAN_EVENT_ID, "execution_snapshot_sha256": SNAPSHOT},
               "last_event_sequence": 4,
               "bundle": None if status != "succeeded" else {
                   "ready_relative_path": "ready/%s.jsonl" % BUNDLE_ID, "bytes": 300,
                   "payload_sha256": "1" * 64, "events_sha256": "2" * 64}}
    return {"schema": 1, "decision": "completed", "decided_at": rp.utc_now_text(), "generation": generation,
            "input_sha256": "3" * 64, "outcome": outcome}


def fenced_terminal(reason="controller_recovery"):
    return {"schema": 1, "decision": "fenced", "decided_at": rp.utc_now_text(), "generation": GEN,
            "input_sha256": "3" * 64, "reason": reason}


class TerminalTest(TempDir):
    def test_first_writer_wins(self):
        paths = rp.RunnerPaths(self.tmp)
        self.assertIsNone(rp.load_terminal(paths))
        first = completed_terminal()
        on_disk, won = rp.publish_terminal(paths, first)
        self.assertTrue(won)
        self.assertEqual(on_disk, first)
        on_disk, won = rp.publish_terminal(paths, fenced_terminal())
        self.assertFalse(won)
        self.assertEqual(on_disk, first)
        terminal, digest = rp.load_terminal(paths)
        self.assertEqual(terminal, first)
        with open(paths.terminal, "rb") as handle:
            self.assertEqual(digest, sha(handle.read()))
        self.assertEqual(os.stat(paths.terminal).st_mode & 0o777, 0o600)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["terminal.json"])  # no temporary left behind

    def test_closing_terminal(self):
        paths = rp.RunnerPaths(self.tmp)
        terminal = rp.closing_terminal(GEN, "3" * 64, "timed_out", "scan_stage_deadline")
        self.assertEqual(rp.publish_terminal(paths, terminal), (terminal, True))
        for decision, reason in (("completed", "stop"), ("fenced", "because"), ("timed_out", None)):
            with self.assertRaises(rp.RunnerProtocolError):
                rp.closing_terminal(GEN, "3" * 64, decision, reason)

    def test_racing_writers_exactly_one_wins(self):
        paths = rp.RunnerPaths(self.tmp)
        results = []
        barrier = threading.Barrier(8)

        def write(i):
            terminal = fenced_terminal() if i % 2 else completed_terminal()
            barrier.wait()
            results.append((terminal, rp.publish_terminal(paths, terminal)))

        threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(SHORT_TIMEOUT_S)
        winners = [terminal for terminal, (_, won) in results if won]
        self.assertEqual(len(winners), 1)
        self.assertTrue(all(on_disk == winners[0] for _, (on_disk, _) in results))

    def test_malformed_terminals_are_refused(self):
        paths = rp.RunnerPaths(self.tmp)
        good = completed_terminal()
        bad = []
        t = json.loads(json.dumps(good)); t["outcome"]["bundle"] = None; bad.append(t)  # succeeded without bundle
        t = json.loads(json.dumps(good)); t["outcome"]["error"] = {"code": "Bad Code"}; bad.append(t)
        t = json.loads(json.dumps(good)); t["outcome"]["bundle"]["ready_relative_path"] = "ready/x.jsonl"; bad.append(t)
        t = json.loads(json.dumps(good)); t["outcome"]["identity"]["slot_id"] = -1; bad.append(t)
        t = json.loads(json.dumps(good)); t["reason"] = "stop"; bad.append(t)
        t = json.loads(json.dumps(good)); t["decided_at"] = "yesterday"; bad.append(t)
        t = completed_terminal("failed"); t["outcome"]["bundle"] = good["outcome"]["bundle"]; bad.append(t)
        bad.append(fenced_terminal("because"))
        t = fenced_terminal(); t["outcome"] = good["outcome"]; bad.append(t)
        for terminal in bad:
            with self.assertRaises(rp.RunnerProtocolError):
                rp.publish_terminal(paths, terminal)
            with open(paths.terminal, "wb") as handle:
                handle.write(canonical_bytes(terminal, ascii=True))
            with self.assertRaises(rp.RunnerProtocolError):
                rp.load_terminal(paths)
            os.unlink(paths.terminal)
        with open(paths.terminal, "wb") as handle:  # not canonical
            handle.write(json.dumps(good).encode())
        with self.assertRaises(rp.RunnerProtocolError):
            rp.load_terminal(paths)
        os.unlink(paths.terminal)
        os.symlink("/etc/hostname", paths.terminal)
        with self.assertRaises(rp.RunnerProtocolError):
            rp.load_terminal(paths)


# ---------------------------------------------------------------------------
# Events

def event(sequence, phase="scanning", generation=GEN):
    now = rp.utc_now_text()
    return {"sequence": sequence, "generation": generation, "phase": phase, "progress": {},
            "timestamp": now, "phase_started_at": now}


class EventsTest(TempDir):
    def setUp(self):
        super().setUp()
        self.paths = rp.RunnerPaths(self.tmp)

    def append_raw(self, data):
        with open(self.paths.events, "ab") as handle:
            handle.write(data)

    def test_absent_file_is_no_events(self):
        self.assertEqual(rp.read_events(self.paths.events, 0, GEN, 0), ([], 0))

    def test_partial_last_line_is_ignored_until_complete(self):
        fd = rp.open_events(self.paths)
        self.addCleanup(os.close, fd)
        rp.append_event(fd, event(1, "preparing"))
        rp.append_event(fd, event(2))
        self.assertEqual(os.stat(self.paths.events).st_mode & 0o777, 0o600)
        line3 = canonical_bytes(event(3), ascii=True) + b"\n"
        self.append_raw(line3[:-5])
        events, offset = rp.read_events(self.paths.events, 0, GEN, 0)
        self.assertEqual([e["sequence"] for e in events], [1, 2])
        self.append_raw(line3[-5:])
        events, offset2 = rp.read_events(self.paths.events, offset, GEN, 2)
        self.assertEqual([e["sequence"] for e in events], [3])
        self.assertEqual(offset2, os.path.getsize(self.paths.events))
        self.assertEqual(rp.read_events(self.paths.events, offset2, GEN, 3), ([], offset2))
        # from the start again, after a restart: the first two are known and skipped
        events, _ = rp.read_events(self.paths.events, 0, GEN, 2)
        self.assertEqual([e["sequence"] for e in events], [3])

    def test_gap_is_refused(self):
        fd = rp.open_events(self.paths)
        self.addCleanup(os.close, fd)
        rp.append_event(fd, event(1))
        rp.append_event(fd, event(3))
        with self.assertRaises(rp.RunnerProtocolError):
            rp.read_events(self.paths.events, 0, GEN, 0)

    def test_other_defects_are_refused(self):
        cases = [canonical_bytes(event(1, generation="f" * 32), ascii=True),  # another generation
                 canonical_bytes(event(2), ascii=True),  # not starting at 1
                 canonical_bytes(event(1, phase="uploading"), ascii=True),
                 canonical_bytes(dict(event(1), extra=True), ascii=True),
                 json.dumps(event(1)).encode(),  # not canonical
                 b"[1]", b"not json",
                 b"x" * rp.MAX_RUNNER_EVENT_BYTES]  # too long even unfinished
        for i, line in enumerate(cases):
            with self.subTest(i=i):
                path = os.path.join(self.tmp, "events-%d.jsonl" % i)
                with open(path, "wb") as handle:
                    handle.write(line + (b"\n" if i < len(cases) - 1 else b""))
                with self.assertRaises(rp.RunnerProtocolError):
                    rp.read_events(path, 0, GEN, 0)

    def test_read_is_bounded_per_call(self):
        fd = rp.open_events(self.paths)
        self.addCleanup(os.close, fd)
        line_len = len(canonical_bytes(event(1), ascii=True)) + 1
        count = rp.MAX_RUNNER_EVENTS_READ_BYTES // line_len + 50
        with open(self.paths.events, "ab") as handle:
            for i in range(1, count + 1):
                handle.write(canonical_bytes(event(i), ascii=True) + b"\n")
        events, offset = rp.read_events(self.paths.events, 0, GEN, 0)
        self.assertLess(len(events), count)
        self.assertLessEqual(offset, rp.MAX_RUNNER_EVENTS_READ_BYTES)
        rest, offset2 = rp.read_events(self.paths.events, offset, GEN, events[-1]["sequence"])
        self.assertEqual(len(events) + len(rest), count)
        self.assertEqual(offset2, os.path.getsize(self.paths.events))


# ---------------------------------------------------------------------------
# Process identity and the exact-identity stop (SCAN-RUNNER-9)


    def test_events_are_fsynced_once_and_before_the_terminal(self):
        # D36: no fsync per event; one of the events file before the terminal that counts them,
        # so a power loss never leaves a terminal whose events are gone.
        binding = {name: "x" for name in rp._RUNNER_BINDING_MEMBERS}
        generation = rp._RunnerGeneration(self.paths, dict(binding, generation=GEN), "3" * 64, None, None)
        generation.events_fd = rp.open_events(self.paths)
        self.addCleanup(os.close, generation.events_fd)
        calls = []
        real_fsync = os.fsync

        def fsync(fd):
            calls.append(("fsync", os.path.realpath("/proc/self/fd/%d" % fd)))
            return real_fsync(fd)

        def publish_terminal(paths, terminal, writer=None):
            calls.append(("terminal", terminal["outcome"]["last_event_sequence"]))
            return terminal, True

        with mock.patch.object(rp.os, "fsync", fsync), mock.patch.object(rp, "publish_terminal", publish_terminal):
            generation.emit("preparing", {})
            generation.emit("bundling", {})
            self.assertEqual(calls, [], "an event was fsynced as it was written")
            generation.publish("failed", "SCAN_TARGET_FAILED", None)
        self.assertEqual(calls, [("fsync", os.path.realpath(self.paths.events)), ("terminal", 2)])
def spawn_group(argv, **kwargs):
    return subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, **kwargs)


class IdentityTest(unittest.TestCase):
    def reap(self, proc):
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            proc.wait(SHORT_TIMEOUT_S)
        except (subprocess.TimeoutExpired, ChildProcessError):
            pass

    def test_identity_of_a_live_process(self):
        identity = rp.process_identity(os.getpid())
        self.assertEqual(identity["pid"], os.getpid())
        self.assertEqual(identity["executable"], os.readlink("/proc/self/exe"))
        self.assertTrue(identity["creation_time"].isdigit())
        rp.check_process_identity(identity)
        self.assertEqual(rp.identity_state(identity), "alive")

    def test_reused_for_another_start_time_or_executable(self):
        identity = rp.process_identity(os.getpid())
        other = dict(identity, creation_time=str(int(identity["creation_time"]) + 1))
        self.assertEqual(rp.identity_state(other), "reused")
        self.assertEqual(rp.identity_state(dict(identity, executable="/bin/false")), "reused")

    def test_dead_for_a_reaped_pid(self):
        proc = spawn_group(["sleep", "30"])
        identity = rp.process_identity(proc.pid)
        self.assertEqual(rp.identity_state(identity), "alive")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(SHORT_TIMEOUT_S)
        self.assertEqual(rp.identity_state(identity), "dead")
        self.assertIsNone(rp.process_identity(proc.pid))

    def test_zombie_is_dead(self):
        proc = spawn_group(["true"])
        identity = None
        deadline = time.monotonic() + SHORT_TIMEOUT_S
        identity = rp.process_identity(proc.pid)  # may already be a zombie: then None
        while time.monotonic() < deadline:
            with open("/proc/%d/stat" % proc.pid) as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            time.sleep(0.01)
        if identity is not None:
            self.assertEqual(rp.identity_state(identity), "dead")
        proc.wait(SHORT_TIMEOUT_S)

    def test_stop_kills_the_whole_group(self):
        # the group leader is a shell with a background grandchild
        proc = subprocess.Popen(["sh", "-c", "sleep 60 & echo $!; wait"], start_new_session=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(self.reap, proc)
        grandchild = int(proc.stdout.readline())
        proc.stdout.close()
        # `$!` is known as soon as the shell forks, before the child has exec'd sleep: an identity
        # read then names the shell's executable, and is "reused" once sleep runs.  Wait for it.
        deadline = time.monotonic() + SHORT_TIMEOUT_S
        grandchild_identity = rp.process_identity(grandchild)
        while (grandchild_identity is None or not grandchild_identity["executable"].endswith("sleep")) \
                and time.monotonic() < deadline:
            time.sleep(0.01)
            grandchild_identity = rp.process_identity(grandchild)
        self.assertTrue(grandchild_identity["executable"].endswith("sleep"), grandchild_identity)
        identity = rp.process_identity(proc.pid)
        started = time.monotonic()
        self.assertEqual(rp.stop_exact_identity(identity, SHORT_TIMEOUT_S), "dead")
        self.assertLess(time.monotonic() - started, SHORT_TIMEOUT_S)
        self.assertEqual(rp.identity_state(identity), "dead")
        deadline = time.monotonic() + SHORT_TIMEOUT_S
        while rp.identity_state(grandchild_identity) == "alive" and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(rp.identity_state(grandchild_identity), "dead")  # a zombie waiting for init counts

    def test_stop_of_a_sleep_reaps_our_child(self):
        proc = spawn_group(["sleep", "60"])
        self.addCleanup(self.reap, proc)
        identity = rp.process_identity(proc.pid)
        self.assertEqual(rp.stop_exact_identity(identity, SHORT_TIMEOUT_S), "dead")
        with self.assertRaises(ChildProcessError):  # already reaped by the stop
            os.waitpid(proc.pid, os.WNOHANG)

    def test_stop_refuses_a_wrong_identity(self):
        proc = spawn_group(["sleep", "60"])
        self.addCleanup(self.reap, proc)
        identity = rp.process_identity(proc.pid)
        for wrong in (dict(identity, creation_time=str(int(identity["creation_time"]) + 1)),
                      dict(identity, executable="/bin/not-sleep")):
            self.assertEqual(rp.stop_exact_identity(wrong, 0.5), "dead")  # the recorded process is gone
            time.sleep(0.05)
            self.assertIsNone(proc.poll(), "a process with another identity was signalled")
            self.assertEqual(rp.identity_state(identity), "alive")

    def test_stop_without_pidfd_uses_proc(self):
        proc = spawn_group(["sleep", "60"])
        self.addCleanup(self.reap, proc)
        identity = rp.process_identity(proc.pid)
        saved = getattr(rp.os, "pidfd_open", None)
        if saved is not None:
            del rp.os.pidfd_open  # the module's `os` is the real one: restore it below
        try:
            self.assertEqual(rp.stop_exact_identity(identity, SHORT_TIMEOUT_S), "dead")
        finally:
            if saved is not None:
                rp.os.pidfd_open = saved


# ---------------------------------------------------------------------------
# A tiny HTTPS target server

class TargetServer(object):
    """Loopback HTTPS on port 0 with the harness certificate; routes are set per test."""

    def __init__(self):
        self.routes = {}
        self.requests = []
        self.release = threading.Event()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                owner.requests.append((self.path, list(self.headers.items())))
                route = owner.routes.get(self.path.split("?")[0], {"status": 404, "body": b""})
                body = route.get("body", b"")
                self.send_response(route.get("status", 200))
                for name, value in route.get("headers", []):
                    self.send_header(name, value)
                if "length" in route:
                    if route["length"] is not None:
                        self.send_header("Content-Length", str(route["length"]))
                else:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body[:route.get("send", len(body))])
                    self.wfile.flush()
                    if route.get("stall"):
                        owner.release.wait(LONG_TIMEOUT_S)
                except OSError:
                    pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # a client that hangs up is a test's point, not noise

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.path.join(CA_DIR, "server.pem"), os.path.join(CA_DIR, "server.key"))
        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def url(self, path, host="127.0.0.1"):
        return "https://%s:%d%s" % (host, self.port, path)

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(SHORT_TIMEOUT_S)


@unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves TLS downloads to make test")
class FetchTest(unittest.TestCase):
    def setUp(self):
        self.server = TargetServer()
        self.addCleanup(self.server.close)
        self.stop = Stop("test", stderr_fd=None)
        self.stop.open()
        self.body = (b"hello\n" + AKIA.encode() + b"\n") * 5000 + b"end"
        self.server.routes["/t"] = {"body": self.body}

    def target(self, path="/t?X-Sig=secret-signature", size=None, digest=None):
        return {"name": "t", "size": len(self.body) if size is None else size,
                "sha256": sha(self.body) if digest is None else digest, "url": self.server.url(path)}

    def fetch(self, target, deadline_s=LONG_TIMEOUT_S):
        received = []
        rp.fetch_target(target, self.stop, Deadline(deadline_s), received.append)
        return b"".join(received), received

    def assertFails(self, code, target, deadline_s=LONG_TIMEOUT_S):
        with self.assertRaises(rp.TargetFailed) as caught:
            self.fetch(target, deadline_s)
        self.assertEqual(caught.exception.code, code)
        self.assertNotIn("secret-signature", str(caught.exception))
        self.assertNotIn("127.0.0.1", str(caught.exception))
        return caught.exception

    def test_fetches_pinned_bytes_in_chunks_with_exact_headers(self):
        data, chunks = self.fetch(self.target())
        self.assertEqual(data, self.body)
        self.assertTrue(all(len(chunk) <= rp.TARGET_CHUNK_BYTES for chunk in chunks))
        path, headers = self.server.requests[-1]
        self.assertEqual(path, "/t?X-Sig=secret-signature")
        self.assertEqual([name for name, _ in headers], ["Host", "Accept-Encoding"])
        self.assertEqual(dict(headers), {"Host": "127.0.0.1:%d" % self.server.port, "Accept-Encoding": "identity"})

    def test_empty_target(self):
        self.server.routes["/empty"] = {"body": b""}
        target = {"name": "e", "size": 0, "sha256": sha(b""), "url": self.server.url("/empty")}
        self.assertEqual(self.fetch(target)[0], b"")

    def test_size_mismatch_refused_before_the_body(self):
        self.assertFails(rp.TARGET_SIZE_MISMATCH, self.target(size=len(self.body) - 1))
        self.server.routes["/nolength"] = {"body": self.body, "length": None}
        self.assertFails(rp.TARGET_SIZE_MISMATCH, self.target("/nolength"))
        self.server.routes["/two"] = {"body": self.body, "length": None,
                                      "headers": [("Content-Length", str(len(self.body)))] * 2}
        self.assertFails(rp.TARGET_SIZE_MISMATCH, self.target("/two"))

    def test_truncated_body(self):
        self.server.routes["/short"] = {"body": self.body, "send": 1000}
        self.assertFails(rp.TARGET_SIZE_MISMATCH, self.target("/short"))

    def test_sha256_mismatch(self):
        self.assertFails(rp.TARGET_SHA256_MISMATCH, self.target(digest="0" * 64))

    def test_status_other_than_200(self):
        for status in (404, 500, 206, 201):
            self.server.routes["/s"] = {"status": status, "body": self.body}
            self.assertFails(rp.TARGET_HTTP_STATUS, self.target("/s"))

    def test_redirect_is_not_followed(self):
        self.server.routes["/r"] = {"status": 302, "body": b"", "headers": [("Location", self.server.url("/t"))]}
        before = len(self.server.requests)
        self.assertFails(rp.TARGET_HTTP_STATUS, self.target("/r"))
        self.assertEqual([p for p, _ in self.server.requests[before:]], ["/r"])

    def test_untrusted_certificate_fails(self):
        os.environ["SSL_CERT_FILE"] = os.path.join(CA_DIR, "other-ca.pem")
        try:
            self.assertFails(rp.TARGET_TRANSPORT_FAILED, self.target())
        finally:
            os.environ["SSL_CERT_FILE"] = os.path.join(CA_DIR, "ca.pem")
        self.assertEqual(self.server.requests, [])

    def test_plain_http_is_refused(self):
        target = dict(self.target(), url="http://127.0.0.1:%d/t" % self.server.port)
        self.assertFails(rp.TARGET_URL_INVALID, target)

    def test_deadline_ends_a_stalled_body(self):
        self.server.routes["/stall"] = {"body": self.body, "send": 100, "stall": True}
        started = time.monotonic()
        self.assertFails(rp.TARGET_DEADLINE, self.target("/stall"), deadline_s=0.5)
        self.assertLess(time.monotonic() - started, 0.5 + SHORT_TIMEOUT_S / 2)

    def test_stop_ends_a_stalled_body(self):
        self.server.routes["/stall"] = {"body": self.body, "send": 100, "stall": True}
        timer = threading.Timer(0.3, self.stop.handle, args=(signal.SIGTERM,))
        timer.start()
        self.addCleanup(timer.cancel)
        started = time.monotonic()
        with self.assertRaises(StopRequested):
            self.fetch(self.target("/stall"))
        self.assertLess(time.monotonic() - started, SHORT_TIMEOUT_S)

    def test_on_data_errors_pass_through(self):
        def boom(chunk):
            raise rp.BundleTooLarge()
        with self.assertRaises(rp.BundleTooLarge):
            rp.fetch_target(self.target(), self.stop, Deadline(LONG_TIMEOUT_S), boom)


# ---------------------------------------------------------------------------
# runner_main end to end, in a real child process



@unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves runner processes to make test")
class RunnerMainTest(TempDir):
    def setUp(self):
        super().setUp()
        self.server = TargetServer()
        self.addCleanup(self.server.close)
        self.work = os.path.join(self.tmp, "work")
        os.mkdir(self.work, 0o700)
        self.bodies = {
            "one.txt": b"nothing here\nexport AWS=" + AKIA.encode() + b"\n" + b"x" * 100000 + b"\n",
            "two.env": b"token = 'abcdefghijklmnopqrstuvwxyz'\n-----BEGIN OPENSSH PRIVATE KEY-----\n",
        }
        for name, body in self.bodies.items():
            self.server.routes["/" + name] = {"body": body}

    def targets(self, corrupt=None):
        return [{"name": name, "size": len(body), "sha256": "0" * 64 if name == corrupt else sha(body),
                 "url": self.server.url("/%s?sig=credential-part" % name)}
                for name, body in sorted(self.bodies.items())]

    def spawn(self, runner_input):
        name = rp.runner_root_name(runner_input["slot_id"], runner_input["reservation_id"], runner_input["generation"])
        root, digest = rp.create_runner_root(self.work, name, runner_input)
        self.stderr_path = os.path.join(self.tmp, "stderr-%s" % runner_input["generation"])
        with open(self.stderr_path, "wb") as stderr:
            proc = subprocess.Popen([sys.executable, "-I", "-S", "-B", NODE_FILE, "--", "_assignment_runner", "--root", root], start_new_session=True,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                                    env={"SSL_CERT_FILE": os.path.join(CA_DIR, "ca.pem")}, close_fds=True)
        self.addCleanup(self.kill, proc)
        return proc, rp.RunnerPaths(root), digest

    def kill(self, proc):
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        proc.wait(SHORT_TIMEOUT_S)

    def open_gate(self, proc, paths, runner_input, digest):
        identity = rp.process_identity(proc.pid)
        self.assertIsNotNone(identity)
        rp.write_owner(paths, runner_input["generation"], digest, identity)
        rp.publish_start_gate(paths, runner_input["generation"], digest, identity)
        return identity

    def finish(self, proc, status=0):
        code = proc.wait(LONG_TIMEOUT_S)
        with open(self.stderr_path, "rb") as handle:
            self.assertEqual(handle.read(), b"")  # a runner prints nothing
        self.assertEqual(code, status)

    def test_execute_end_to_end(self):
        runner_input = make_input(self.targets())
        proc, paths, digest = self.spawn(runner_input)
        self.open_gate(proc, paths, runner_input, digest)
        self.finish(proc)
        terminal, _ = rp.load_terminal(paths)
        outcome = terminal["outcome"]
        self.assertEqual((terminal["decision"], terminal["generation"], terminal["input_sha256"]),
                         ("completed", GEN, digest))
        self.assertEqual((outcome["status"], outcome["error"], outcome["final_phase"]), ("succeeded", None, "bundling"))
        self.assertEqual(outcome["identity"], {"slot_id": 0, "reservation_id": 7, "bundle_id": BUNDLE_ID,
                                               "scan_event_id": SCAN_EVENT_ID, "execution_snapshot_sha256": SNAPSHOT})
        events, _ = rp.read_events(paths.events, 0, GEN, 0)
        self.assertEqual([(e["phase"], e["progress"]) for e in events],
                         [("preparing", {}), ("scanning", {"target": "one.txt", "index": 0}),
                          ("scanning", {"target": "two.env", "index": 1}), ("bundling", {})])
        self.assertEqual(events[1]["phase_started_at"], events[2]["phase_started_at"])
        self.assertEqual(outcome["last_event_sequence"], 4)
        bundle = outcome["bundle"]
        self.assertEqual(bundle["ready_relative_path"], "ready/%s.jsonl" % BUNDLE_ID)
        ready = os.path.join(paths.bundle, bundle["ready_relative_path"])
        meta = rp.validate_bundle(ready, header(), runner_input["declared_bundle_bytes"])
        self.assertEqual((meta["bytes"], meta["payload_sha256"], meta["events_sha256"]),
                         (bundle["bytes"], bundle["payload_sha256"], bundle["events_sha256"]))
        self.assertEqual([(d["target"], d["bytes"], d["sha256"]) for d in meta["target_done"]],
                         [(t["name"], t["size"], t["sha256"]) for t in runner_input["targets"]])
        with open(ready, "rb") as handle:
            lines = [json.loads(line) for line in handle]
        self.assertEqual([(l.get("type"), l.get("target"), l.get("line"), l.get("rule")) for l in lines[1:-1]],
                         [("finding", "one.txt", 2, "aws_access_key_id"), ("target_done", "one.txt", None, None),
                          ("finding", "two.env", 1, "generic_secret_assignment"),
                          ("finding", "two.env", 2, "private_key_block"), ("target_done", "two.env", None, None)])
        # nothing secret or credential-like anywhere in the root
        for directory, _, files in os.walk(paths.root):
            for name in files:
                path = os.path.join(directory, name)
                self.assertEqual(os.stat(path).st_mode & 0o777, 0o600, name)
                if name != "input.json":
                    with open(path, "rb") as handle:
                        content = handle.read()
                    self.assertNotIn(AKIA.encode(), content, name)
                    self.assertNotIn(b"credential-part", content, name)
        self.assertEqual(os.listdir(paths.bundle_tmp), [])
        # the same bytes scanned again give the same event lines (SCAN-WORK-3)
        runner_input2 = make_input(self.targets(), generation="9" * 32)
        proc2, paths2, digest2 = self.spawn(runner_input2)
        self.open_gate(proc2, paths2, runner_input2, digest2)
        self.finish(proc2)
        with open(os.path.join(paths2.bundle_ready, BUNDLE_ID + ".jsonl"), "rb") as handle:
            self.assertEqual(handle.read().split(b"\n")[1:-2],
                             [canonical_bytes(l, ascii=True) for l in lines[1:-1]])

    def test_failed_target_publishes_a_failed_outcome(self):
        runner_input = make_input(self.targets(corrupt="two.env"))
        proc, paths, digest = self.spawn(runner_input)
        self.open_gate(proc, paths, runner_input, digest)
        self.finish(proc)
        terminal, _ = rp.load_terminal(paths)
        outcome = terminal["outcome"]
        self.assertEqual((outcome["status"], outcome["error"], outcome["final_phase"], outcome["bundle"]),
                         ("failed", {"code": "target_sha256_mismatch"}, "scanning", None))
        self.assertEqual(outcome["last_event_sequence"], 3)
        self.assertEqual(os.listdir(paths.bundle_ready), [])
        self.assertEqual(os.listdir(paths.bundle_tmp), [])

    def test_bundle_too_large_fails_the_scan(self):
        runner_input = make_input(self.targets(), declared=400)
        proc, paths, digest = self.spawn(runner_input)
        self.open_gate(proc, paths, runner_input, digest)
        self.finish(proc)
        outcome = rp.load_terminal(paths)[0]["outcome"]
        self.assertEqual((outcome["status"], outcome["error"]), ("failed", {"code": "bundle_too_large"}))

    def test_timeout_bundle_has_header_and_trailer_only(self):
        runner_input = make_input(self.targets(), operation="timeout_bundle", timeout_phase="scanning")
        proc, paths, digest = self.spawn(runner_input)
        self.open_gate(proc, paths, runner_input, digest)
        self.finish(proc)
        outcome = rp.load_terminal(paths)[0]["outcome"]
        self.assertEqual(outcome["status"], "succeeded")
        meta = rp.validate_bundle(os.path.join(paths.bundle, outcome["bundle"]["ready_relative_path"]),
                                  header("timed_out", "scanning"), runner_input["declared_bundle_bytes"])
        self.assertEqual(meta["target_done"], [])
        with open(os.path.join(paths.bundle, outcome["bundle"]["ready_relative_path"]), "rb") as handle:
            self.assertEqual(len(handle.read().split(b"\n")), 3)
        self.assertEqual([p for p, _ in self.server.requests], [])  # nothing fetched
        self.assertEqual([e["phase"] for e in rp.read_events(paths.events, 0, GEN, 0)[0]], ["preparing", "bundling"])

    def test_gate_naming_another_process_means_no_effect(self):
        runner_input = make_input(self.targets())
        proc, paths, digest = self.spawn(runner_input)
        identity = rp.process_identity(proc.pid)
        rp.publish_start_gate(paths, GEN, digest, dict(identity, pid=identity["pid"] + 1))
        self.finish(proc, rp.RUNNER_EXIT_OK)
        self.assertEqual(sorted(os.listdir(paths.root)), ["bundle", "input.json", "start.json"])
        self.assertEqual(self.server.requests, [])

    def test_gate_naming_another_input_means_no_effect(self):
        runner_input = make_input(self.targets())
        proc, paths, digest = self.spawn(runner_input)
        identity = rp.process_identity(proc.pid)
        rp.publish_start_gate(paths, GEN, "0" * 64, identity)
        self.finish(proc, rp.RUNNER_EXIT_OK)
        self.assertIsNone(rp.load_terminal(paths))
        self.assertFalse(os.path.exists(paths.events))

    def test_no_gate_until_the_watchdog_deadline(self):
        runner_input = make_input(self.targets(), watchdog_s=1.0)
        proc, paths, digest = self.spawn(runner_input)
        started = time.monotonic()
        code = proc.wait(LONG_TIMEOUT_S)
        self.assertIn(code, (rp.RUNNER_EXIT_OK, rp.RUNNER_EXIT_DEADLINE))
        self.assertLess(time.monotonic() - started, 1.0 + SHORT_TIMEOUT_S)
        self.assertEqual(sorted(os.listdir(paths.root)), ["bundle", "input.json"])

    def test_watchdog_deadline_mid_download_publishes_nothing(self):
        self.server.routes["/one.txt"] = {"body": self.bodies["one.txt"], "send": 10, "stall": True}
        runner_input = make_input(self.targets(), watchdog_s=2.0)
        proc, paths, digest = self.spawn(runner_input)
        self.open_gate(proc, paths, runner_input, digest)
        code = proc.wait(LONG_TIMEOUT_S)
        self.assertEqual(code, rp.RUNNER_EXIT_DEADLINE)
        self.assertIsNone(rp.load_terminal(paths))
        self.assertEqual(os.listdir(paths.bundle_ready), [])

    def test_sigterm_exits_promptly(self):
        self.server.routes["/one.txt"] = {"body": self.bodies["one.txt"], "send": 10, "stall": True}
        runner_input = make_input(self.targets())
        proc, paths, digest = self.spawn(runner_input)
        self.open_gate(proc, paths, runner_input, digest)
        deadline = time.monotonic() + SHORT_TIMEOUT_S
        while not self.server.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.1)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        self.finish(proc, rp.RUNNER_EXIT_STOPPED)
        self.assertLess(time.monotonic() - started, 1.0)
        self.assertIsNone(rp.load_terminal(paths))

    def test_worker_terminal_first_means_runner_loses(self):
        runner_input = make_input(self.targets())
        proc, paths, digest = self.spawn(runner_input)
        fenced = {"schema": 1, "decision": "fenced", "decided_at": rp.utc_now_text(), "generation": GEN,
                  "input_sha256": digest, "reason": "controller_recovery"}
        self.assertTrue(rp.publish_terminal(paths, fenced)[1])
        self.open_gate(proc, paths, runner_input, digest)
        self.finish(proc)
        self.assertEqual(rp.load_terminal(paths)[0], fenced)

    def test_unusable_input_exits_without_effect(self):
        runner_input = make_input(self.targets())
        proc, paths, digest = self.spawn(runner_input)
        self.kill(proc)
        root2 = os.path.join(self.work, rp.runner_root_name(0, 7, "8" * 32))
        os.rename(paths.root, root2)  # the name no longer binds the input's generation
        proc2 = subprocess.Popen([sys.executable, "-I", "-S", "-B", NODE_FILE, "--", "_assignment_runner", "--root", root2], start_new_session=True,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(self.kill, proc2)
        self.assertEqual(proc2.wait(LONG_TIMEOUT_S), rp.RUNNER_EXIT_FAILED)
        self.assertEqual(sorted(os.listdir(root2)), ["bundle", "input.json"])



# ---------------------------------------------------------------------------
# Warm runners (D34) and the slot's wait on its runner (D35)

class WarmStartTest(TempDir):
    """RunnerCode: the file a runner's argv names after -I -S -B."""

    def setUp(self):
        super().setUp()
        self.node = os.path.join(self.tmp, "scan_worker.py")
        shutil.copyfile(NODE_FILE, self.node)
        self.state = os.path.join(self.tmp, "state")
        os.mkdir(self.state, 0o700)
        self.missing_root = os.path.join(self.tmp, "no-such-root")

    def run_code(self, path):
        """The exit status of a runner started from `path` with a root that does not exist."""
        return subprocess.run([sys.executable, "-I", "-S", "-B", path, "--", "_assignment_runner", "--root",
                               self.missing_root], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=LONG_TIMEOUT_S).returncode

    def test_the_launch_names_the_bytecode_of_the_present_file(self):
        code = rp.RunnerCode(self.node, self.state)
        path = code.path()
        with open(self.node, "rb") as handle:
            digest = sha(handle.read())
        self.assertEqual(os.path.dirname(path), os.path.join(self.state, rp.RUNNER_CODE_DIR))
        self.assertEqual(os.path.basename(path), "runner-%s.%s.pyc" % (digest, sys.implementation.cache_tag))
        self.assertEqual(oct(os.stat(path).st_mode & 0o777), oct(0o600))
        self.assertEqual(oct(os.stat(os.path.dirname(path)).st_mode & 0o777), oct(0o700))
        inode = os.stat(path).st_ino
        self.assertEqual(code.path(), path)  # no second compile while the file is unchanged
        self.assertEqual(os.stat(path).st_ino, inode)
        self.assertEqual(self.run_code(path), rp.RUNNER_EXIT_FAILED)  # the node's runner, from its bytecode

    def test_a_changed_node_is_compiled_again_and_its_new_code_runs(self):
        code = rp.RunnerCode(self.node, self.state)
        first = code.path()
        with open(self.node, "rb") as handle:
            text = handle.read()
        old = b"RUNNER_EXIT_FAILED = 1  #"
        self.assertEqual(text.count(old), 1)
        with open(self.node, "wb") as handle:
            handle.write(text.replace(old, b"RUNNER_EXIT_FAILED = 7  #"))
        second = code.path()
        self.assertNotEqual(second, first)
        self.assertEqual(self.run_code(second), 7)  # the edit, not the code kept warm

    def test_a_cache_that_cannot_be_written_falls_back_to_the_node_file(self):
        with open(os.path.join(self.state, rp.RUNNER_CODE_DIR), "wb") as handle:
            handle.write(b"planted")
        code = rp.RunnerCode(self.node, self.state)
        self.assertEqual(code.path(), self.node)
        self.assertEqual(code.path(), self.node)  # remembered: no compile per launch while it cannot be written

    def test_a_cache_removed_under_the_worker_is_written_again(self):
        code = rp.RunnerCode(self.node, self.state)
        path = code.path()
        os.unlink(path)
        self.assertEqual(code.path(), path)
        self.assertTrue(os.path.isfile(path))

    def test_a_new_life_removes_the_code_of_other_versions(self):
        directory = os.path.join(self.state, rp.RUNNER_CODE_DIR)
        os.mkdir(directory, 0o700)
        stale = os.path.join(directory, "runner-%s.%s.pyc" % ("0" * 64, sys.implementation.cache_tag))
        with open(stale, "wb") as handle:
            handle.write(b"old")
        rp.RunnerCode(self.node, self.state).path()
        self.assertFalse(os.path.exists(stale))

    def test_an_unreadable_node_file_is_launched_as_before(self):
        code = rp.RunnerCode(os.path.join(self.tmp, "gone.py"), self.state)
        self.assertEqual(code.path(), os.path.join(self.tmp, "gone.py"))


class ExitWatchTest(unittest.TestCase):
    def test_the_exit_of_a_runner_ends_the_wait(self):
        if not hasattr(os, "pidfd_open"):
            self.skipTest("no os.pidfd_open")
        proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
        self.addCleanup(proc.wait)
        watch = rp.ExitWatch(proc.pid)
        self.addCleanup(watch.close)
        if watch.fd is None:
            self.skipTest("this kernel gives no pidfd")
        proc.stdin.close()
        started = time.monotonic()
        watch.wait(LONG_TIMEOUT_S)
        self.assertLess(time.monotonic() - started, LONG_TIMEOUT_S / 2)  # woken by the exit, not the timeout
        self.assertIsNotNone(proc.poll())


class GateWaitTest(TempDir):
    def test_the_gate_is_looked_for_first_then_soon_then_less_often(self):
        class NoStop(object):
            def wait_fd(self):
                return None

            def check(self, what):
                pass

        class Enough(Exception):
            pass

        waits = []

        def sleep(seconds):
            waits.append(seconds)
            if len(waits) == 8:
                raise Enough()

        paths = rp.RunnerPaths(self.tmp)
        original = rp.time.sleep
        rp.time.sleep = sleep
        try:
            with self.assertRaises(Enough):
                rp.wait_gate(paths, {"generation": GEN}, "0" * 64, NoStop(), Deadline(LONG_TIMEOUT_S))
        finally:
            rp.time.sleep = original
        self.assertEqual(waits[0], rp.START_GATE_FIRST_WAIT_S)
        self.assertEqual(waits[1], 2 * rp.START_GATE_FIRST_WAIT_S)
        self.assertEqual(max(waits), rp.START_GATE_POLL_S)


if __name__ == "__main__":
    unittest.main()
