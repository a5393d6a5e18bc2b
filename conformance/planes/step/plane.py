"""The step plane: the fakes of one external step composed, the node's environment, the run.

The plane makes each fake with its own options (see conformance/planes/step
for the map), points the node at them through its environment, runs the node,
collects, and states the invariants no single fake can: no secret of any fake
in any output, no traceback, an exit status the contract knows, TMPDIR left
empty.
"""

import json
import os
import secrets as _secrets
import shutil
import signal
import tempfile
import time

from conformance.invariants import Violation
from conformance.planes.step.agent import CredentialsAgent
from conformance.planes.step.base import CA_FILE, EXIT_STATUS, exchanges, take
from conformance.planes.step.collector import Collector
from conformance.planes.step.job import Job
from conformance.proxy import ProxyServer
from conformance.runner import HarnessError
from conformance.store import ObjectStore
from conformance.timeouts import NODE_RUN_TIMEOUT_S, POLL_INTERVAL_S, Deadline, node_hung

__all__ = ["StepPlane", "PROXY_VARIABLES", "PROXY_FORMS", "EXIT_POLL_S"]

# How often a wait for a store event also looks whether the node has exited.
EXIT_POLL_S = 20 * POLL_INTERVAL_S
# The variables a plane with proxy=True sets to the proxy's URL.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
# How a plane may write the proxy's URL in those variables (option proxy_form).
PROXY_FORMS = ("url", "schemeless", "path")
# A secret shorter than this is not scanned for (it would match by accident).
MIN_SECRET_CHARS = 12


