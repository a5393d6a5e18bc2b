"""The scan plane: the scan server, the target store and a tripwire composed with the worker's
token file, trees, targets and lives; its environment and argv, the waits and crash points, and
the invariants.

The plane makes the scan server (server.py), an object store holding the targets behind
pre-signed GETs (targets.py), and a tripwire every proxy variable names; it writes the token file
(tokens.py), builds the worker's environment (private XDG trees, read and planted through
trees.py, HOME, TMPDIR, SSL_CERT_FILE) and argv, starts the worker through a Lifecycle
(worker.py, conformance/lifecycle.py: crash points, restarts against the same state) with a
Watch on every life, and states after each check what no single fake can (verdict.py's
PlaneVerdict): the token nowhere but in Authorization, target URLs in no output and no body,
every slot file each life left behind whole, only safe lines printed, no process left.
"""

import os
import signal as _signal

from conformance import lifecycle as _lifecycle
from conformance.planes.scan import bundles as _bundles
from conformance.planes.scan import verdict
from conformance.planes.scan.protocol import DELETE, KEEP, error_answer, token_pieces
from conformance.planes.scan.server import ScanServer
from conformance.planes.scan.targets import Targets
from conformance.planes.scan.tokens import TokenFile, new_token
from conformance.planes.scan.trees import Trees
from conformance.planes.scan.worker import Worker
from conformance.runner import HarnessError
from conformance.servers import CA_FILE, UNTRUSTED_CERT_CHAIN, LoopbackServer, Reply
from conformance.store import ObjectStore
from conformance.timeline import Timeline
from conformance.timeouts import SHORT_TIMEOUT_S, Deadline, node_hung

__all__ = ["ScanPlane", "PHASE_TIMEOUT_S", "RUN_TIMEOUT_S", "READY_PREFIX", "PROXY_VARIABLES", "DELETE", "KEEP",
           "error_answer"]

# How long a wait for one step of a running worker may take (the ready line, a claim, a
# runner's scan of a small target, an upload): an interpreter start or two on a loaded machine.
PHASE_TIMEOUT_S = SHORT_TIMEOUT_S
# How long one life may run before the harness kills it, for a check that waits for an exit.
RUN_TIMEOUT_S = 30.0
# SCAN-SLOT-3: the ready line starts with this.
READY_PREFIX = "worker: started with "
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
# NO_PROXY names a host that is none of the plane's, so a worker that honours it still meets the tripwire.
NO_PROXY_VALUE = "conformance.invalid"
# The worker's own waits, lowered so a check runs in seconds (the contract's floors allow them:
# section *Time in checks*). A check about one of them passes its own value.
POLL_S = 0.2
ERROR_DELAY_S = 0.5
HTTP_TIMEOUT_S = 5
DRAIN_S = 5
# A wait re-checks its condition at least this often (a file on disk wakes nobody).
WAIT_SLICE_S = 0.02
# Bytes of the default target: a few short lines.
DEFAULT_TARGET = b"alpha = 1\nbeta = two\n# a comment\ngamma = [3, 4]\n"


def _number(value):
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int) else (("%.6f" % value).rstrip("0").rstrip(".") or "0")


