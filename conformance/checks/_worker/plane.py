"""The toy plane of the _worker contract: one fake control plane and a state directory.

The fake grants claims (POST /claim, idempotent by request id: a known id gets
its claim again, 200; a new one a new claim, 201), answers polls (GET /poll,
the claim in X-Toy-Claim) and takes heartbeats (POST /heartbeat). Every
answer hands out the intervals, contract seconds scaled by
conformance/timescale.py. The plane keeps what the fake saw (claims granted,
request ids, polls, beats) for the checks, a Timeline of its requests, and
the Lifecycles it made; after the run it adds the timeline to the transcript
and checks that every life left a whole state file behind.
"""

import json
import threading
import time

from conformance.invariants import Violation, dir_empty
from conformance.lifecycle import Lifecycle
from conformance.runner import HarnessError
from conformance.servers import LoopbackServer, json_reply
from conformance.timeline import Timeline
from conformance.timescale import scaled

STATE_FILE = "state.json"  # WORKER-STATE-1: where the toy worker keeps its claim

# Contract seconds; a check sees them times conformance.timescale.TIME_SCALE.
POLL_INTERVAL_CONTRACT_S = 6.0
HEARTBEAT_INTERVAL_CONTRACT_S = 8.0


class WorkerPlane:
    def __init__(self, ctx, poll_s=None, heartbeat_s=None):
        self.ctx = ctx
        self.poll_s = poll_s if poll_s is not None else scaled(POLL_INTERVAL_CONTRACT_S)
        self.heartbeat_s = heartbeat_s if heartbeat_s is not None else scaled(HEARTBEAT_INTERVAL_CONTRACT_S)
        self.state_dir = ctx.tmpdir("state")
        self.scratch = ctx.tmpdir("scratch")
        self._lock = threading.Lock()
        self.granted = {}        # request id -> claim id, in the order granted
        # What the fake was sent, stamped with time.monotonic() when the handler ran
        # (between the request's arrival and its answer: compare with Life.t_start/t_end).
        self.claims = []         # (t, request id) of every claim received
        self.polls = []          # (t, claim id) of every poll
        self.beats = []          # (t, claim id, beat) of every heartbeat
        self.lifecycles = []
        self.server = LoopbackServer("toy-plane", seed=ctx.seed)
        self.server.route("POST", "/claim", self._claim)
        self.server.route("GET", "/poll", self._poll)
        self.server.route("POST", "/heartbeat", self._heartbeat)
        self.timeline = Timeline([self.server])

    # ---- the fake ----------------------------------------------------------
    def _intervals(self, **extra):
        extra.update(poll_interval_s=self.poll_s, heartbeat_interval_s=self.heartbeat_s)
        return extra

    def _claim(self, request):
        try:
            request_id = json.loads(request.body)["request_id"]
        except (ValueError, KeyError, TypeError):
            return json_reply({"error": "a claim needs a request_id"}, status=400)
        with self._lock:
            self.claims.append((time.monotonic(), request_id))
            known = request_id in self.granted
            if not known:
                self.granted[request_id] = "claim-%d" % (len(self.granted) + 1)
            claim_id = self.granted[request_id]
        return json_reply(self._intervals(claim_id=claim_id), status=200 if known else 201)

    def _poll(self, request):
        claim_id = request.headers.get("x-toy-claim")
        with self._lock:
            self.polls.append((time.monotonic(), claim_id))
            if claim_id not in self.granted.values():
                return json_reply({"error": "unknown claim"}, status=404)
        return json_reply(self._intervals(work=None))

    def _heartbeat(self, request):
        try:
            doc = json.loads(request.body)
        except ValueError:
            return json_reply({"error": "not JSON"}, status=400)
        with self._lock:
            self.beats.append((time.monotonic(), doc.get("claim_id"), doc.get("beat")))
        return json_reply(self._intervals(ok=True))

    # ---- the node ----------------------------------------------------------
    def env(self, **extra):
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
               "TOY_PLANE_URL": self.server.origin, "TOY_STATE_DIR": self.state_dir, "TMPDIR": self.scratch}
        env.update(extra)
        return env

    def lifecycle(self, **extra_env):
        """A Lifecycle of the node against this plane and its state directory."""
        lives = Lifecycle(self.ctx, self.env(**extra_env), state_dir=self.state_dir, timeline=self.timeline)
        self.lifecycles.append(lives)
        return lives

    def state_on_disk(self):
        """The state file as a dict ({} when absent, None when it is not whole JSON)."""
        try:
            with open("%s/%s" % (self.state_dir, STATE_FILE), "rb") as handle:
                return json.loads(handle.read())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return None

    # ---- after the run -----------------------------------------------------
    def invariants(self):
        if self.server.errors:
            raise HarnessError("the toy plane failed while serving the node:\n%s" % self.server.errors[0])
        self.ctx.note(self.timeline.render())
        found = []
        for lives in self.lifecycles:
            for life in lives.lives:
                raw = (life.state_files or {}).get(STATE_FILE)
                if raw is None:
                    continue
                try:
                    json.loads(raw)
                except ValueError:
                    found.append(Violation("state file whole after every life",
                                           "%s is whole JSON whenever the node is gone (atomic replace)" % STATE_FILE,
                                           "after life %d it held %d bytes that do not parse: %r"
                                           % (life.index, len(raw), raw[:80]),
                                           "write a temporary file, fsync it, then os.replace() it over the old one"))
        found += dir_empty(self.scratch, name="scratch removed")
        return found

    def close(self):
        self.server.close()
