"""The step plane: a fake LSPO platform for one external step.

    plane = ctx.step_plane(inputs=[Input("a.csv", b"x,y\\n1,2\\n")])
    proc = plane.start()                 # the node, as PID 1 when possible
    result = plane.wait(proc)            # RunResult, then collection
    plane.marker                         # the parsed completion marker, or None

What it plays, in the order the platform does it:

* **Credentials.** It writes the envelope (contract/step.md, STEP-CREDS-*)
  into a directory it owns and points LSPO_CREDENTIALS_FILE at it. Every URL
  in it is presigned by the object store with the plane's current token.
  `rotate()` replaces the file as the agent does, unsignalled: write a new
  file in the same directory, then rename it over the old one.
* **Manifest and inputs.** The manifest is an object in the store (served at
  `manifest_get`) or a local file (`manifest_path`); each input is an object
  in the store (or a local file) with its sha256 and size pins.
* **Staging.** Presigned POST into the store under KEY_PREFIX, or a local
  directory in local_path mode.
* **Collection.** After the node exits, `collect()` reads the marker and
  result.json as the platform would and re-reads every object the marker
  lists; `invariants()` then states what must hold after *any* run.
* **Egress proxy** (`proxy=True`). A conformance.proxy.ProxyServer in front
  of everything: the proxy variables (HTTP_PROXY, HTTPS_PROXY and their
  lowercase forms, or `proxy_env`) name it, `no_proxy` sets NO_PROXY and
  no_proxy; with `proxy_credentials` it demands canary credentials, which
  join the plane's secrets. `store_host="localhost"` makes every URL name
  the store by that name instead of 127.0.0.1.

The identity of the run is fixed: execution 41, attempt 2, generation 3.
"""

import hashlib
import json
import os
import secrets as _secrets
import shutil
import signal
import tempfile
import time

from conformance.proxy import ProxyServer
from conformance.store import ObjectStore
from conformance.invariants import Violation
from conformance.runner import HarnessError
from conformance.timeouts import NODE_RUN_TIMEOUT_S, POLL_INTERVAL_S

# How often a wait for a store event also looks whether the node has exited.
EXIT_POLL_S = 20 * POLL_INTERVAL_S

MARKER_NAME = "__lspo_complete.json"
RESULT_NAME = "result.json"
KEY_PREFIX = "staging/exec-41/attempt-2/"
IDENTITY = {"execution_id": 41, "attempt": 2, "generation": 3, "idempotency_key": "idem-41-2"}
IDENTITY_ENV = {"LSPO_EXECUTION_ID": "41", "LSPO_ATTEMPT": "2", "LSPO_GENERATION": "3",
                "LSPO_IDEMPOTENCY_KEY": "idem-41-2"}
EXIT_STATUS = {0: "succeeded", 1: "failed", 10: "failed", 20: "cancelled"}
CA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ca", "ca.pem")

# Sentinel: leave a field out of the document entirely.
OMIT = object()

# The variables a plane with proxy=True sets to the proxy's URL.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")


def is_data_key(key):
    """True for a key under the staging prefix that is neither result.json nor
    the marker: an object of the node's own work."""
    return bool(key) and key.startswith(KEY_PREFIX) and key[len(KEY_PREFIX):] not in (RESULT_NAME, MARKER_NAME)


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def iso_utc(epoch_s):
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(epoch_s))


class Input:
    """One pinned input. `data` bytes, or `generated` size for a virtual object.

    Pins default to the truth; pass sha256=/size= to lie, OMIT to leave out.
    source: "get" (presigned GET), "local" (local_path), "none" (neither).
    """

    def __init__(self, relpath, data=b"", port=None, name=OMIT, sha256=None, size=None,
                 generated=None, source="get", url=None):
        self.relpath = relpath
        self.data = data
        self.port = port
        self.name = name
        self.generated = generated
        self.source = source
        self.url = url                # a fixed get_url (e.g. a blackhole), not presigned
        self.sha256_pin = sha256
        self.size_pin = size
        self.key = None
        self.true_sha256 = None
        self.true_size = None
        self.local_path = None

    @property
    def display_name(self):
        return self.relpath or (self.name if self.name is not OMIT else None)