class ScanPlane(object):
    """The fakes of one scan run and the worker's environment.

    The fakes: ``server`` (ScanServer), ``store`` (ObjectStore: the targets), ``tripwire`` (a
    LoopbackServer every proxy variable names); ``timeline`` (both fakes' requests, and every
    life's marks). The worker's side: ``tokens`` (TokenFile), ``trees`` (Trees), ``targets``
    (Targets), ``worker`` (Worker: the lives and their watches). What the checks call of those is
    the plane's too (token, rotate_token, add_target, slot_state, write_slot, start, life, ...).

    Options: ScanServer.OPTIONS (retry_after, no_work_reason, progress_stale_when_resolved,
    first_reservation_id, dialect, upload_status); proxies (True: every proxy variable names the
    tripwire), token (the first token; default 48 fresh characters), token_grace_s (how long a
    rotated-out token is still accepted; 0: not at all), extra_env and drop_env (every life's
    environment), untrusted (the scan server serves a certificate nobody trusts).
    """

    _count = 0

    def __init__(self, ctx, proxies=True, token=None, token_grace_s=0.0, extra_env=None, drop_env=(),
                 untrusted=False, **options):
        server_options = dict((k, options.pop(k)) for k in ScanServer.OPTIONS if k in options)
        if options:
            raise TypeError("ScanPlane: unknown option(s): %s" % ", ".join(sorted(options)))
        ScanPlane._count += 1
        self.ctx, self.proxies = ctx, proxies
        self.extra_env, self.drop_env = dict(extra_env or {}), list(drop_env)
        self.home = ctx.tmpdir("scan-plane-%d" % ScanPlane._count)
        self.state_home, self.data_home = ctx.tmpdir(self.home_name("state")), ctx.tmpdir(self.home_name("data"))
        self.home_dir, self.tmp = ctx.tmpdir(self.home_name("home")), ctx.tmpdir(self.home_name("tmp"))
        self.trees = trees = Trees(self.state_home, self.data_home)   # the slot files, the journal, the listings
        self.state_dir, self.bundle_dir, self.work_dir = trees.state_dir, trees.bundle_dir, trees.work_dir
        self.tokens = TokenFile(os.path.join(self.home, "secret", "token"), token_grace_s)
        self.token_file = self.tokens.path
        self._fakes = []
        self.worker = None         # the lives (worker.py), once the fakes are up
        seed = getattr(ctx, "seed", 0)
        try:
            self.store = self._add("store", ObjectStore(ctx.tmpdir(self.home_name("store")), tls=True, seed=seed,
                                                        name="store"))
            self.server = self._add("scan", ScanServer(self.tokens.accepted, ctx.tmpdir(self.home_name("received")),
                                                       seed=seed, secret_values=self.tokens.secrets,
                                                       cert_chain=UNTRUSTED_CERT_CHAIN if untrusted else None,
                                                       **server_options))
            self.tripwire = self._add("tripwire", LoopbackServer("tripwire", seed=seed,
                                                                 secret_values=self.tokens.secrets))
            self.tripwire.route("*", "/*", lambda req: Reply(418, b"tripwire\n", content_type="text/plain"))
        except BaseException:
            self.close()
            raise
        self.targets = Targets(self.store, os.path.join(self.home, "chunks"))
        self.timeline = Timeline({"scan": self.server.server, "store": self.store.server})
        self.worker = Worker(ctx, self.state_dir, self.timeline, self.tmp, self._watched_secrets)
        self.tokens.rotate(token)

    def home_name(self, part):
        return os.path.join(os.path.basename(self.home), part)

    def _add(self, label, fake):
        self._fakes.append((label, fake))
        return fake

    # ---------------------------------------------------------------- the token (tokens.py)
    @property
    def token(self):
        """The token the file holds now (the one the server accepts)."""
        return self.tokens.current

    new_token = staticmethod(new_token)

    def rotate_token(self, new=None, grace_s=None):
        """A new token file (TokenFile.rotate); grace_s: how long the previous token is still accepted."""
        return self.tokens.rotate(new, grace_s)

    def write_token_file(self, text, mode=0o600):
        """An invalid rotation (TokenFile.write): the server keeps accepting the current token."""
        self.tokens.write(text, mode)

    def _watched_secrets(self):
        pieces = []
        for token in self.tokens.secrets():
            pieces += token_pieces(token)
        return pieces + self.targets.url_secrets()

    # ---------------------------------------------------------------- targets and assignments
    def add_target(self, name, data=None, size=None, seed=None, chunks=None, expires_in_s=3600):
        """A target in the store behind a pre-signed GET (Targets.add); returns its pin {name, size,
        sha256, url}. data: its bytes; or size and seed: generated bytes; or chunks: an iterable."""
        return self.targets.add(name, data, size, seed, chunks, expires_in_s)

    def target_match(self, target, **options):
        """The Match of a target's GETs at the store (Match's keywords)."""
        return self.targets.match(target, **options)

    def add_assignment(self, targets=None, target_scan_timeout_s=30, assignment_deadline_in_s=120.0,
                       declared_bundle_bytes=1 << 20, patch=None, queued=True, **identity):
        """A reservation queued for the next new claim; returns the Reservation. targets: pins
        from add_target (default: one small target); assignment_deadline_in_s: from the grant
        (negative: already past); patch: a dict merged into the assignment (DELETE removes a
        member) or a callable(doc) -> doc, to break its shape; identity: source, platform,
        planning_kind, attempts."""
        if targets is None:
            targets = [self.add_target("notes.txt", DEFAULT_TARGET)]
        return self.server.add_reservation(targets, declared_bundle_bytes, target_scan_timeout_s,
                                           assignment_deadline_in_s, patch, queued, **identity)

    def grant(self, reservation, request_id=None):
        """(request id, assignment) of a reservation bound without a claim: for a planted state."""
        return self.server.grant(reservation, request_id)

    def resolve(self, reservation, resolution="expired", **fields):
        return self.server.resolve(reservation, resolution, **fields)

    def set_status(self, reservation, **changes):
        return self.server.set_status(reservation, **changes)

    def bundle_problems(self, reservation, slot_id=None, generation=None):
        """SCAN-BUNDLE-1..4 of the bundle the server accepted for reservation (else of the last
        whole upload with a good digest header); ["no bundle ..."] when there is none."""
        res = self.server.reservation(reservation)
        path = res.bundle_path or (list(res.bundle_files.values())[-1] if res.bundle_files else None)
        if path is None:
            return ["no bundle was uploaded whole for reservation %d" % res.reservation_id]
        return _bundles.bundle_problems(path, _bundles.expectation(res, slot_id, generation))

    # ---------------------------------------------------------------- the worker's environment
    def env(self, proxies=None):
        """The worker's whole environment (nothing is inherited)."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": self.home_dir,
               "XDG_STATE_HOME": self.state_home, "XDG_DATA_HOME": self.data_home, "TMPDIR": self.tmp,
               "SSL_CERT_FILE": CA_FILE}
        if self.proxies if proxies is None else proxies:  # SCAN-CONFIG-5: a worker that honours them meets it
            env.update((name, "http://127.0.0.1:%d" % self.tripwire.port) for name in PROXY_VARIABLES)
            env["NO_PROXY"] = env["no_proxy"] = NO_PROXY_VALUE
        env.update(self.extra_env)
        for name in self.drop_env:
            env.pop(name, None)
        return env

    def argv(self, parallelism=1, poll_s=POLL_S, error_delay_s=ERROR_DELAY_S, http_timeout_s=HTTP_TIMEOUT_S,
             drain_s=DRAIN_S, extra=(), server=None, token_file=None):
        """The worker's options (after the node's own argv); None leaves an option out."""
        args = ["--server", server or self.server.origin]
        pairs = (("--token-file", token_file or self.token_file), ("--parallelism", parallelism),
                 ("--poll-seconds", poll_s), ("--error-delay-seconds", error_delay_s),
                 ("--http-timeout", http_timeout_s), ("--drain-seconds", drain_s))
        for option, value in pairs:
            if value is not None:
                args += [option, _number(value)]
        return args + list(extra)

    # ---------------------------------------------------------------- lives (worker.py)
    def lifecycle(self, argv=None, env=None, pid1=True, **argv_options):
        """A Lifecycle of the worker on this plane's trees: argv() (or argv), env() updated by env."""
        args = self.argv(**argv_options) if argv is None else list(argv)
        full = self.env()
        full.update(env or {})
        return self.worker.lifecycle(args, full, pid1)

    def start(self, kill_at=None, **options):
        """The first life of a new Lifecycle (options as lifecycle()); returns the Life."""
        return self.lifecycle(**options).start(kill_at)

    def restart(self, kill_at=None, args=None, env_update=None, **argv_options):
        """The next life of the current Lifecycle (argv_options: a new argv(), e.g. parallelism=1)."""
        if argv_options:
            args = self.argv(**argv_options)
        return self.lives.restart(kill_at=kill_at, args=args, env_update=env_update)

    @property
    def lifecycles(self):
        """Every Lifecycle made, in order."""
        return self.worker.lifecycles

    @property
    def lives(self):
        """The current Lifecycle (the last made)."""
        return self.worker.current

    @property
    def life(self):
        """The current life, or None."""
        return self.worker.life

    def stop(self, signum=_signal.SIGTERM, timeout=RUN_TIMEOUT_S, life=None):
        """Signal the current life and wait for its exit; its RunResult."""
        return (life or self.life).stop(signum, timeout)

    # ---------------------------------------------------------------- waits (each a Deadline)
    def wait_for(self, condition, what, timeout=PHASE_TIMEOUT_S, life=None, running=True, diagnosis=None):
        """Return once condition() holds, re-checked at each server event and every WAIT_SLICE_S;
        fail the check when the life (default the current) ends first (running=False: a life is
        not needed) or timeout passes, with `diagnosis` when the check knows what a worker that
        never gets there most likely does wrong."""
        deadline = Deadline(timeout)
        life = life or self.life
        while True:
            seen = len(self.server.events)
            if condition():
                return
            if running and (life is None or not life.running()):
                if condition():
                    return
                self.ctx.fail(expected="the worker to reach %s" % what,
                              actual="it %s first (%s)" % ("exited" if life else "was never started",
                                                         self.describe()),
                              diagnosis=diagnosis or "the run never reached the moment this check needs")
            if deadline.over():
                node_hung()
                self.ctx.fail(expected="the worker to reach %s" % what,
                              actual="it did not within %.1f s (%s)" % (timeout, self.describe()),
                              diagnosis=diagnosis or "the run never reached the moment this check needs")
            self.server.server.wait_for(lambda event: True, min(deadline.slice(), WAIT_SLICE_S), since=seen)

    def wait_ready(self, life=None, timeout=PHASE_TIMEOUT_S):
        """The ready line (SCAN-SLOT-3) of a life (default the current); fails the check without it."""
        life = life or self.life
        if not life.proc.wait_for_line("stdout", lambda text: text.startswith(READY_PREFIX), timeout):
            node_hung()
            self.ctx.fail(expected="the ready line %r" % (READY_PREFIX + "<n> slots"),
                          actual="none within %.1f s (stdout: %r)" % (timeout, life.proc.stdout_text()[-200:]),
                          diagnosis="print the ready line once the lock is held and the trees exist")
        return life

    def wait_calls(self, verb, n=1, timeout=PHASE_TIMEOUT_S, reservation=None, since=None, answered=True):
        """The requests of verb (ScanCall) once n have arrived (answered: and the handler ran or a
        fault took them)."""
        def found():
            return [c for c in self.server.calls(verb, reservation, since) if c.status is not None or not answered]
        self.wait_for(lambda: len(found()) >= n, "%d %s request(s)" % (n, verb), timeout)
        return found()

    def wait_claims(self, n=1, timeout=PHASE_TIMEOUT_S, since=None):
        return self.wait_calls("claim", n, timeout, since=since)

    def wait_resolved(self, reservation, timeout=PHASE_TIMEOUT_S):
        """The Reservation once the server resolved it."""
        res = self.server.reservation(reservation)
        self.wait_for(lambda: res.resolution is not None, "the resolution of reservation %d" % res.reservation_id,
                      timeout)
        return res

    def wait_phase(self, slot, phase, timeout=PHASE_TIMEOUT_S, running=True):
        """The slot's state once its phase is phase (None: once the slot file is gone)."""
        self.wait_for(self.trees.phase_is(slot, phase), "slot %d in phase %s" % (slot, phase), timeout, running=running)
        return self.slot_state(slot)

    # ---------------------------------------------------------------- crash points (lifecycle triggers)
    def held(self, verb, nth=1, processed=False, reservation=None):
        """Kill when the nth request of verb is held unanswered (processed: the server acted on it)."""
        method, path = ScanServer.path_of(verb, reservation)
        return _lifecycle.held(self.server, method, path, nth, processed)

    def answered(self, verb, nth=1, reservation=None):
        """Kill just after the server sent the last byte of the nth answer of verb."""
        method, path = ScanServer.path_of(verb, reservation)
        return _lifecycle.answered(self.server, method, path, nth)

    def when_phase(self, slot, phase):
        """Kill when slot's state file shows phase (None: when it is gone)."""
        return _lifecycle.when(self.trees.phase_is(slot, phase), "slot %d is in phase %s" % (slot, phase))

    def when_calls(self, verb, n=1, reservation=None):
        """Kill once n requests of verb have arrived (the handler need not have run)."""
        return _lifecycle.when(lambda: len(self.server.calls(verb, reservation)) >= n,
                               "%d %s request(s) arrived" % (n, verb))

    # ---------------------------------------------------------------- the trees (trees.py: what each one reads)
    def slot_path(self, slot, stale=False):
        return self.trees.slot_path(slot, stale)

    def slot_raw(self, slot, stale=False):
        return self.trees.slot_raw(slot, stale)

    def slot_state(self, slot, stale=False):
        return self.trees.slot_state(slot, stale)

    def write_slot(self, slot, doc, stale=False, mode=0o600):
        return self.trees.write_slot(slot, doc, stale, mode)

    def read_json(self, relative):
        return self.trees.read_json(relative)

    def journal(self):
        return self.trees.journal()

    def listing(self, tree="bundles", sub=""):
        return self.trees.listing(tree, sub)

    # ---------------------------------------------------------------- reports and secrets
    def describe(self, limit=12):
        """The last requests each fake saw, in order, on one line."""
        entries = self.timeline.entries()[-limit:]
        return "; ".join("%s %s %s -> %s" % (e.fake, e.method, e.path, e.status or "-") for e in entries) \
            or "no requests"

    def secrets(self):
        """Every value a report masks: the tokens and the store's tokens and signatures."""
        return [s for s in self.tokens.secrets() + self.store.secrets() if len(s) >= 12]

    # ---------------------------------------------------------------- invariants (verdict.py)
    def invariants(self):
        """What must hold after any check, each broken one a Violation (verdict.PlaneVerdict: the
        token, target URLs, error markers and unsafe lines in no output, whole slot files, one
        outcome per reservation, no proxy, no process left). A fake that broke raises HarnessError."""
        for name, fake in self._fakes:
            if fake.errors:
                raise HarnessError("the fake %s failed while serving the worker:\n%s" % (name, fake.errors[0]))
        self.ctx.note(self.timeline.render())
        return verdict.PlaneVerdict(self).violations()

    def close(self):
        """Close every fake (each closes even if another fails)."""
        errors = []
        if self.worker is not None:
            self.worker.stop_watching()
        for _name, fake in reversed(self._fakes):
            try:
                fake.close()
            except Exception as exc:  # keep closing the others
                errors.append("%s: %s" % (type(exc).__name__, exc))
        if errors:
            raise HarnessError("closing the scan plane: " + "; ".join(errors))

