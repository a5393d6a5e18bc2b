"""Toy long-lived worker for the harness's own tests: the _worker contract.

    TOY_PLANE_URL=http://127.0.0.1:PORT TOY_STATE_DIR=/tmp/toy python3 conformance/tests/data/toy_worker.py
    python3 -m conformance _worker conformance/tests/data/toy_worker.py

It claims one piece of work from the toy plane (POST /claim), then polls for
work (GET /poll) and heartbeats (POST /heartbeat, on its own thread) at the
intervals the plane hands out, until SIGTERM. Its claim lives in a state file
in TOY_STATE_DIR, written atomically: the request id before the claim is sent,
the claim once it is granted. A restart after a crash replays a claim whose
answer was lost with the same request id, and resumes a granted claim without
claiming again.

Each contract behaviour sits on its own line tagged with its clause, so the
mutants in conformance/tests/data/mutants/_worker/ can break one at a time.
"""

import argparse
import http.client
import json
import os
import select
import signal
import sys
import threading
import urllib.parse
import uuid

STATE_FILE = "state.json"
DEFAULT_POLL_S = 0.2       # only until the plane has handed out an interval
DEFAULT_HEARTBEAT_S = 1.0  # only when the claim answer carries no heartbeat interval
HTTP_TIMEOUT_S = 5.0       # one request, connect to last byte


class Stop:
    """The stop flag and a wakeup pipe: the SIGTERM handler only sets the flag
    and writes a byte (no lock, so it cannot deadlock the thread it interrupts);
    every wait polls the pipe, which is never drained, so all threads see it."""

    def __init__(self):
        self.requested = False
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)

    def handle(self, signum, frame):
        self.requested = True
        try:
            os.write(self._write, b"\0")
        except OSError:
            pass

    def wait(self, seconds):
        """Sleep up to `seconds`; True as soon as a stop was requested."""
        poller = select.poll()
        poller.register(self._read, select.POLLIN)
        poller.poll(max(0.0, seconds) * 1000.0)  # WORKER-IDLE-1: asleep in the kernel until the interval or a signal
        return self.requested


def call(base, method, path, doc=None, headers=None):
    """One request on a fresh connection; the answer's JSON document ({} when empty)."""
    origin = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(origin.hostname, origin.port, timeout=HTTP_TIMEOUT_S)
    try:
        body = None if doc is None else json.dumps(doc).encode("utf-8")
        sent = dict(headers or {})
        if body is not None:
            sent["Content-Type"] = "application/json"
        conn.request(method, path, body=body, headers=sent)
        answer = conn.getresponse()
        data = answer.read()
        if answer.status >= 300:
            raise OSError("%s %s: HTTP %d" % (method, path, answer.status))
        return json.loads(data) if data else {}
    finally:
        conn.close()


def load_state(directory):
    try:
        with open(os.path.join(directory, STATE_FILE), encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return {}


def save_state(directory, state):
    """Replace the state file whole: a crash leaves the old one or the new one, never a torn one."""
    path = os.path.join(directory, STATE_FILE)
    temporary = "%s.%d.tmp" % (path, os.getpid())
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, json.dumps(state, sort_keys=True).encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)  # WORKER-STATE-1: atomic, after the data is on disk
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def claim(base, state_dir, state):
    """The claim to work on: the one in the state file, else a new or replayed one."""
    if state.get("claim_id"):  # WORKER-STATE-1: a granted claim is resumed, never made again
        return state
    request_id = state.get("request_id") or uuid.uuid4().hex  # WORKER-STATE-1: a lost answer's claim is replayed
    save_state(state_dir, {"request_id": request_id})  # WORKER-STATE-1: on disk before the claim is sent
    answer = call(base, "POST", "/claim", {"request_id": request_id})
    state = {"request_id": request_id, "claim_id": str(answer["claim_id"]),
             "poll_interval_s": answer.get("poll_interval_s"),
             "heartbeat_interval_s": answer.get("heartbeat_interval_s")}
    save_state(state_dir, state)
    return state


def heartbeat(base, state, stop):
    interval = float(state.get("heartbeat_interval_s") or DEFAULT_HEARTBEAT_S)
    beat = 0
    while not stop.wait(interval):  # WORKER-BEAT-1: one beat per interval handed out; none after SIGTERM
        beat += 1
        try:
            call(base, "POST", "/heartbeat", {"claim_id": state["claim_id"], "beat": beat})
        except (OSError, ValueError) as exc:
            sys.stderr.write("toy-worker: heartbeat failed: %s\n" % exc)  # a failed beat never ends the work


def main(argv=None):
    parser = argparse.ArgumentParser(description="Claims work, then polls and heartbeats until SIGTERM "
                                                 "(TOY_PLANE_URL, TOY_STATE_DIR).")
    parser.parse_args(argv)
    base, state_dir = os.environ["TOY_PLANE_URL"], os.environ["TOY_STATE_DIR"]
    stop = Stop()
    signal.signal(signal.SIGTERM, stop.handle)  # WORKER-STOP-1: a handler, so SIGTERM reaches PID 1
    state = claim(base, state_dir, load_state(state_dir))
    print("claimed %s" % state["claim_id"], flush=True)
    beats = threading.Thread(target=heartbeat, args=(base, state, stop), name="heartbeat", daemon=True)
    beats.start()
    interval = float(state.get("poll_interval_s") or DEFAULT_POLL_S)
    while not stop.requested:  # WORKER-STOP-1: no new poll once SIGTERM arrived
        try:
            answer = call(base, "GET", "/poll", headers={"X-Toy-Claim": state["claim_id"]})
            interval = float(answer.get("poll_interval_s") or interval)  # WORKER-POLL-1: the plane sets the cadence
        except (OSError, ValueError) as exc:
            sys.stderr.write("toy-worker: poll failed: %s\n" % exc)
        if stop.wait(interval):  # WORKER-POLL-1: the next poll one interval after this one
            break
    beats.join(HTTP_TIMEOUT_S)
    print("stopped", flush=True)
    return 0  # WORKER-STOP-1: a stop is a clean exit


if __name__ == "__main__":
    sys.exit(main())