class StepPlane:
    """See the module docstring. Every keyword has a default that makes a
    small successful run; a check changes only what it is about."""

    _count = 0

    def __init__(self, ctx, inputs=(), manifest=None, manifest_raw=None, manifest_source="get",
                 staging="presigned_post", tls=False, expires_in_s=900, expires_at=None,
                 identity_env=True, creds_env="file", envelope_patch=None, extra_env=None,
                 max_bytes=1 << 30, in_memory=False,
                 proxy=False, proxy_credentials=False, proxy_env=PROXY_VARIABLES, no_proxy=None,
                 proxy_hosts=None, store_host=None):
        self.ctx = ctx
        self.inputs = list(inputs)
        self.staging = staging
        self.manifest_source = manifest_source
        self.expires_in_s = expires_in_s
        self.expires_at = expires_at
        self.envelope_patch = envelope_patch
        self.max_bytes = max_bytes
        self.identity_env = identity_env
        self.creds_env = creds_env
        self.extra_env = dict(extra_env or {})
        self.proc = None
        self.result = None
        self.marker = None
        self.marker_raw = None
        self.report = None
        self.report_raw = None
        self.collected_problems = []
        self.extra_secrets = []
        self.post_field_names = []

        # A check may use several planes: each gets its own directories.
        StepPlane._count += 1
        home = "plane-%d" % StepPlane._count
        self.store = ObjectStore(ctx.tmpdir(home + "/store"), tls=tls, seed=ctx.seed)
        if store_host is not None:  # URLs name the store by this name (the test CA's certificate has localhost)
            self.store.origin = self.store.origin.replace("127.0.0.1", store_host, 1)
        self.proxy = None
        self.proxy_env = tuple(proxy_env)
        self.no_proxy = no_proxy
        if proxy:
            credentials = None
            if proxy_credentials:  # canaries; the password needs percent-encoding in the URL
                credentials = ("CANARYproxyuser" + _secrets.token_hex(4),
                               "CANARYproxy/pw%" + _secrets.token_hex(8))
            self.proxy = ProxyServer("proxy", credentials=credentials, hosts=proxy_hosts, seed=ctx.seed)
        self.creds_dir = ctx.tmpdir(home + "/creds")
        self.creds_path = os.path.join(self.creds_dir, "creds.json")
        # in_memory: local inputs, TMPDIR and local staging in /dev/shm (when
        # writable), for a check that moves thousands of tiny objects: on a
        # disk each one costs the node an fsync, and the run minutes.
        self.shm_dir = None
        if in_memory and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
            self.shm_dir = tempfile.mkdtemp(prefix="conformance-%s-" % home, dir="/dev/shm")
        place = ctx.tmpdir if self.shm_dir is None else self._shm_subdir
        self.scratch = place(home + "/scratch")
        self.local_dir = place(home + "/local")
        self.staging_dir = place(home + "/staging")
        self.tokens = [self.store.new_token()]

        if manifest is None:
            manifest = dict(IDENTITY, schema_version=1, params={"greeting": "hello"})
        self.manifest = manifest
        self.manifest_raw = manifest_raw
        raw = manifest_raw if manifest_raw is not None else json.dumps(manifest).encode()
        self.manifest_key = "jobs/exec-41/invocation.json"
        if manifest_source == "get":
            self.store.put(self.manifest_key, raw)
        elif manifest_source == "local":
            self.manifest_path = os.path.join(self.local_dir, "invocation.json")
            with open(self.manifest_path, "wb") as handle:
                handle.write(raw)
        for index, item in enumerate(self.inputs):
            self._seed_input(index, item)
        self.write_envelope()

    # ---------------------------------------------------------------- arrange
    def _seed_input(self, index, item):
        item.key = "inputs/%d/%s" % (index, (item.relpath or "unnamed").replace("\\", "_"))
        if item.generated is not None:
            item.true_sha256, item.true_size = self.store.serve_generated(item.key, item.generated,
                                                                          seed=index + 1)
        elif item.source == "local":
            item.local_path = os.path.join(self.local_dir, "input-%d.bin" % index)
            with open(item.local_path, "wb") as handle:
                handle.write(item.data)
            item.true_sha256, item.true_size = sha256_hex(item.data), len(item.data)
        else:
            item.true_sha256, item.true_size = self.store.put(item.key, item.data)

    @property
    def token(self):
        return self.tokens[-1]

    def envelope(self, token=None):
        """The envelope document for `token` (default: the current one)."""
        token = token or self.token
        expires = self.expires_at
        if expires is None:
            expires = iso_utc(time.time() + self.expires_in_s)
        doc = {"schema_version": 1, "scheme": "s3" if self.staging == "presigned_post" else "local"}
        if expires is not OMIT:
            doc["expires_at"] = expires
        if self.manifest_source == "get":
            doc["manifest_get"] = self.store.presign_get(self.manifest_key, token)
        elif self.manifest_source == "local":
            doc["manifest_path"] = self.manifest_path
        entries = []
        for item in self.inputs:
            entry = {"relpath": item.relpath}
            if item.name is not OMIT:
                entry["name"] = item.name
            pin = item.true_sha256 if item.sha256_pin is None else item.sha256_pin
            if pin is not OMIT:
                entry["sha256"] = pin
            size = item.true_size if item.size_pin is None else item.size_pin
            if size is not OMIT:
                entry["size"] = size
            if item.port is not None:
                entry["port"] = item.port
            if item.url is not None:
                entry["get_url"] = item.url
            elif item.source == "get":
                entry["get_url"] = self.store.presign_get(item.key, token)
            elif item.source == "local":
                entry["local_path"] = item.local_path
            entries.append(entry)
        doc["inputs"] = entries
        if self.staging == "presigned_post":
            post = self.store.presign_post(KEY_PREFIX, token, max_bytes=self.max_bytes)
            self.post_field_names = list(post["fields"])
            doc["staging"] = {"mode": "presigned_post", "post": post}
        else:
            doc["staging"] = {"mode": "local_path", "path": self.staging_dir}
        if self.envelope_patch:
            self.envelope_patch(doc)
        return doc

    def write_envelope(self, doc=None, raw=None):
        """Replace the credentials file atomically (new file, then rename)."""
        if raw is None:
            raw = json.dumps(self.envelope() if doc is None else doc, indent=2).encode()
        tmp = os.path.join(self.creds_dir, ".creds.json.new")
        with open(tmp, "wb") as handle:
            handle.write(raw)
        os.replace(tmp, self.creds_path)

    def rotate(self, expire_old=True, expires_in_s=None):
        """What the agent does before expiry: a new token, a new file, no signal.
        The old token is refused from now on when expire_old."""
        old = self.token
        self.tokens.append(self.store.new_token())
        if expires_in_s is not None:
            self.expires_in_s = expires_in_s
            self.expires_at = None
        self.write_envelope()
        if expire_old:
            self.store.expire_token(old)
        self.ctx.note("plane: credentials rotated to token #%d%s" % (
            len(self.tokens), "; token #%d now refused" % (len(self.tokens) - 1) if expire_old else ""))

    def rewrite_same(self):
        """Rewrite the credentials file with identical bytes (a new inode)."""
        with open(self.creds_path, "rb") as handle:
            raw = handle.read()
        self.write_envelope(raw=raw)

    def remove_credentials(self):
        os.unlink(self.creds_path)
        self.ctx.note("plane: credentials file removed")

    def env(self):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
               "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": self.scratch, "SSL_CERT_FILE": CA_FILE}
        if self.creds_env in ("file", "both", "both-same"):
            env["LSPO_CREDENTIALS_FILE"] = self.creds_path
        if self.creds_env in ("legacy", "both"):
            env["LSPO_CREDENTIALS"] = (self.creds_path if self.creds_env == "legacy"
                                       else os.path.join(self.local_dir, "elsewhere", "creds.json"))
        if self.creds_env == "both-same":
            env["LSPO_CREDENTIALS"] = self.creds_path
        if self.identity_env:
            env.update(IDENTITY_ENV)
        if self.proxy is not None:
            env.update((name, self.proxy.url()) for name in self.proxy_env)
        if self.no_proxy is not None:
            env.update(NO_PROXY=self.no_proxy, no_proxy=self.no_proxy)
        env.update(self.extra_env)
        return env

    # ---------------------------------------------------------------- act
    def start(self, pid1=True, memory_limit_bytes=None, args=()):
        self.proc = self.ctx.start_node(self.env(), args=args, pid1=pid1, memory_limit_bytes=memory_limit_bytes)
        return self.proc

    def wait(self, proc=None, timeout=NODE_RUN_TIMEOUT_S):
        proc = proc or self.proc
        self.result = proc.wait(timeout)
        self.ctx.note("node: %s" % self.result.describe())
        self.collect()
        return self.result

    def run(self, timeout=NODE_RUN_TIMEOUT_S, **start):
        """start() then wait(): for checks that only arrange faults beforehand."""
        self.start(**start)
        return self.wait(timeout=timeout)

    def wait_event(self, predicate, timeout):
        """The first store event satisfying predicate, or None after timeout
        seconds or as soon as the node has exited without one."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.store.wait_for(predicate, min(EXIT_POLL_S, max(0.0, deadline - time.monotonic())))
            if found or time.monotonic() >= deadline:
                return found
            if self.proc is not None and not self.proc.running():
                return self.store.wait_for(predicate, 0)

    def skip_unless_own_uploads(self):
        """SKIP the check when the run ended well without publishing any object
        of its own: a step whose work writes nothing (one that only claims
        facts, say) offers no upload for the check to act on, and that is no
        fault of the node's."""
        if self.result is not None and self.result.exit_code == 0 and not self.data_posts():
            self.ctx.skip("the node published no object of its own, so there was no such upload to act on")

    def stop_when(self, predicate, signum=signal.SIGTERM, timeout=30.0, what="the trigger", settle_s=0.0,
                  own_upload=False):
        """Send `signum` to the node settle_s after a store event satisfies
        predicate (time for the node to block in the phase under test).
        Returns the monotonic time the signal went out (the check fails if the
        trigger never happened; with own_upload, a trigger on an upload of the
        node's own objects, it is skipped when the node published none)."""
        if not self.wait_event(predicate, timeout):
            if own_upload and not self.proc.running():
                self.wait()
                self.skip_unless_own_uploads()
            self.ctx.fail(expected="the node to reach %s" % what,
                          actual="it did not within %.0f s (%s)" % (timeout, self.describe_exchanges()),
                          diagnosis="the run never reached the phase this check stops it in")
        time.sleep(settle_s)
        self.proc.signal(signum)
        self.ctx.note("plane: sent signal %d at %s" % (signum, what))
        return time.monotonic()

    # ---------------------------------------------------------------- observe
    def exchanges(self, method=None, key=None, key_suffix=None):
        out = []
        for ex in self.store.transcript:
            if method and ex.method != method:
                continue
            if key is not None and ex.key != key:
                continue
            if key_suffix is not None and not (ex.key or "").endswith(key_suffix):
                continue
            out.append(ex)
        return out

    def store_post_fields(self):
        """The policy field names of the current envelope, in order."""
        return list(self.post_field_names)

    def posts(self, relpath=None):
        return self.exchanges("POST", key=None if relpath is None else KEY_PREFIX + relpath)

    def gets(self, item=None):
        return self.exchanges("GET", key=None if item is None else item.key)

    def input_gets(self):
        keys = {item.key for item in self.inputs}
        return [ex for ex in self.exchanges("GET") if ex.key in keys]

    def marker_key(self):
        return KEY_PREFIX + MARKER_NAME

    def data_posts(self):
        """POSTs of the node's own objects: everything under the staging prefix
        but result.json and the marker, whatever the node named them."""
        return [ex for ex in self.posts() if is_data_key(ex.key)]

    def data_relpaths(self):
        """The marker's relpaths of the node's own objects (not result.json)."""
        return [r for r in self.marker_relpaths() if r != RESULT_NAME]

    def stored_relpaths(self):
        """Relpaths of every object in staging after the run, the marker included."""
        if self.staging == "local_path":
            found = []
            for top, _dirs, files in os.walk(self.staging_dir):
                found += [os.path.relpath(os.path.join(top, name), self.staging_dir).replace(os.sep, "/")
                          for name in files]
            return sorted(found)
        return sorted(key[len(KEY_PREFIX):] for key in self.store.objects() if key.startswith(KEY_PREFIX))

    def marker_posts(self):
        return self.posts(MARKER_NAME)

    def describe_exchanges(self, limit=12):
        parts = []
        for ex in self.store.transcript[-limit:]:
            parts.append("%s %s -> %s%s" % (ex.method, ex.key or ex.path, ex.status or "-",
                                           " (%s)" % ex.outcome if ex.outcome not in (None, "ok") else ""))
        return "; ".join(parts) or "no requests"

    def stored(self, relpath):
        """The committed object at KEY_PREFIX + relpath, or None."""
        if self.staging == "local_path":
            path = os.path.join(self.staging_dir, relpath)
            return path if os.path.isfile(path) else None
        return self.store.objects().get(KEY_PREFIX + relpath)

    def read_stored(self, relpath, limit=16 << 20):
        if self.staging == "local_path":
            path = os.path.join(self.staging_dir, relpath)
            if not os.path.isfile(path):
                return None
            with open(path, "rb") as handle:
                return handle.read(limit)
        key = KEY_PREFIX + relpath
        if key not in self.store.objects():
            return None
        with self.store.open_object(key) as handle:
            return handle.read(limit)

    def hash_stored(self, relpath):
        if self.staging == "local_path":
            path = os.path.join(self.staging_dir, relpath)
            if not os.path.isfile(path):
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
        if not isinstance(self.marker, dict) or not isinstance(self.marker.get("objects"), list):
            return []
        return [o.get("relpath") for o in self.marker["objects"] if isinstance(o, dict)]

    def progress(self):
        """Parsed progress lines: [(t, dict or None for a malformed one, raw line)]."""
        out = []
        for t, line in (self.result.stdout_lines if self.result else self.proc.stdout_lines):
            if line.startswith("@lspo:progress"):
                try:
                    doc = json.loads(line[len("@lspo:progress "):])
                except ValueError:
                    doc = None
                out.append((t, doc, line))
        return out

    def secrets(self):
        """Every value whose appearance outside the process is a leak."""
        values = list(self.store.secrets()) + list(self.extra_secrets)
        if self.proxy is not None:
            values += self.proxy.secrets()
        return [v for v in values if isinstance(v, str) and len(v) >= 12]

    def describe_secret(self, secret):
        """Name a leaked value without repeating any of it (reports are logs too)."""
        seq = self.store.token_seq(secret)
        if seq is not None:
            return "session token #%d" % seq
        if secret in self.extra_secrets:
            return "a URL credential planted by the check"
        if self.proxy is not None and secret in self.proxy.secrets():
            return "the proxy's user or password (%d characters)" % len(secret)
        return "a signature or policy value (%d characters)" % len(secret)

    # ---------------------------------------------------------------- invariants
    def invariants(self):
        """What must hold after any run of the node, whatever the check was about."""
        if self.result is None:
            return []
        if self.store.errors:
            # The store itself broke: a harness fault (ERROR), never the node's FAIL.
            raise HarnessError("the fake store failed while serving the node:\n%s" % self.store.errors[0])
        if self.proxy is not None and self.proxy.errors:
            raise HarnessError("the fake proxy failed while serving the node:\n%s" % self.proxy.errors[0])
        found = []
        found += self._secret_invariants()
        found += self._traceback_invariant()
        found += self._exit_invariants()
        found += self._marker_invariants()
        found += self._scratch_invariant()
        return found

    def _secret_invariants(self):
        secrets = self.secrets()
        places = {"stdout": self.result.stdout, "stderr": self.result.stderr,
                  "argv": " ".join(self.result.cmdline_snapshot or []),
                  "marker": (self.marker_raw or b"").decode("utf-8", "replace"),
                  "result.json": (self.report_raw or b"").decode("utf-8", "replace")}
        found = []
        for where, text in places.items():
            for secret in secrets:
                if secret in text:
                    found.append(Violation("STEP-REDACT-1: no credential leaves the process",
                                           "no token, signature or policy value in %s" % where,
                                           "%s appears in %s" % (self.describe_secret(secret), where)))
                    break
        return found

    def _traceback_invariant(self):
        for stream in ("stdout", "stderr"):
            if "Traceback (most recent call last)" in getattr(self.result, stream):
                return [Violation("STEP-REDACT-2: no traceback", "no traceback on %s" % stream,
                                  "a Python traceback was printed on %s" % stream)]
        return []

    def _exit_invariants(self):
        code = self.result.exit_code
        if self.result.timed_out or self.result.killed:
            return []
        if code not in EXIT_STATUS:
            return [Violation("STEP-EXIT-1: exit codes", "exit status 0, 1, 10 or 20",
                              "exit status %s" % code)]
        return []

    def _marker_invariants(self):
        found = []
        marker = self.marker
        if self.marker_raw is None:
            return found
        if not isinstance(marker, dict):
            return [Violation("STEP-MARKER-2: marker shape", "a JSON object", "not parseable")]
        code = self.result.exit_code
        if not self.result.timed_out and marker.get("exit_code") != code:
            found.append(Violation("STEP-MARKER-3: exit_code is the process's",
                                   "marker exit_code == process exit status %s" % code,
                                   "marker exit_code %r" % marker.get("exit_code")))
        if marker.get("status") != EXIT_STATUS.get(marker.get("exit_code")):
            found.append(Violation("STEP-MARKER-2: status agrees with exit_code",
                                   "status %r for exit_code %r" % (EXIT_STATUS.get(marker.get("exit_code")),
                                                                   marker.get("exit_code")),
                                   "status %r" % marker.get("status")))
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
        found += self._identity_invariant(marker)
        if self.staging == "presigned_post":
            found += self._marker_last()
        return found

    def _identity_candidates(self):
        """field -> the values the rules of STEP-MANIFEST-4 allow: the manifest's
        usable value (if the node could read it) and the environment's."""
        try:
            manifest = json.loads(self.manifest_raw.decode("utf-8")) if self.manifest_raw else self.manifest
        except ValueError:
            manifest = None
        manifest = manifest if isinstance(manifest, dict) else {}
        env = self.env()
        allowed = {}
        for field, var in (("execution_id", "LSPO_EXECUTION_ID"), ("attempt", "LSPO_ATTEMPT"),
                           ("generation", "LSPO_GENERATION")):
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

    def _identity_invariant(self, marker):
        """Collection compares the receipt's identity with the launch it collects."""
        found = []
        for field, allowed in self._identity_candidates().items():
            if marker.get(field) not in allowed or isinstance(marker.get(field), bool):
                found.append(Violation("STEP-MANIFEST-4: the marker carries this launch's identity",
                                       "%s one of %s" % (field, sorted(allowed, key=repr)),
                                       "%s %r" % (field, marker.get(field))))
        return found

    def _marker_last(self):
        marker_key = KEY_PREFIX + MARKER_NAME
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

    def _scratch_invariant(self):
        """STEP-STREAM-3: nothing the node made under TMPDIR outlives it."""
        for top, _dirs, files in os.walk(self.scratch):
            for name in files:
                return [Violation("STEP-STREAM-3: scratch left empty", "TMPDIR empty after exit",
                                  "left: %s" % os.path.relpath(os.path.join(top, name), self.scratch))]
        return []

    def _shm_subdir(self, name):
        path = os.path.join(self.shm_dir, name)
        os.makedirs(path, exist_ok=True)
        return path

    def close(self):
        try:
            if self.proxy is not None:
                self.proxy.close()
        finally:
            self.store.close()
        if self.shm_dir is not None:
            shutil.rmtree(self.shm_dir, ignore_errors=True)


def make_plane(ctx, *args, **kwargs):
    return StepPlane(ctx, *args, **kwargs)


Plane = StepPlane
