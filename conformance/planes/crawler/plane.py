"""The crawler plane: the fakes of one crawler run composed, the node's environment, the run.

The plane makes each fake with its own options (see conformance/planes/crawler
for the map), points the node at them through its environment, runs the node,
and states the invariants no single fake can: secrets across every output,
the status line against the store and the broker, TMPDIR left empty.
"""

import collections
import os
import secrets as _secrets
import signal
import socket
import time

from conformance.invariants import Violation, dir_empty
from conformance.planes import crawler_docs as docs
from conformance.planes.crawler import verdict
from conformance.planes.crawler.base import AUDIENCE_BASE, BUCKET, CA_FILE, EXECUTION, SESSION_ID, as_bytes, short
from conformance.planes.crawler.broker import Broker
from conformance.planes.crawler.child import Child
from conformance.planes.crawler.site import GeneratedJsonl, SourceSite, Tripwire
from conformance.planes.metadata import MetadataServer
from conformance.runner import HarnessError
from conformance.servers import MISNAMED_CERT_CHAIN, OTHER_CA_FILE, UNTRUSTED_CERT_CHAIN
from conformance.store import ObjectStore
from conformance.timeouts import POLL_INTERVAL_S, Deadline, node_hung

__all__ = ["CrawlerPlane", "StoredObject", "CRAWLER_RUN_TIMEOUT_S"]

# How long a crawler run may take before the harness kills it. The longest
# run any check expects is about 15 s (a cancelled PUT waiting out the 8 s
# grace; a 96 MiB source on a loaded machine); a node stuck past every
# deadline it was given is killed here and its check fails, so a mutant that
# ignores a deadline costs 30 s, not the generic minute.
CRAWLER_RUN_TIMEOUT_S = 30.0
# A secret shorter than this is not scanned for (it would match by accident).
MIN_SECRET_CHARS = 12
# The timeouts the node reads (MOSTLYRIGHT_CRAWLER_<NAME>_TIMEOUT_S).
TIMEOUT_NAMES = ("bootstrap", "fetch", "child", "upload")

StoredObject = collections.namedtuple("StoredObject", "key obj raw doc")
StoredObject.__doc__ = """A stored object under the quarantine prefix: its key, the store's Obj
(sha256, size, content_type, metadata), its bytes (at most MAX_CRAWLER_RESULT_BYTES + 1)
and the document parsed leniently (None when it is not JSON)."""


