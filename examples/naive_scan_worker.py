#!/usr/bin/env python3
"""naive_scan_worker.py: a first version of a remote scan worker, as people write it.

It speaks the scan server's API and does the work: it claims an assignment,
downloads the targets, scans them for secrets, uploads a bundle in the
contract's format, and claims again.  On a good day it works.  It is here so
that `python3 -m conformance scan examples/naive_scan_worker.py` can show what
the harness catches; `examples/README.md` lists each flaw and the clauses it
breaks.  Do not copy it: nodes/scan_worker.py is the worker to copy.

Its flaws, all of them common:

1. State is written after the call it should protect, in place with
   open(path, "w"): a crash after the claim forgets the request id (a second
   reservation), and a crash mid-write leaves a torn file.
2. After a restart it repeats its last request blindly, without asking the
   server for the assignment's status first.
3. No signal handler: as PID 1 SIGTERM is ignored; elsewhere it kills the
   worker mid-upload with nothing recorded.
4. The token stays on argv (--token) or is read once from its file, never
   again: a rotation needs a restart, and `ps` shows an argv token.
5. Targets and the bundle are held in memory whole; the upload is one
   bytes object.
6. urllib follows redirects and uses per-read timeouts only: a server that
   dribbles holds it for ever.
7. Errors are printed with str(exc), server text included, and the
   terminal report's detail is the exception's text.
8. Every retry waits the same fixed delay, with no jitter; Retry-After is
   read with int(), so a missing header is a crash.
9. The scan runs in the worker's own process: no deadline, no watchdog.
"""

import argparse
import hashlib
import json
import os
import re
import secrets
import time
import urllib.error
import urllib.request

