"""The session plane: the fakes of one session run composed, the node's environment, the run.

The plane makes the metadata server (identity tokens), the control plane (its token_check asks
the metadata server whether it minted a token for that audience), the object store (the bundles
acquisitions name) and a tripwire (every proxy variable names it), points the node at them
through its environment, runs it in Job or Service mode, waits on what the fakes see, and states
the invariants no single fake can: secrets across every output, process and scratch file, TMPDIR
left as it was, no process left in any session, the summary line and the exit status.
"""

import json
import os
import signal as _signal
import time

from conformance.invariants import Violation, dir_empty, scan_for_secrets
from conformance.planes.metadata import MetadataServer
from conformance.planes.session import verdict
from conformance.planes.session.control import ControlPlane
from conformance.planes.session.sources import BUCKET, SourceBook
from conformance.planes.session.service import ServiceAnswer, ServiceMode, free_port
from conformance.planes.session.watch import Watch
from conformance.runner import HarnessError
from conformance.servers import (CA_FILE, MISNAMED_CERT_CHAIN, OTHER_CA_FILE, UNTRUSTED_CERT_CHAIN, LoopbackServer,
                                 Reply)
from conformance.store import ObjectStore
from conformance.timeouts import SHORT_TIMEOUT_S, Deadline, node_hung

__all__ = ["SessionPlane", "ServiceAnswer", "SESSION_RUN_TIMEOUT_S", "PHASE_TIMEOUT_S"]

# How long one session run may take before the harness kills it. The longest run a check
# expects is about 15 s (a stop drained through STOP_GRACE_S = 5 s, an acquisition ceiling or a
# capability expiry scheduled a few seconds out); the default capability lasts 60 s, so a node
# that ignores a closed session, its deadline and every stop is killed here, and fails.
SESSION_RUN_TIMEOUT_S = 30.0
# How long a wait for one phase of a running session may take (the exchange, the start, a claim,
# a probe's report): an interpreter start, the warm pool (WARM_POOL_START_S = 2 s), an acquisition
# answered at once and a probe child, on a loaded machine. A heartbeat wait adds its intervals.
PHASE_TIMEOUT_S = SHORT_TIMEOUT_S
# The node's own ceilings, lowered (SESSION-CONFIG-2) so that a hung probe child or a stuck
# acquisition ends within a check; a probe of a small source takes well under a second, and an
# acquisition the fake answers ready at once takes one round trip. A check about either
# ceiling sets its own value with env={...}.
PROBE_TIMEOUT_S = 10
ACQUISITION_TIMEOUT_S = 10
# One warm probe child (the contract's default is 2): the first probe is served warm, and each
# run starts one interpreter less (about 0.15 CPU-s).
WARM_POOL_SIZE = 1
# Service mode: long enough for a check to post its start once the listener is up on a loaded
# machine, short enough that a Service whose session ended exits within a few seconds.
SHUTDOWN_GRACE_S = 3
# The e-mail of the identity tokens the metadata server mints for this workload.
SERVICE_ACCOUNT = "session-worker@conformance.iam.gserviceaccount.com"
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
MODES = ("job", "service")
# A secret shorter than this is not scanned for (it would match by accident).
MIN_SECRET_CHARS = 12


class Run(object):
    """One start of the node: its process, mode, TMPDIR, Watch, whether the plane built argv, port."""

    def __init__(self, proc, mode, scratch, watch, plane_argv, port):
        self.proc, self.mode, self.scratch, self.watch = proc, mode, scratch, watch
        self.plane_argv, self.port = plane_argv, port


def _take(options, names):
    return dict((name, options.pop(name)) for name in names if name in options)


def _number(value):
    """A number as the node reads it (SESSION-CONFIG-2: [0-9]+(.[0-9]+)?); text passes as given."""
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int) else (("%.6f" % value).rstrip("0").rstrip(".") or "0")