def _timeout_text(value):
    """A timeout as the node reads it ([0-9]+(.[0-9]+)?); strings pass as given."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = ("%.6f" % value).rstrip("0").rstrip(".")
    return text or "0"


def _take(options, names):
    return dict((name, options.pop(name)) for name in names if name in options)


def loopback_addresses():
    """The addresses "localhost" resolves to here (127.0.0.1, and ::1 where
    the resolver offers it): every one must be allowed, or FETCH-3 denies."""
    found = ["127.0.0.1"]
    try:
        for info in socket.getaddrinfo("localhost", 443, 0, socket.SOCK_STREAM):
            address = info[4][0]
            if address not in found:
                found.append(address)
    except OSError:
        pass
    return found


class CrawlerPlane(object):
    """The fakes of one run: ``metadata`` (MetadataServer), ``broker``
    (Broker), ``site`` (SourceSite), ``tripwire`` (Tripwire), ``store``
    (conformance.store.ObjectStore) and ``child`` (Child). Every keyword has a
    default that makes a small successful run; a check changes only what it
    is about.

    A fake's options (its OPTIONS; see its docstring) are the plane's
    keywords too, and its attributes after. The plane's own:

    source_url   the request's URL (default the site's source_path); later
                 as broker.source_url.
    policy       the egress policy document (default: the site's port on
                 localhost's addresses); policy_raw: the variable's text.
    attestation  the request's policy attestation (default the policy's
                 digest); later as broker.attestation.
    timeouts     {"bootstrap"|"fetch"|"child"|"upload": seconds}.
    child        a crawler_child behaviour: the scripted normaliser, pinned.
    extra_env, drop_env   variables added to, or removed from, env().
    session_id   the argv session (default SESSION_ID).
    untrusted, misnamed   names among "broker", "site", "store": those serve a
                 self-signed certificate nobody trusts, or one whose chain the
                 node trusts but which names another host (misnamed.invalid).
    store_plain_http   the store speaks plain HTTP, as a stock emulator does.

    Faults go to a fake: ``plane.broker.add_fault(fault, plane.broker.redeem_match())``.
    """

    _count = 0

    def __init__(self, ctx, source_url=None, policy=None, policy_raw=None, attestation=None, timeouts=None,
                 child=None, extra_env=None, drop_env=(), session_id=SESSION_ID, untrusted=(), misnamed=(),
                 store_plain_http=False, **options):
        self.timeouts = dict(timeouts or {})
        unknown = set(self.timeouts) - set(TIMEOUT_NAMES)
        if unknown:
            raise ValueError("unknown timeouts: %s" % ", ".join(sorted(unknown)))
        unknown = (set(untrusted) | set(misnamed)) - {"broker", "site", "store"}
        if unknown:
            raise ValueError("untrusted or misnamed names no server: %s" % ", ".join(sorted(unknown)))
        site_options, metadata_options = _take(options, SourceSite.OPTIONS), _take(options, MetadataServer.OPTIONS)
        broker_options = _take(options, Broker.OPTIONS)
        if options:
            raise TypeError("CrawlerPlane: unknown option(s) %s" % ", ".join(sorted(options)))
        source = site_options.get("source")
        if isinstance(source, GeneratedJsonl) and broker_options.get("data_format") is None:
            broker_options.update(data_format="jsonl", filename=broker_options.get("filename") or "data.jsonl")

        self.ctx = ctx
        self.session_id = session_id
        self.proc = None
        self.result = None
        self.policy_raw = policy_raw
        self.store_plain_http = store_plain_http
        self.extra_env = dict(extra_env or {})
        self.drop_env = list(drop_env)

        CrawlerPlane._count += 1
        home = "crawler-plane-%d" % CrawlerPlane._count
        self.scratch = ctx.tmpdir(home + "/tmp")
        # What the node trusts: the harness CA, and the CA behind the
        # misnamed certificate when a server serves one (so only its name,
        # not its chain, can be the reason to refuse it).
        self.ca_file = CA_FILE
        if misnamed:
            self.ca_file = os.path.join(ctx.tmpdir(home + "/trust"), "ca-bundle.pem")
            with open(self.ca_file, "wb") as out:
                for path in (OTHER_CA_FILE, CA_FILE):  # the one that matters first, for a reader of one PEM
                    with open(path, "rb") as f:
                        out.write(f.read())
        rng = getattr(ctx, "rng", None)
        self.object_hex = ("%064x" % rng.getrandbits(256)) if rng is not None else _secrets.token_hex(32)
        self.object_name = docs.RESULT_PREFIX + self.object_hex
        self.object_key = "%s/%s" % (BUCKET, self.object_name)

        def chain(name):  # the certificate the server named `name` serves
            if name in untrusted:
                return UNTRUSTED_CERT_CHAIN
            return MISNAMED_CERT_CHAIN if name in misnamed else None

        seed = getattr(ctx, "seed", 0)
        self._fakes = []
        try:
            self.store = self._add("store", ObjectStore(ctx.tmpdir(home + "/store"), tls=not store_plain_http,
                                                        seed=seed, name="crawler-store", cert_chain=chain("store")))
            self.metadata = self._add("metadata", MetadataServer(seed, self.secrets, **metadata_options))
            self.site = self._add("source", SourceSite(seed, self.secrets, self.describe_secret, chain("site"),
                                                       **site_options))
            if policy is None:
                policy = docs.make_policy(["localhost"], [self.site.port], loopback_addresses())
            self.policy = policy
            self.broker = self._add("broker", Broker(
                self.metadata, self.store, self.object_name,
                source_url if source_url is not None else self.site.url(self.site.source_path),
                attestation if attestation is not None else docs.digest(policy), session_id,
                seed=seed, secret_values=self.secrets, cert_chain=chain("broker"), **broker_options))
            self.tripwire = self._add("tripwire", Tripwire(seed, self.secrets))
            self.child = Child(ctx.tmpdir(home + "/child"), child, node_process=lambda: self.proc)
            self.account = verdict.FetchAccount(self.broker, self.site)
        except BaseException:
            self.close()
            raise

    def _add(self, label, fake):
        self._fakes.append((label, fake))
        return fake

    # ---------------------------------------------------------------- the node's environment
    def env(self):
        """The node's whole environment (nothing is inherited)."""
        policy_text = self.policy_raw if self.policy_raw is not None else docs.canonical(self.policy).decode("utf-8")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "TMPDIR": self.scratch,
            "SSL_CERT_FILE": self.ca_file,
            "GCE_METADATA_HOST": self.metadata.host,
            "STORAGE_EMULATOR_HOST": self.store.origin,
            "MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET": BUCKET,
            "MOSTLYRIGHT_CRAWLER_BOOTSTRAP_URL_BASE": self.broker.url_base,
            "MOSTLYRIGHT_CRAWLER_BOOTSTRAP_AUDIENCE_BASE": AUDIENCE_BASE,
            "MOSTLYRIGHT_CRAWLER_EGRESS_POLICY": policy_text,
            "CLOUD_RUN_EXECUTION": EXECUTION,
        }
        for name, value in self.timeouts.items():
            env["MOSTLYRIGHT_CRAWLER_%s_TIMEOUT_S" % name.upper()] = _timeout_text(value)
        env.update(self.child.env())
        env.update(self.extra_env)
        for name in self.drop_env:
            env.pop(name, None)
        return env

    def args(self):
        return ["--crawler-session-id", self.session_id]

    # ---------------------------------------------------------------- act
    def start(self, pid1=True, memory_limit_bytes=None, args=None):
        """Start the node with env() and (by default) the session argument."""
        self.proc = self.ctx.start_node(self.env(), args=self.args() if args is None else list(args),
                                        pid1=pid1, memory_limit_bytes=memory_limit_bytes)
        return self.proc

    def wait(self, proc=None, timeout=CRAWLER_RUN_TIMEOUT_S):
        proc = proc or self.proc
        self.result = proc.wait(timeout)
        self.ctx.note("node: %s" % self.result.describe())
        return self.result

    def run(self, timeout=CRAWLER_RUN_TIMEOUT_S, **start):
        """start() then wait(): for checks that only arrange things beforehand."""
        self.start(**start)
        return self.wait(timeout=timeout)

    def stop_when(self, condition, signum=signal.SIGTERM, timeout=CRAWLER_RUN_TIMEOUT_S, what="the trigger",
                  settle_s=0.0):
        """Send signum to the node settle_s after condition() first holds (polled
        every POLL_INTERVAL_S; a fake's predicate, such as
        plane.broker.redeem_started()). Returns the monotonic time the signal
        went out; the check fails when the node never got there (or exited first)."""
        deadline = Deadline(timeout)
        while not condition():
            if not self.proc.running():
                self.ctx.fail(expected="the node to reach %s" % what,
                              actual="it exited first (%s)" % self.describe_exchanges(),
                              diagnosis="the run never reached the phase this check stops it in")
            if deadline.over():
                node_hung()
                self.ctx.fail(expected="the node to reach %s" % what,
                              actual="it did not within %.0f s (%s)" % (timeout, self.describe_exchanges()),
                              diagnosis="the run never reached the phase this check stops it in")
            time.sleep(POLL_INTERVAL_S)
        if settle_s:
            time.sleep(settle_s)
        sent = time.monotonic()
        self.proc.signal(signum)
        self.ctx.note("plane: sent signal %d at %s" % (signum, what))
        return sent

    def signal(self, signum=signal.SIGTERM):
        """Send a signal now (a second stop, say); returns its monotonic time."""
        sent = time.monotonic()
        self.proc.signal(signum)
        self.ctx.note("plane: sent signal %d" % signum)
        return sent

    def stop_latency(self):
        """Seconds from the first signal to the node's exit (None without a signal)."""
        return self.result.stop_latency_s if self.result is not None else None

    # ---------------------------------------------------------------- the node's output
    def status_line(self):
        """(code, status) when stderr is exactly one canonical status line, else None."""
        return self._parse_status()[0]

    def status_problem(self):
        """Why stderr is not one canonical status line (None when it is, or is empty)."""
        return self._parse_status()[1]

    def stderr_text(self):
        return self.result.stderr if self.result is not None else self.proc.stderr_text()

    def _parse_status(self):
        return verdict.parse_status(self.result.stderr if self.result is not None else "", self.store_plain_http)

    # ---------------------------------------------------------------- the store, as this plane uses it
    def puts(self):
        """Store PUT exchanges (headers in arrival order, query masked)."""
        return [ex for ex in self.store.transcript if ex.method == "PUT"]

    def put_started(self):
        """Predicate for stop_when: a PUT has arrived at the store."""
        return lambda: any(ex.method == "PUT" for ex in self.store.transcript)

    def put_body_done(self):
        """Predicate for stop_when: a PUT's whole body has arrived."""
        return lambda: any(ex.method == "PUT" and ex.t_body_done is not None for ex in self.store.transcript)

    def stored(self):
        """{key: StoredObject} of every object under the bucket's quarantine prefix."""
        prefix = "%s/%s" % (BUCKET, docs.RESULT_PREFIX)
        out = {}
        for key, obj in sorted(self.store.objects().items()):
            if not key.startswith(prefix):
                continue
            with self.store.open_object(key) as handle:
                raw = handle.read(docs.MAX_CRAWLER_RESULT_BYTES + 1)
            try:
                doc = docs.parse_lenient(raw)
            except docs.JsonError:
                doc = None
            out[key] = StoredObject(key, obj, raw, doc)
        return out

    def _stored_with_schema(self, schema):
        for item in self.stored().values():
            if isinstance(item.doc, dict) and item.doc.get("schema_version") == schema:
                return item
        return None

    def stored_result(self):
        """The stored result (StoredObject), or None."""
        return self._stored_with_schema(docs.RESULT_SCHEMA)

    def stored_bundle(self):
        """The stored failure bundle (StoredObject), or None."""
        return self._stored_with_schema(docs.FAILURE_SCHEMA)

    # ---------------------------------------------------------------- across fakes
    def describe_exchanges(self, limit=12):
        """The last requests every fake saw, in time order, on one line."""
        events = []
        for name, fake in self._fakes:
            for ex in fake.transcript:
                events.append((ex.t_start, "%s %s %s -> %s%s" % (
                    name, ex.method, ex.path, ex.status or "-",
                    " (%s)" % ex.outcome if ex.outcome not in (None, "ok") else "")))
        events.sort(key=lambda item: item[0])
        return "; ".join(text for _t, text in events[-limit:]) or "no requests"

    def transport_evidence(self):
        """(evidence, exact): see verdict.FetchAccount.transport_evidence."""
        return self.account.transport_evidence()

    def verify_result(self, raw):
        """Problems with raw as any node's result: see verdict.FetchAccount.verify_result."""
        return self.account.verify_result(raw)

    def reference_problems(self, raw):
        """Problems with raw as the reference node's result: see verdict.FetchAccount."""
        return self.account.reference_problems(raw)

    def secrets(self):
        """Every value whose appearance outside its one place is a leak: each
        minted token, its signature and payload segments and its marker; every
        signature and key the store issued; the capability URL and its signed
        query; the raw bootstrap response."""
        values = []
        if getattr(self, "metadata", None) is not None:
            values += self.metadata.secrets()
        if getattr(self, "store", None) is not None:
            values += [v for v in self.store.secrets() if isinstance(v, str)]
        if getattr(self, "broker", None) is not None:
            values += self.broker.secrets()
        return [v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_CHARS]

    def describe_secret(self, secret):
        """Name a leaked value without repeating it (reports are logs too)."""
        for fake in (self.metadata, self.broker):
            name = fake.describe_secret(secret)
            if name is not None:
                return name
        return "a store signature or key (%d characters)" % len(secret)

    # ---------------------------------------------------------------- invariants
    def invariants(self):
        """What must hold after any run, whatever the check was about.

        Fakes that broke raise HarnessError (ERROR, never the node's FAIL).
        Always: each fake's own (no connection to the tripwire; no secret in a
        source request; at most one :redeem and one :fail, its code one of the
        three); no secret in a :fail body or a stored object; the :fail code is
        the status line's; TMPDIR empty. After a node run also: no secret in
        stdout, stderr, the node's or any descendant's argv, its environment or
        the child's record; no traceback; stdout empty; exit status 0, 1, 2 or
        143; stderr empty or one canonical status line with a known code
        agreeing with the exit status; a silent exit 0 leaves a result
        verify_result accepts; a "reported" status leaves the failure bundle of
        that code; no child process left.
        """
        for name, fake in self._fakes:
            if fake.errors:
                raise HarnessError("the fake %s failed while serving the node:\n%s" % (name, fake.errors[0]))
        found = []
        found += self.tripwire.invariants()
        found += self.site.invariants()
        found += self._stored_secret_invariants()
        found += self.broker.invariants()
        found += self._fail_code_invariant()
        if self.result is not None:
            found += self._output_secret_invariants()
            found += verdict.output_violations(self.result, *self._parse_status())
            found += self._outcome_invariants()
            found += self.child.invariants(self.result)
        found += dir_empty(self.scratch, name="CRAWLER-STREAM-3: TMPDIR left empty")
        return found

    def _scan(self, places):
        return verdict.scan(places, self.secrets(), self.describe_secret)

    def _stored_secret_invariants(self):
        found = []
        for index, call in enumerate(self.broker.fails()):
            found += self._scan([(":fail body #%d" % (index + 1), call.body)])
        for key, item in sorted(self.stored().items()):
            found += self._scan([("the stored object %s" % key.rsplit("/", 1)[-1][:12], item.raw)])
        return found

    def _fail_code_invariant(self):
        """CRAWLER-FAIL-2: the status line names the code :fail reported."""
        status = self._parse_status()[0] if self.result is not None else None
        found = []
        for call in self.broker.fails():
            code = Broker.fail_code(call)
            if isinstance(code, str) and code in docs.FAIL_ROUTE_CODES and status is not None and status[0] != code:
                found.append(Violation("CRAWLER-FAIL-2: the status line names the reported code",
                                       "status line code %s" % code, "status line code %s" % status[0]))
        return found

    def _output_secret_invariants(self):
        result = self.result
        places = [("stdout", result.stdout), ("stderr", result.stderr)]
        argvs = dict(result.seen_cmdlines or {})
        if result.cmdline_snapshot is not None:
            argvs.setdefault(result.host_pid, result.cmdline_snapshot)
        for pid, argv in sorted(argvs.items(), key=lambda item: str(item[0])):
            label = "the node's argv" if pid == result.host_pid else "the argv of descendant pid %s" % pid
            places.append((label, "\0".join(argv or [])))
        if result.environ_snapshot is not None:
            places.append(("the node's environment", "\0".join("%s=%s" % kv for kv in
                                                            sorted(result.environ_snapshot.items()))))
        record = self.child.record_bytes()
        if record is not None:
            places.append(("the child's record (argv, environment, stdin header)", record))
        return self._scan(places)

    def _outcome_invariants(self):
        """What the store holds agrees with what the node says."""
        result = self.result
        if verdict.harness_killed(result) or result.exit_code == 2:
            return []
        found = []
        parsed, problem = self._parse_status()
        if result.exit_code == 0 and result.stderr == "":
            stored = self.stored_result()
            if stored is None:
                found.append(Violation("CRAWLER-REPORT-4: exit 0 means the result was stored",
                                       "a stored result after a silent exit 0",
                                       "no result in the store (%s)" % self.describe_exchanges()))
            else:
                problems = self.verify_result(stored.raw)
                if problems:
                    found.append(Violation("CRAWLER-RESULT-*: the stored result is what was fetched",
                                           "a stored result that restates the fetch and whose summary "
                                           "matches its own content",
                                           "; ".join(problems[:6]) + (" (and %d more)" % (len(problems) - 6)
                                                                      if len(problems) > 6 else ""),
                                           "the node stored a result that does not restate its fetch"))
        if parsed is not None and problem is None and parsed[1] == "reported":
            code = parsed[0]
            bundle = self.stored_bundle()
            request = self.broker.request
            expected = as_bytes(docs.failure_bundle(request, code)) if isinstance(request, dict) else None
            if bundle is None:
                found.append(Violation("CRAWLER-REPORT-2: \"reported\" means the bundle is stored",
                                       "a stored failure bundle carrying %s" % code,
                                       "no failure bundle in the store (%s)" % self.describe_exchanges()))
            elif expected is not None and bundle.raw != expected:
                found.append(Violation("CRAWLER-REPORT-2: the failure bundle",
                                       "the canonical bundle %s" % expected.decode("utf-8", "replace"),
                                       "stored %s" % short(bundle.raw.decode("utf-8", "replace"), 300)))
        return found

    def close(self):
        """Close every fake (each closes even if another fails)."""
        errors = []
        for _name, fake in reversed(getattr(self, "_fakes", [])):
            try:
                fake.close()
            except Exception as exc:  # keep closing the others
                errors.append("%s: %s" % (type(exc).__name__, exc))
        if errors:
            raise HarnessError("closing the crawler plane: " + "; ".join(errors))
