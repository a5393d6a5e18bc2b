"""The staging area and the orchestrator's collector (STEP-MARKER-*, STEP-OUTPUT-*).

Staging is presigned POST into the store under KEY_PREFIX (the envelope
carries the policy this fake has the store sign) or, in local_path mode, a
directory. After the node exits, ``collect()`` reads the completion marker and
result.json as the platform would; ``invariants(result)`` then re-reads every
object the marker lists and states what the collector refuses after *any* run:
a marker that disagrees with the process, with the stored bytes, with what
staging holds or with the launch's identity, or one that is not the last write.
"""

import hashlib
import json
import os

from conformance.invariants import Violation
from conformance.planes.step.base import EXIT_STATUS, KEY_PREFIX, MARKER_NAME, RESULT_NAME, exchanges, is_data_key

__all__ = ["Collector"]

# The identity fields a marker carries, and the variable each falls back to.
IDENTITY_FIELDS = (("execution_id", "LSPO_EXECUTION_ID"), ("attempt", "LSPO_ATTEMPT"),
                   ("generation", "LSPO_GENERATION"))
# How much of one staged object collection reads: above the marker's 8 MiB and
# result.json's 1 MiB ceilings, so a check sees how far over one went.
READ_LIMIT_BYTES = 16 << 20


class Collector(object):
    """Staging and collection of one run: store (an ObjectStore), staging_dir
    (local_path mode's directory), job (a Job: the manifest the identity is
    compared with), env (a callable returning the node's whole environment).
    Options (also plane keywords):

    staging      "presigned_post" (default) or "local_path".
    max_bytes    the upload policy's content-length-range ceiling (default 1 GiB).
    post_answer  how the store answers an accepted POST: 204 (S3's default), or
                 200 or 201, which the policy's success_action_status field asks
                 for (the upstream took any 2xx; STEP-PEER-2).

    Observing, as the platform sees it after collect(): marker (the parsed
    marker or None), marker_raw, report (result.json parsed), report_raw,
    collected_problems; marker_relpaths(), data_relpaths(); stored(relpath),
    read_stored(relpath), hash_stored(relpath), stored_relpaths(). The uploads:
    posts(relpath), data_posts(), marker_posts(), marker_key(); the policy's
    field names: post_field_names().
    """

    OPTIONS = ("staging", "max_bytes", "post_answer")

    def __init__(self, store, staging_dir, job, env, staging="presigned_post", max_bytes=1 << 30, post_answer=204):
        self.store = store
        self.staging_dir = staging_dir
        self.job = job
        self._env = env
        self.staging = staging
        self.max_bytes = max_bytes
        if post_answer not in (200, 201, 204):
            raise ValueError("post_answer is 200, 201 or 204, not %r" % (post_answer,))
        self.post_answer = post_answer
        self._post_field_names = []
        self.marker = None
        self.marker_raw = None
        self.report = None
        self.report_raw = None
        self.collected_problems = []

    # ---------------------------------------------------------------- what the envelope says of staging
    def scheme(self):
        return "s3" if self.staging == "presigned_post" else "local"

    def staging_block(self, token):
        """The envelope's staging member: a policy presigned with token, or the directory."""
        if self.staging == "presigned_post":
            post = self.store.presign_post(KEY_PREFIX, token, max_bytes=self.max_bytes,
                                           success_action_status=None if self.post_answer == 204
                                           else str(self.post_answer))
            self._post_field_names = list(post["fields"])
            return {"mode": "presigned_post", "post": post}
        return {"mode": "local_path", "path": self.staging_dir}

    def post_field_names(self):
        """The policy field names of the latest envelope, in order."""
        return list(self._post_field_names)

    # ---------------------------------------------------------------- the uploads
    def marker_key(self):
        return KEY_PREFIX + MARKER_NAME

    def posts(self, relpath=None):
        """The store's POSTs of KEY_PREFIX + relpath, or every POST."""
        return exchanges(self.store, "POST", key=None if relpath is None else KEY_PREFIX + relpath)

    def data_posts(self):
        """POSTs of the node's own objects: everything under the staging prefix
        but result.json and the marker, whatever the node named them."""
        return [ex for ex in self.posts() if is_data_key(ex.key)]

    def marker_posts(self):
        return self.posts(MARKER_NAME)

    # ---------------------------------------------------------------- what staging holds
    def _local(self, relpath):
        path = os.path.join(self.staging_dir, relpath)
        return path if os.path.isfile(path) else None

    def stored(self, relpath):
        """The committed object at KEY_PREFIX + relpath (its path in local_path mode), or None."""
        if self.staging == "local_path":
            return self._local(relpath)
        return self.store.objects().get(KEY_PREFIX + relpath)

    def read_stored(self, relpath, limit=READ_LIMIT_BYTES):
        """The first `limit` bytes of the staged object, or None."""
        if self.staging == "local_path":
            path = self._local(relpath)
            if path is None:
                return None
            with open(path, "rb") as handle:
                return handle.read(limit)
        key = KEY_PREFIX + relpath
        if key not in self.store.objects():
            return None
        with self.store.open_object(key) as handle:
            return handle.read(limit)

    def hash_stored(self, relpath):
        """(sha256, size) of the staged object, re-read; None when absent."""
        if self.staging == "local_path":
            path = self._local(relpath)
            if path is None:
                return None
            digest = hashlib.sha256()
            size = 0
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
                    size += len(block)
            return digest.hexdigest(), size
        key = KEY_PREFIX + relpath
        if key not in self.store.objects():
            return None
        return self.store.read_hash(key)

    def stored_relpaths(self):
        """Relpaths of every object in staging after the run, the marker included."""
        if self.staging == "local_path":
            found = []
            for top, _dirs, files in os.walk(self.staging_dir):
                found += [os.path.relpath(os.path.join(top, name), self.staging_dir).replace(os.sep, "/")
                          for name in files]
            return sorted(found)
        return sorted(key[len(KEY_PREFIX):] for key in self.store.objects() if key.startswith(KEY_PREFIX))

    # ---------------------------------------------------------------- collection
    def collect(self):
        """Read the receipt and the report as the platform does."""
        self.marker_raw = self.read_stored(MARKER_NAME)
        self.marker = None
        if self.marker_raw is not None:
            try:
                self.marker = json.loads(self.marker_raw.decode("utf-8"))
            except ValueError as exc:
                self.collected_problems.append("marker is not JSON: %s" % exc)
        self.report_raw = self.read_stored(RESULT_NAME)
        self.report = None
        if self.report_raw is not None:
            try:
                self.report = json.loads(self.report_raw.decode("utf-8"))
            except ValueError as exc:
                self.collected_problems.append("result.json is not JSON: %s" % exc)

    def marker_relpaths(self):
        """The relpaths the collected marker lists, in its order."""
        if not isinstance(self.marker, dict) or not isinstance(self.marker.get("objects"), list):
            return []
        return [o.get("relpath") for o in self.marker["objects"] if isinstance(o, dict)]

    def data_relpaths(self):
        """The marker's relpaths of the node's own objects (not result.json)."""
        return [r for r in self.marker_relpaths() if r != RESULT_NAME]

    def identity_candidates(self):
        """field -> the values the rules of STEP-MANIFEST-4 allow: the manifest's
        usable value (if the node could read it) and the environment's."""
        manifest = self.job.manifest_document()
        env = self._env()
        allowed = {}
        for field, var in IDENTITY_FIELDS:
            values = set()
            value = manifest.get(field)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                values.add(value)
            raw = (env.get(var) or "").strip()
            if raw.isdigit() and raw.isascii() and int(raw) >= 1:
                values.add(int(raw))
            allowed[field] = values
        keys = set()
        for value in (manifest.get("idempotency_key"), env.get("LSPO_IDEMPOTENCY_KEY")):
            if isinstance(value, str) and value.strip():
                keys.add(value)
        allowed["idempotency_key"] = keys or {None}
        return allowed

    # ---------------------------------------------------------------- invariants
    def invariants(self, result):
        """What the collector refuses after the run `result` (a RunResult):
        a marker that is not an object; an exit_code that is not the process's
        or a status that disagrees with it (STEP-MARKER-2/3); a relpath twice,
        a port listing what objects does not, an object missing (when
        succeeded) or held with other bytes, an object in staging the marker
        omits (STEP-MARKER-5); another identity than the launch's
        (STEP-MANIFEST-4); with presigned_post staging, a request that
        overlaps or follows the marker's (STEP-MARKER-1). No marker: nothing."""
        found = []
        marker = self.marker
        if self.marker_raw is None:
            return found
        if not isinstance(marker, dict):
            return [Violation("STEP-MARKER-2: marker shape", "a JSON object", "not parseable")]
        code = result.exit_code
        if not result.timed_out and marker.get("exit_code") != code:
            found.append(Violation("STEP-MARKER-3: exit_code is the process's",
                                   "marker exit_code == process exit status %s" % code,
                                   "marker exit_code %r" % marker.get("exit_code")))
        if marker.get("status") != EXIT_STATUS.get(marker.get("exit_code")):
            found.append(Violation("STEP-MARKER-2: status agrees with exit_code",
                                   "status %r for exit_code %r" % (EXIT_STATUS.get(marker.get("exit_code")),
                                                                   marker.get("exit_code")),
                                   "status %r" % marker.get("status")))
        found += self._inventory_invariants(marker)
        found += self._identity_invariant(marker)
        if self.staging == "presigned_post":
            found += self._marker_last()
        return found

    def _inventory_invariants(self, marker):
        """STEP-MARKER-5: the marker's objects are what staging holds."""
        found = []
        objects = marker.get("objects") if isinstance(marker.get("objects"), list) else []
        relpaths = [o.get("relpath") for o in objects if isinstance(o, dict)]
        if len(set(relpaths)) != len(relpaths):
            found.append(Violation("STEP-MARKER-5: no duplicate relpaths", "each relpath once",
                                   "duplicates: %s" % sorted({r for r in relpaths if relpaths.count(r) > 1})))
        ports = marker.get("produced_ports") if isinstance(marker.get("produced_ports"), dict) else {}
        for port, listed in ports.items():
            for relpath in listed if isinstance(listed, list) else []:
                if relpath not in relpaths:
                    found.append(Violation("STEP-MARKER-5: produced_ports within objects",
                                           "every port relpath listed in objects",
                                           "port %r lists %r, absent from objects" % (port, relpath)))
        succeeded = marker.get("status") == "succeeded"
        for entry in objects:
            if not isinstance(entry, dict):
                continue
            held = self.hash_stored(entry.get("relpath") or "")
            if held is None:
                if succeeded:
                    found.append(Violation("STEP-MARKER-5: collection re-reads every object",
                                           "%r in the store" % entry.get("relpath"), "missing"))
                continue
            if (held[0], held[1]) != (entry.get("sha256"), entry.get("size")):
                found.append(Violation("STEP-MARKER-5: listed hash and size are the stored bytes'",
                                       "%r sha256 %s size %s" % (entry.get("relpath"), held[0][:12], held[1]),
                                       "marker says sha256 %s size %s" % (str(entry.get("sha256"))[:12],
                                                                         entry.get("size"))))
        listed = set(relpaths)
        for relpath in self.stored_relpaths():
            # result.json too: a write of it that was accepted or ended without an
            # answer is listed (STEP-RESULT-4, D34), and a refused one is not stored.
            if relpath not in listed and relpath != MARKER_NAME:
                found.append(Violation("STEP-MARKER-5: the inventory names every object begun",
                                       "every object in staging listed in the marker",
                                       "%r is in staging but not in the marker" % relpath[:200]))
        return found

    def _identity_invariant(self, marker):
        """Collection compares the receipt's identity with the launch it collects."""
        found = []
        for field, allowed in self.identity_candidates().items():
            if marker.get(field) not in allowed or isinstance(marker.get(field), bool):
                found.append(Violation("STEP-MANIFEST-4: the marker carries this launch's identity",
                                       "%s one of %s" % (field, sorted(allowed, key=repr)),
                                       "%s %r" % (field, marker.get(field))))
        return found

    def _marker_last(self):
        marker_key = self.marker_key()
        transcript = self.store.transcript
        firsts = [ex for ex in transcript if ex.key == marker_key]
        if not firsts:
            return []
        begin = firsts[0].t_start
        for ex in transcript:
            if ex.key == marker_key:
                continue
            # A request the store was holding open (a hang or stall fault)
            # ends when the store closes, not when the node gave up on it:
            # for those only the start can be compared.
            held = ex.t_end is None or ex.outcome in ("stalled", "held", "closed")
            # The answer's start is stamped before its first byte is sent: a
            # node cannot have read an answer that began after the marker.
            answered = ex.t_answer if ex.t_answer is not None else ex.t_end
            if ex.t_start >= begin or (not held and answered is not None and answered > begin):
                return [Violation("STEP-MARKER-1: the marker is the last write",
                                  "every other request ended before the marker began",
                                  "%s %s overlaps or follows the marker" % (ex.method, ex.key or ex.path))]
        return []