class SessionPlane(ServiceMode):
    """The fakes of one session: ``metadata`` (MetadataServer), ``control`` (ControlPlane),
    ``store`` (ObjectStore: the bundles), ``tripwire`` (a LoopbackServer every proxy variable
    names), ``sources`` (SourceBook). A fake's options (its OPTIONS) are the plane's keywords
    too; the plane's own: results_bucket (None: MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET unset),
    extra_env and drop_env (every run's environment), proxies (False: no proxy variable),
    store_plain_http (the store speaks plain HTTP, as a stock emulator), untrusted and misnamed
    (names among "control", "store": those serve a certificate nobody trusts, or one whose chain
    the node trusts but which names another host)."""

    _count = 0

    def __init__(self, ctx, results_bucket=BUCKET, extra_env=None, drop_env=(), proxies=True, store_plain_http=False,
                 untrusted=(), misnamed=(), **options):
        metadata_options, control_options = _take(options, MetadataServer.OPTIONS), _take(options, ControlPlane.OPTIONS)
        unknown = sorted(options) + sorted((set(untrusted) | set(misnamed)) - {"control", "store"})
        if unknown:
            raise TypeError("SessionPlane: unknown option(s) or server name(s): %s" % ", ".join(unknown))
        self.ctx, self.results_bucket, self.proxies = ctx, results_bucket, proxies
        self.extra_env, self.drop_env = dict(extra_env or {}), list(drop_env)
        SessionPlane._count += 1
        self.home = "session-plane-%d" % SessionPlane._count
        self.runs, self.proc, self.result, self._fakes = [], None, None, []
        seed = getattr(ctx, "seed", 0)
        self.ca_file = CA_FILE if not misnamed else _trust_both(ctx.tmpdir(self.home + "/trust"))

        def chain(name):  # the certificate the server named `name` serves
            return UNTRUSTED_CERT_CHAIN if name in untrusted else MISNAMED_CERT_CHAIN if name in misnamed else None
        try:
            self.store = self._add("store", ObjectStore(ctx.tmpdir(self.home + "/store"), tls=not store_plain_http,
                                                        seed=seed, name="session-store", cert_chain=chain("store")))
            self.metadata = self._add("metadata", MetadataServer(seed, None, service_account=SERVICE_ACCOUNT,
                                                                 **metadata_options))
            self.control = self._add("control", ControlPlane(self._token_check, seed=seed, secret_values=self._secrets,
                                                             cert_chain=chain("control"), **control_options))
            self.tripwire = self._add("tripwire", LoopbackServer("tripwire", tls=True, seed=seed,
                                                                 secret_values=self.secrets))
            self.tripwire.route("*", "/*", lambda req: Reply(418, b"tripwire\n", content_type="text/plain"))
        except BaseException:
            self.close()
            raise
        self.sources = SourceBook(self.control, self.store, results_bucket or BUCKET)

    def _add(self, label, fake):
        self._fakes.append((label, fake))
        return fake

    def _token_check(self, token, audience):
        """The control plane's question: did the metadata server mint token for audience?"""
        return self.metadata.minted_for(token, audience, "session")

    # ---------------------------------------------------------------- arranging
    def add_source(self, **options):
        """A source whose acquisitions deliver a bundle of these rows: see sources.SourceBook.add."""
        return self.sources.add(**options)

    def probe(self, kind, source=None, probe_id=None, ordinal=None, **request):
        """Queue a probe of kind on source (a Source or an id; default the first added) with the
        request's other keys; returns its probe id. request=... gives the whole request instead."""
        body = request.pop("request", None)
        if body is None:
            if source is None:
                source = self.sources.sources[0] if self.sources.sources else self.control.source_ids[0]
            body = dict(request, source_id=getattr(source, "source_id", source))
        return self.control.enqueue_probe(kind, body, probe_id=probe_id, ordinal=ordinal)

    def close_session(self, state="closed"):
        """Every later claim answer says the session is state (SESSION-CLAIM-4)."""
        self.control.close_session(state)

    # ---------------------------------------------------------------- the node's environment
    def env(self, mode="job", port=None, scratch=None):
        """The node's whole environment for mode (nothing is inherited)."""
        if mode not in MODES:
            raise ValueError("mode must be one of %s" % ", ".join(MODES))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
               "TMPDIR": scratch or self.ctx.tmpdir(self.home + "/tmp"), "SSL_CERT_FILE": self.ca_file,
               "STUDIO_API_ORIGIN": self.control.origin, "GCE_METADATA_HOST": self.metadata.host,
               "STORAGE_EMULATOR_HOST": self.store.origin,
               "MR_SESSION_WORKER_WARM_POOL_SIZE": _number(WARM_POOL_SIZE),
               "MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS": _number(PROBE_TIMEOUT_S),
               "MR_SESSION_WORKER_ACQUISITION_TIMEOUT_SECONDS": _number(ACQUISITION_TIMEOUT_S),
               "MR_SESSION_WORKER_SHUTDOWN_GRACE_SECONDS": _number(SHUTDOWN_GRACE_S)}
        if self.results_bucket:
            env["MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET"] = self.results_bucket
        if self.proxies:  # SESSION-CONFIG-5: a node that honours them meets the tripwire
            env.update((name, "http://127.0.0.1:%d" % self.tripwire.port) for name in PROXY_VARIABLES)
        if mode == "service":
            env["PORT"] = str(port or 8080)
            if self.control.lease_audience != self.control.origin:
                env["MR_SESSION_WORKER_LEASE_AUDIENCE"] = self.control.lease_audience
        env.update(self.extra_env)
        for name in self.drop_env:
            env.pop(name, None)
        return env

    def argv(self, mode="job"):
        """Job mode's six cells (SESSION-ARGV-2) naming this control plane; Service mode's none."""
        if mode == "service":
            return []
        return ["--session-dispatch-id", self.control.dispatch_id, "--session-dispatch-exchange-url",
                self.control.exchange_url, "--session-dispatch-audience", self.control.exchange_audience]

    # ---------------------------------------------------------------- acting
    def start(self, mode="job", env=None, drop_env=(), argv=None, pid1=True, memory_limit_bytes=None):
        """Start the node in mode with env() updated by env and without drop_env, argv() unless
        argv is given, and a fresh TMPDIR; returns the runner's NodeProcess."""
        port = free_port() if mode == "service" else None
        scratch = self.ctx.tmpdir("%s/tmp-%d" % (self.home, len(self.runs) + 1))
        full = self.env(mode, port, scratch)
        full.update(env or {})
        for name in drop_env:
            full.pop(name, None)
        proc = self.ctx.start_node(full, args=self.argv(mode) if argv is None else list(argv), pid1=pid1,
                                   memory_limit_bytes=memory_limit_bytes)
        watch = Watch(proc, full.get("TMPDIR", scratch), self._secrets)
        self.runs.append(Run(proc, mode, full.get("TMPDIR", scratch), watch, argv is None, port))
        self.proc, self.result = proc, None
        return proc

    def wait(self, timeout=SESSION_RUN_TIMEOUT_S):
        """Wait for the current run's exit (SIGKILL after timeout); its RunResult."""
        self.result = self.proc.wait(timeout)
        self.ctx.note("node: %s" % self.result.describe())
        return self.result

    wait_exit = wait

    def run(self, timeout=SESSION_RUN_TIMEOUT_S, **start):
        """start() then wait(): for checks that only arrange things beforehand."""
        self.start(**start)
        return self.wait(timeout)

    def signal(self, signum=_signal.SIGTERM):
        """Send signum to the node (the monitor) now; returns its monotonic time."""
        sent = time.monotonic()
        self.proc.signal(signum)
        self.ctx.note("plane: sent signal %d" % signum)
        return sent

    def stop_when(self, condition, signum=_signal.SIGTERM, what="the trigger", timeout=PHASE_TIMEOUT_S,
                  diagnosis=None):
        """Send signum once condition() holds (a wait_for); returns the signal's monotonic time."""
        self.wait_for(condition, what, timeout, diagnosis=diagnosis)
        self.ctx.note("plane: %s reached" % what)
        return self.signal(signum)

    # ---------------------------------------------------------------- waits (each a Deadline)
    def wait_for(self, condition, what, timeout=PHASE_TIMEOUT_S, diagnosis=None):
        """Return once condition() holds, re-checked after every control-plane event and at least
        every Deadline.SLICE_S (never under a fake's lock: a condition may block); fail the check
        when the node exits first or timeout passes. `diagnosis` (a text, or a callable read at the
        failure that may return None) is what a check knows of a node that never gets there."""
        def diagnose():
            given = diagnosis() if callable(diagnosis) else diagnosis
            return given or "the run never reached the phase this check needs"
        deadline = Deadline(timeout)
        while True:
            seen = len(self.control.events)
            if condition():
                return
            if self.proc is None or not self.proc.running():
                if condition():
                    return
                self.ctx.fail(expected="the node to reach %s" % what,
                              actual="it %s first (%s)" % ("exited" if self.proc else "was never started",
                                                         self.describe_exchanges()),
                              diagnosis=diagnose)
            if deadline.over():
                node_hung()
                self.ctx.fail(expected="the node to reach %s" % what,
                              actual="it did not within %.1f s (%s)" % (timeout, self.describe_exchanges()),
                              diagnosis=diagnose)
            self.control.server.wait_for(lambda event: True, deadline.slice(), since=seen)

    def wait_heartbeats(self, n, timeout=None):
        """The heartbeats once n have arrived (timeout: PHASE_TIMEOUT_S plus n intervals)."""
        timeout = PHASE_TIMEOUT_S + n * self.control.heartbeat_s if timeout is None else timeout
        self.wait_for(self.control.started("heartbeat", n), "%d heartbeat(s)" % n, timeout)
        return self.control.heartbeats()

    def wait_claims(self, n=1, timeout=PHASE_TIMEOUT_S):
        """The claims once n have arrived."""
        self.wait_for(self.control.started("claim", n), "%d claim(s)" % n, timeout)
        return self.control.claims()

    def wait_report(self, probe_id, timeout=PHASE_TIMEOUT_S):
        """The first report of probe_id once it has been answered (or a fault took it)."""
        def answered():
            return [c for c in self.control.reports(probe_id) if c.status is not None]
        self.wait_for(lambda: bool(answered()), "the report of probe %s" % probe_id, timeout)
        return answered()[0]

    # ---------------------------------------------------------------- the node's output
    def summaries(self, result=None):
        """Every summary on the run's stdout (SESSION-EXIT-1), in order."""
        result = result or self.result
        return verdict.parse_summaries(result.stdout if result is not None else self.proc.stdout_text())[0]

    def summary(self, result=None):
        """The run's one summary (the last, in Service mode), or None."""
        found = self.summaries(result)
        return found[-1] if found else None

    def summary_problem(self, result=None):
        """Why stdout is not summary lines (None when it is)."""
        result = result or self.result
        problems = verdict.parse_summaries(result.stdout if result is not None else self.proc.stdout_text())[1]
        return "; ".join(problems) or None

    def describe_exchanges(self, limit=12):
        """The last requests every fake saw, in time order, on one line."""
        events = []
        for name, fake in self._fakes:
            for ex in fake.transcript:
                verb = getattr(ex, "notes", {}).get("verb") if name == "control" else None
                events.append((ex.t_start, "%s %s %s -> %s" % (name, verb or ex.method, ex.path.split("?")[0],
                                                                ex.status or "-")))
        events.sort(key=lambda item: item[0])
        return "; ".join(text for _t, text in events[-limit:]) or "no requests"

    # ---------------------------------------------------------------- secrets
    def _secrets(self):
        """The three secrets (SESSION-SECRET-*): identity tokens (with their segments and markers),
        the capability, the lease nonce."""
        values = list(self.metadata.secrets()) if getattr(self, "metadata", None) else []
        values += self.control.secrets() if getattr(self, "control", None) else []
        return [v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_CHARS]

    def canaries(self):
        """Text of bodies the node receives that it must never repeat (SESSION-SECRET-3): each
        refusal's detail canary, each bundle's, and the store's tokens and signatures (in the
        descriptor URLs)."""
        values = list(self.control.canaries()) + self.sources.canaries()
        values += [v for v in self.store.secrets() if isinstance(v, str)]
        return [v for v in values if len(v) >= MIN_SECRET_CHARS]

    def secrets(self):
        """Every value a report masks: the secrets and the canaries."""
        return self._secrets() + (self.canaries() if getattr(self, "sources", None) else [])

    def describe_secret(self, secret):
        """Name a value without repeating it."""
        for fake in (self.metadata, self.control):
            name = fake.describe_secret(secret)
            if name is not None:
                return name
        return "a canary (%d characters)" % len(secret)

    # ---------------------------------------------------------------- invariants
    def invariants(self):
        """What must hold after any run: each fake's own (the control plane's); no proxy or
        other host reached (SESSION-CONFIG-5); nothing of a credential at the store or the
        metadata server (SESSION-SECRET-1); no secret in any argv, environment or scratch file
        of any process sampled, nor on stdout or stderr, and no canary there or in an event
        (SESSION-SECRET-2, -3); TMPDIR as it was unless the harness killed the monitor
        (SESSION-ISOLATION-9); no process left in any session (SESSION-ISOLATION-3, -4); the
        output rules (SESSION-EXIT-2, -3, -4). A fake that broke raises HarnessError."""
        for name, fake in self._fakes:
            if fake.errors:
                raise HarnessError("the fake %s failed while serving the node:\n%s" % (name, fake.errors[0]))
        found = list(self.control.invariants())
        if self.tripwire.connections:
            found.append(Violation("SESSION-CONFIG-5: no proxy, no other host",
                                   "no connection to the tripwire (every proxy variable names it)",
                                   "%d connection(s) to it" % len(self.tripwire.connections),
                                   "connect directly, and only to the hosts the contract names"))
        secrets = self._secrets()
        found += verdict.transcript_leaks("object store", self.store, secrets, self.describe_secret)
        found += verdict.transcript_leaks("metadata server", self.metadata, secrets, self.describe_secret)
        queries = dict(("the query of metadata request #%d" % n, r.raw_query or "")
                       for n, r in enumerate(self.metadata.requests(), 1))   # the transcript masks queries
        found += scan_for_secrets(secrets, queries, name="SESSION-SECRET-1: nothing of a credential reaches the "
                                                         "metadata server")
        canaries = self.canaries()
        events = dict(("event #%d (%s)" % (number, item.event_type), json.dumps(item.doc))
                      for number, item in enumerate(self.control.progress_events(), 1))
        found += scan_for_secrets(canaries, events, name="SESSION-SECRET-3: what the node receives is not repeated")
        for index, run in enumerate(self.runs, 1):
            found += self._run_invariants(index, run, secrets, canaries)
        return found

    def _run_invariants(self, index, run, secrets, canaries):
        run.watch.stop()
        result = run.proc.result
        if result is None:  # still running: the framework kills it before invariants
            return []
        label, found = "run %d " % index if len(self.runs) > 1 else "", []
        texts = {}
        for seen in run.watch.processes():
            for number, argv in enumerate(seen.argvs):
                what = "pid %d%s" % (seen.pid, " (its argv #%d)" % (number + 1) if number else "")
                texts["%sargv of %s" % (label, what)] = "\0".join(argv)
                environ = seen.environs[number] if number < len(seen.environs) else None
                if environ:
                    texts["%senvironment of %s" % (label, what)] = "\0".join(
                        "%s=%s" % item for item in sorted(environ.items()))
        for pid, argv in (result.seen_cmdlines or {}).items():  # what the runner saw too
            texts.setdefault("%sargv of pid %s" % (label, pid), "\0".join(argv or []))
        found += scan_for_secrets(secrets, texts, name="SESSION-SECRET-2: never at rest, never in sight")
        found += scan_for_secrets(secrets + canaries, {label + "stdout": result.stdout,
                                                             label + "stderr": result.stderr},
                                  name="SESSION-SECRET-2, -3: nothing secret or received on stdout or stderr")
        found += [Violation("SESSION-SECRET-2: never at rest", "no secret in any file under TMPDIR",
                            "%s in %s (under TMPDIR)" % (self.describe_secret(secret), path))
                  for path, secret in sorted(set(run.watch.file_hits))]
        killed = verdict.harness_killed(result)
        if not killed:
            found += dir_empty(run.scratch, name="SESSION-ISOLATION-9: TMPDIR as it was after the run")
        left = run.watch.leftovers() if not killed else []
        run.watch.kill_leftovers()
        found += [Violation("SESSION-ISOLATION-3, -4: nothing outlives the node", "no process of the node "
                            "alive after it exited", "pid %d (%s) was still running; killed" % (
                                seen.pid, " ".join(seen.argvs[-1][:4]) if seen.argvs else "?"))
                  for seen in left]
        summaries, problems = verdict.parse_summaries(result.stdout)
        found += verdict.output_violations(result, run.mode, summaries, problems, run.plane_argv)
        return found

    def close(self):
        """Close every fake (each closes even if another fails)."""
        errors = []
        for run in self.runs:
            run.watch.stop()
        for _name, fake in reversed(self._fakes):
            try:
                fake.close()
            except Exception as exc:  # keep closing the others
                errors.append("%s: %s" % (type(exc).__name__, exc))
        if errors:
            raise HarnessError("closing the session plane: " + "; ".join(errors))


def _trust_both(directory):
    """A CA bundle of the CA behind the misnamed certificate and the harness CA, so that only the
    name, never the chain, can be the reason a node refuses that certificate."""
    path = os.path.join(directory, "ca-bundle.pem")
    with open(path, "wb") as out:
        for source in (OTHER_CA_FILE, CA_FILE):
            with open(source, "rb") as handle:
                out.write(handle.read())
    return path