RULES = [
    ("aws_access_key_id", re.compile(r"AKIA[0-9A-Z]{16}")),
    ("private_key_block", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("github_token", re.compile(r"gh[pousr]_[A-Za-z0-9]{36}")),
    ("generic_secret_assignment", re.compile(
        r"(?i)(api[_-]?key|secret|token|passwd|password)\s*[:=]\s*['\"]?[A-Za-z0-9/+_\-]{16,}")),
]


# Proxies are switched off (a corporate proxy broke the first test run); the
# opener still follows redirects, with the Authorization header.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


class Worker(object):
    def __init__(self, args):
        self.server = args.server.rstrip("/")
        if args.token_file:
            with open(args.token_file) as handle:
                self.token = handle.read().strip()  # read once: a rotation needs a restart
        else:
            self.token = args.token or os.environ.get("TRUF_WORKER_TOKEN", "")
        self.poll = args.poll_seconds
        home = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
        self.state_dir = os.path.join(home, "truf", "remote-worker")
        os.makedirs(self.state_dir, exist_ok=True)
        self.state_path = os.path.join(self.state_dir, "slot-0.json")

    def request(self, method, path, body=None, headers=None):
        request = urllib.request.Request(self.server + path, data=body, method=method)
        request.add_header("Authorization", "Bearer " + self.token)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        with OPENER.open(request, timeout=120) as response:
            data = response.read()
            return response.status, response.headers, json.loads(data) if data else None

    def save(self, state):
        with open(self.state_path, "w") as handle:
            json.dump(state, handle)

    def load(self):
        try:
            with open(self.state_path) as handle:
                return json.load(handle)
        except (OSError, ValueError):
            return None

    def run(self):
        print("worker: started with 1 slots", flush=True)
        while True:
            try:
                self.step()
            except Exception as exc:
                print("worker slot 0: %s" % exc, flush=True)
                time.sleep(15)

    def step(self):
        state = self.load()
        if state and state.get("phase") == "bundle_ready":
            return self.upload(state)
        if state and state.get("phase") == "assigned":
            return self.execute(state)
        request_id = secrets.token_hex(16)
        body = canonical({"build": {"capabilities": [["fixture", "local", "files"]], "code_sha256": "0" * 64,
                                    "node": "naive-scan-worker", "protocol": 2, "version": "0.1"},
                          "request_id": request_id})
        status, headers, answer = self.request("POST", "/api/v1/worker/claim", body,
                                               {"Content-Type": "application/json"})
        if status == 204:
            time.sleep(int(headers["Retry-After"]))
            return
        if status == 200:
            return
        state = {"schema": 2, "phase": "assigned", "assignment": answer["assignment"], "runner": None,
                 "retained_work": []}
        self.save(state)  # after the claim: a crash before this line loses the request id
        self.execute(state)

    def execute(self, state):
        assignment = state["assignment"]
        reservation = assignment["reservation"]
        events = []
        for target in assignment["targets"]:
            with OPENER.open(target["url"], timeout=120) as response:
                data = response.read()  # the whole target in memory
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                for rule, pattern in RULES:
                    for match in pattern.finditer(line):
                        events.append({"type": "finding", "target": target["name"], "line": number, "rule": rule,
                                       "fingerprint": hashlib.sha256(match.group(0).encode()).hexdigest(),
                                       "redacted": match.group(0)[:4] + "\u2026"})
            events.append({"type": "target_done", "target": target["name"], "bytes": len(data),
                           "sha256": hashlib.sha256(data).hexdigest()})
        header = {"format": "scan-bundle/1", "reservation_id": reservation["reservation_id"],
                  "bundle_id": reservation["bundle_id"], "scan_event_id": reservation["scan_event_id"],
                  "execution_snapshot_sha256": assignment["execution_snapshot_sha256"], "slot_id": 0,
                  "generation": secrets.token_hex(16), "status": "completed", "timeout_phase": None}
        lines = [canonical(event) + b"\n" for event in events]
        events_sha256 = hashlib.sha256(b"".join(lines)).hexdigest()
        trailer = {"type": "end", "event_count": len(lines), "events_sha256": events_sha256}
        bundle = canonical(header) + b"\n" + b"".join(lines) + canonical(trailer) + b"\n"
        path = os.path.join(self.state_dir, "bundle.jsonl")
        with open(path, "wb") as handle:
            handle.write(bundle)
        state = dict(state, phase="bundle_ready", bundle={"bytes": len(bundle), "payload_sha256": hashlib.sha256(
            bundle).hexdigest(), "canonical_scan_event_hash": trailer["events_sha256"]})
        self.save(state)
        self.upload(state)

    def upload(self, state):
        reservation = state["assignment"]["reservation"]
        with open(os.path.join(self.state_dir, "bundle.jsonl"), "rb") as handle:
            bundle = handle.read()  # the whole bundle in memory
        path = "/api/v1/worker/assignments/%d/bundle" % reservation["reservation_id"]
        try:
            self.request("PUT", path, bundle, {"Content-Type": "application/octet-stream",
                                               "X-Truf-Payload-SHA256": hashlib.sha256(bundle).hexdigest()})
        except urllib.error.HTTPError as exc:
            report = canonical({"failure_code": "client_process_failed", "detail": str(exc)})
            self.request("POST", "/api/v1/worker/assignments/%d/terminal" % reservation["reservation_id"], report,
                         {"Content-Type": "application/json"})
        os.remove(self.state_path)


def main():
    parser = argparse.ArgumentParser(description="A naive remote scan worker (a counter-example).")
    parser.add_argument("--server", required=True)
    parser.add_argument("--token")
    parser.add_argument("--token-file")
    parser.add_argument("--parallelism", type=int, default=1)
    parser.add_argument("--poll-seconds", type=float, default=5.0)
    parser.add_argument("--error-delay-seconds", type=float, default=15.0)
    parser.add_argument("--http-timeout", type=float, default=120.0)
    parser.add_argument("--drain-seconds", type=float, default=20.0)
    Worker(parser.parse_args()).run()


if __name__ == "__main__":
    main()