class StepPlane(object):
    """The fakes of one run: ``store`` (conformance.store.ObjectStore),
    ``proxy`` (conformance.proxy.ProxyServer, or None), ``job`` (Job: the
    manifest and the inputs), ``agent`` (CredentialsAgent: the envelope and its
    rotation) and ``collector`` (Collector: staging and collection). Every
    keyword has a default that makes a small successful run; a check changes
    only what it is about.

    A fake's options (its OPTIONS; see its docstring) are the plane's keywords
    too, and its attributes after (``inputs`` reaches the job, ``expires_in_s``
    the agent, ``staging`` the collector). The plane's own:

    tls                the store speaks HTTPS (the test CA, from SSL_CERT_FILE).
    store_host         every URL names the store by this host instead of
                       127.0.0.1 (the test CA's certificate has localhost).
    proxy              put a ProxyServer in front of everything; proxy_env: the
                       variables naming it (default PROXY_VARIABLES);
                       proxy_credentials: it demands canary credentials (they
                       join the secrets); proxy_hosts: the ProxyServer's hosts;
                       proxy_form: how the variables write its URL, one of
                       PROXY_FORMS ("url" http://[user:pw@]127.0.0.1:PORT,
                       "schemeless" without http://, "path" with a trailing /:
                       urllib read all three); proxy_reply: the head that opens
                       a tunnel (ProxyServer's tunnel_reply).
    no_proxy           NO_PROXY and no_proxy (also as an attribute before the run).
    in_memory          local inputs, TMPDIR and local staging in /dev/shm (when
                       writable), for a check that moves thousands of tiny objects.
    extra_env          variables added to env(), last.

    Faults go to a server: ``plane.store.add_fault(fault, match)``,
    ``plane.proxy.add_fault(fault, match)``.
    """

    _count = 0

    def __init__(self, ctx, inputs=(), tls=False, store_host=None, proxy=False, proxy_credentials=False,
                 proxy_env=PROXY_VARIABLES, no_proxy=None, proxy_hosts=None, in_memory=False, extra_env=None,
                 proxy_form="url", proxy_reply=None, **options):
        job_options = dict(take(options, Job.OPTIONS), inputs=inputs)
        agent_options, collector_options = take(options, CredentialsAgent.OPTIONS), take(options, Collector.OPTIONS)
        if options:
            raise TypeError("StepPlane: unknown option(s) %s" % ", ".join(sorted(options)))
        self.ctx = ctx
        self.extra_env = dict(extra_env or {})
        self.extra_secrets = []      # values a check planted that must never appear (a URL's password, say)
        self.proc = None
        self.result = None

        # A check may use several planes: each gets its own directories.
        StepPlane._count += 1
        home = "plane-%d" % StepPlane._count
        self.store = ObjectStore(ctx.tmpdir(home + "/store"), tls=tls, seed=ctx.seed)
        if store_host is not None:  # URLs name the store by this name (the test CA's certificate has localhost)
            self.store.origin = self.store.origin.replace("127.0.0.1", store_host, 1)
        self.proxy = None
        self.proxy_env = tuple(proxy_env)
        if proxy_form not in PROXY_FORMS:
            raise ValueError("proxy_form is one of %s, not %r" % (", ".join(PROXY_FORMS), proxy_form))
        self.proxy_form = proxy_form
        self.no_proxy = no_proxy
        self.shm_dir = None
        try:
            if proxy:
                credentials = None
                if proxy_credentials:  # canaries; the password needs percent-encoding in the URL
                    credentials = ("CANARYproxyuser" + _secrets.token_hex(4),
                                   "CANARYproxy/pw%" + _secrets.token_hex(8))
                self.proxy = ProxyServer("proxy", credentials=credentials, hosts=proxy_hosts, seed=ctx.seed,
                                         tunnel_reply=proxy_reply)
            creds_dir = ctx.tmpdir(home + "/creds")
            # in_memory: on a disk each tiny object costs the node an fsync, and the run minutes.
            if in_memory and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
                self.shm_dir = tempfile.mkdtemp(prefix="conformance-%s-" % home, dir="/dev/shm")
            place = ctx.tmpdir if self.shm_dir is None else self._shm_subdir
            self.scratch = place(home + "/scratch")
            local_dir, staging_dir = place(home + "/local"), place(home + "/staging")
            self.job = Job(self.store, local_dir, **job_options)
            self.collector = Collector(self.store, staging_dir, self.job, self.env, **collector_options)
            self.agent = CredentialsAgent(self.store, creds_dir, self.job, self.collector, note=ctx.note,
                                          **agent_options)
            self.job.seed()
            self.agent.write()
        except BaseException:
            self.close()
            raise

    def _shm_subdir(self, name):
        path = os.path.join(self.shm_dir, name)
        os.makedirs(path, exist_ok=True)
        return path

    # ---------------------------------------------------------------- the node's environment
    def env(self):
        """The node's whole environment (nothing is inherited)."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
               "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": self.scratch, "SSL_CERT_FILE": CA_FILE}
        env.update(self.agent.env())
        env.update(self.job.env())
        if self.proxy is not None:
            url = self.proxy.url()
            if self.proxy_form == "schemeless":
                url = url[len("http://"):]
            elif self.proxy_form == "path":
                url += "/"
            env.update((name, url) for name in self.proxy_env)
        if self.no_proxy is not None:
            env.update(NO_PROXY=self.no_proxy, no_proxy=self.no_proxy)
        env.update(self.extra_env)
        return env

    # ---------------------------------------------------------------- act
    def start(self, pid1=True, memory_limit_bytes=None, args=()):
        self.proc = self.ctx.start_node(self.env(), args=args, pid1=pid1, memory_limit_bytes=memory_limit_bytes)
        return self.proc

    def wait(self, proc=None, timeout=NODE_RUN_TIMEOUT_S):
        """Wait for the node's exit, then collect (collector.collect())."""
        proc = proc or self.proc
        self.result = proc.wait(timeout)
        self.ctx.note("node: %s" % self.result.describe())
        self.collector.collect()
        return self.result

    def run(self, timeout=NODE_RUN_TIMEOUT_S, **start):
        """start() then wait(): for checks that only arrange faults beforehand."""
        self.start(**start)
        return self.wait(timeout=timeout)

    def wait_event(self, predicate, timeout):
        """The first store event satisfying predicate, or None after timeout
        seconds or as soon as the node has exited without one."""
        deadline = Deadline(timeout)
        while True:
            found = self.store.wait_for(predicate, min(EXIT_POLL_S, deadline.left()))
            if found or deadline.over():
                return found
            if self.proc is not None and not self.proc.running():
                return self.store.wait_for(predicate, 0)

    def skip_unless_own_uploads(self):
        """SKIP the check when the run ended well without publishing any object
        of its own: a step whose work writes nothing (one that only claims
        facts, say) offers no upload for the check to act on, and that is no
        fault of the node's."""
        if self.result is not None and self.result.exit_code == 0 and not self.collector.data_posts():
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
            if self.proc.running():
                node_hung()
            self.ctx.fail(expected="the node to reach %s" % what,
                          actual="it did not within %.0f s (%s)" % (timeout, self.describe_exchanges()),
                          diagnosis="the run never reached the phase this check stops it in")
        time.sleep(settle_s)
        self.proc.signal(signum)
        self.ctx.note("plane: sent signal %d at %s" % (signum, what))
        return time.monotonic()

    # ---------------------------------------------------------------- observe
    # What the collector collected, here too: every reader of a run wants these.
    marker = property(lambda self: self.collector.marker, doc="The collected marker (a dict), or None.")
    marker_raw = property(lambda self: self.collector.marker_raw, doc="The marker's bytes, or None.")
    report = property(lambda self: self.collector.report, doc="The collected result.json (parsed), or None.")
    report_raw = property(lambda self: self.collector.report_raw, doc="result.json's bytes, or None.")

    def exchanges(self, method=None, key=None, key_suffix=None):
        """The store's exchanges with this method, key, key suffix (all by default)."""
        return exchanges(self.store, method, key, key_suffix)

    def describe_exchanges(self, limit=12):
        """The store's last requests, on one line."""
        parts = []
        for ex in self.store.transcript[-limit:]:
            parts.append("%s %s -> %s%s" % (ex.method, ex.key or ex.path, ex.status or "-",
                                           " (%s)" % ex.outcome if ex.outcome not in (None, "ok") else ""))
        return "; ".join(parts) or "no requests"

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
        """Every value whose appearance outside the process is a leak: what the
        store issued (tokens, signatures, policies), the proxy's credentials,
        and what the check planted (extra_secrets)."""
        values = list(self.store.secrets()) + list(self.extra_secrets)
        if self.proxy is not None:
            values += self.proxy.secrets()
        return [v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_CHARS]

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
        """What must hold after any run of the node, whatever the check was about.

        A server that broke raises HarnessError (ERROR, never the node's FAIL).
        Then: no secret in stdout, stderr, argv, the marker or result.json
        (STEP-REDACT-1); no traceback (STEP-REDACT-2); an exit status the
        contract knows (STEP-EXIT-1); the collector's (collector.invariants);
        TMPDIR empty (STEP-STREAM-3). Nothing before a run.
        """
        if self.result is None:
            return []
        for name, server in (("store", self.store), ("proxy", self.proxy)):
            if server is not None and server.errors:
                raise HarnessError("the fake %s failed while serving the node:\n%s" % (name, server.errors[0]))
        found = []
        found += self._secret_invariants()
        found += self._traceback_invariant()
        found += self._exit_invariants()
        found += self.collector.invariants(self.result)
        found += self._scratch_invariant()
        return found

    def _secret_invariants(self):
        secrets = self.secrets()
        places = {"stdout": self.result.stdout, "stderr": self.result.stderr,
                  "argv": " ".join(self.result.cmdline_snapshot or []),
                  "marker": (self.collector.marker_raw or b"").decode("utf-8", "replace"),
                  "result.json": (self.collector.report_raw or b"").decode("utf-8", "replace")}
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

    def _scratch_invariant(self):
        """STEP-STREAM-3: nothing the node made under TMPDIR outlives it."""
        for top, _dirs, files in os.walk(self.scratch):
            for name in files:
                return [Violation("STEP-STREAM-3: scratch left empty", "TMPDIR empty after exit",
                                  "left: %s" % os.path.relpath(os.path.join(top, name), self.scratch))]
        return []

    def close(self):
        """Close the servers (the store even if the proxy fails) and drop /dev/shm."""
        try:
            if self.proxy is not None:
                self.proxy.close()
        finally:
            self.store.close()
            if self.shm_dir is not None:
                shutil.rmtree(self.shm_dir, ignore_errors=True)
