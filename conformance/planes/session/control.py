"""The fake control plane ("Studio") of the session contract: dispatch, lease, producer callbacks.

One HTTPS LoopbackServer (the test CA) that serves, at the paths of contract/session.md:

    POST /internal/v3/session-worker/dispatches/{dispatch_id}:exchange     Job mode (SESSION-DISPATCH-*)
    POST /internal/v3/session-worker/sessions/{session_id}:lease           Service mode (SESSION-SERVICE-5)
    POST|GET <callback prefix>/internal/v3/producer/attempts/{attempt_id}...  the seven verbs of *Callbacks*

    control = ControlPlane(token_check=lambda token, audience: ...)   # the metadata fake judges its tokens
    control.enqueue_probe("sample_rows", {"source_id": sid})          # the next claim hands it out
    control.set_source(sid, bundle_url=url, bundle_bytes=raw)          # acquisitions of sid become ready
    control.add_fault(faults.status(503), control.claim_match(first=1))
    ... control.heartbeats(), control.claims(), control.reports(), control.progress_events() ...

The lease is built at the first good exchange (or legacy lease), so the capability's window
starts then; its intervals are contract seconds scaled by conformance/timescale.py. Every
request is recorded as a ControlCall (no secret kept in it) in arrival order; each query
helper takes the fake's lock and returns copies, so a check may call it while the node runs.

Refusals (body ``{"code","detail"}``, schema ``error``; each detail carries ``detail_canary``),
in the order they are checked:

    404 NOT_FOUND                no such route; 405 METHOD_NOT_ALLOWED: a known path, another method
    401 AUTHORIZATION_DENIED     no usable bearer: none, not one "Bearer <token>", an identity
                                 token token_check refuses (exchange, lease), not the capability,
                                 or the capability past its expiry (callbacks)
    404 NOT_FOUND                exchange, lease: a dispatch or session id this fake does not serve
    403 AUTHORIZATION_DENIED     a good bearer that does not reach this: another attempt's path, a
                                 template not in allowed_callback_paths, a wrong lease nonce
    400 REQUEST_INVALID          a body that is not strict JSON of its schema, or whose binding
                                 (workspace, run, attempt, session, dispatch, probe id) differs from
                                 the lease's or the path's, or whose fence is newer than the current
    409 ATTEMPT_FENCE_STALE      a body fence older than the current one (stale_fence())
    then what the fake's state decides:
    409 RESEARCH_SESSION_DISPATCH_CLOSED            dispatch_state "closed"
    409 RESEARCH_SESSION_DISPATCH_ALREADY_CLAIMED   a lease already issued, or dispatch_state "claimed"
    404 NOT_FOUND                a report of a probe never handed out, a read of an unknown acquisition
    409 RESEARCH_PROBE_ALREADY_SETTLED              a report of a probe already settled
    403 RESEARCH_SOURCE_FORBIDDEN                   a create for a source outside the lease's source_ids
    410 CRAWLER_SESSION_EXPIRED  an acquisition scripted to expire (set_source expire_once)
    any (status, code)           a create refusal scripted per source (set_source refuse)

Digests and event ids that do not recompute, non-canonical bodies and header faults are never
refused: they are recorded (``problems``) and judged by invariants(), since a refusal would
hide them from the checks. Successes: the lease (200), ``{}`` for start, heartbeat, append and
report (the contract gives those 200 bodies no shape), the claim answer (200), the acquisition
document (201 on create, 200 on read). Faults: add_fault with one route helper per verb
(exchange_match, lease_match, start_match, heartbeat_match, events_match, claim_match,
report_match, acquisition_match, acquisition_read_match); ``refusal()`` builds a status fault
whose body is the error envelope. A faulted exchange changes nothing: a claim it answers hands
out no probe, a report settles nothing, a read does not count.
"""

import collections
import datetime
import hashlib
import json
import os
import re
import secrets as _secrets
import threading
import time
import uuid
from collections.abc import Mapping

from conformance import faults
from conformance.fake import Fake, read_body
from conformance.faults import Match
from conformance.invariants import Violation
from conformance.planes import crawler_docs as docs
from conformance.planes.session import deploy
from conformance.schema import validate
from conformance.servers import MASK, LoopbackServer
from conformance.timescale import scaled

__all__ = ["ControlPlane", "ControlCall", "ProgressEvent", "SourceScript", "Acquisition", "OMIT", "TEMPLATES",
           "VERBS", "refusal", "canonical", "parse_strict", "JsonError", "digest", "client_event_id",
           "event_problems", "build_lease", "acquisition_document", "utc_text", "parse_utc"]

# ---------------------------------------------------------------- paths, codes, defaults

WORKER_PATH = "/internal/v3/session-worker"


class _Templates(Mapping):
    """Section *Callbacks*: verb -> (method, path template, success status), the templates those
    in force (deployment constants, D38), read at every access."""

    def __getitem__(self, verb):
        return deploy.templates()[verb]

    def __iter__(self):
        return iter(deploy.templates())

    def __len__(self):
        return len(deploy.templates())


TEMPLATES = _Templates()
VERBS = ("exchange", "lease", "start", "heartbeat", "append", "claim", "report", "acquire", "read", "other")
# Idempotency-Key of each verb (D29), as a pattern on the attempt id and the path's ids.
KEY_FORMS = {"start": r"session:{a}:start", "heartbeat": r"session:{a}:heartbeat:[1-9][0-9]*",
             "append": r"session:{a}:event-progress:[1-9][0-9]*", "claim": r"session:{a}:claim:[1-9][0-9]*",
             "report": r"session:{a}:result:{p}", "acquire": r"session:{a}:acquire:[0-9a-f-]{{36}}:(0|[1-9][0-9]*)"}
BODY_SCHEMAS = {"exchange": "exchange-request", "lease": "lease-request", "start": "attempt-callback",
                "heartbeat": "attempt-callback", "claim": "claim-request", "report": "probe-report",
                "acquire": "acquisition-request"}
FENCED = ("start", "heartbeat", "append", "claim", "report", "acquire")
# The ids a body repeats beside the fence; which verbs carry session_id.
BINDING = ("workspace_id", "run_id", "attempt_id")
WITH_SESSION = ("claim", "report", "acquire")
SCHEMA_VERSION = "3.0.0"
ADAPTER_ID = "public.https"
EXPIRED_CODE = "CRAWLER_SESSION_EXPIRED"
# Wire event type -> the internal name the client_event_id is derived from (SESSION-PROGRESS-1).
INTERNAL_NAMES = {"attempt_started": "attempt_started", "source_probe_started": "source_probe_started",
                  "source_probe_completed": "source_probe_settled", "attempt_finished": "attempt_finished"}
# How far the fake searches for an event's sequence number: past the cap, so an event
# numbered 257 is named as such (SESSION-PROGRESS-6) rather than as an id that does not recompute.
EVENT_SEQUENCE_SEARCH = 1024
# Contract seconds of the default lease (times TIME_SCALE in a check: 0.2 s, 0.1 s, 60 s, 60 s).
HEARTBEAT_CONTRACT_S = 2.0
CLAIM_POLL_CONTRACT_S = 1.0
CAPABILITY_LIFETIME_CONTRACT_S = 600.0
IDLE_TIMEOUT_CONTRACT_S = 600.0
# A download descriptor's lifetime (wall seconds from the answer): far past any check.
DOWNLOAD_EXPIRES_IN_S = 600.0
# SESSION-DEADLINE-2: a capability call may arrive this long after the expiry instant.
DEADLINE_SLACK_S = 0.1
# Request bodies are small documents; a result report is at most about 70 KiB. The rest of a
# larger body is read and dropped (recorded as body_total), never buffered.
MAX_RECORDED_BODY_BYTES = 256 * 1024
# A secret shorter than this is not looked for (it would match by accident).
MIN_SECRET_CHARS = 12
# Omit a key from the claim answer (set_claim_interval(OMIT)).
OMIT = object()

_SCHEMA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), "contract", "schemas", "session")
_schemas = {}
_TIMESTAMP_RE = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]{1,6})?Z\Z")


# ---------------------------------------------------------------- JSON, digests, event ids, time

# The crawler's canonical JSON and its lenient parser (conformance/planes/crawler_docs.py),
# with floats allowed: a probe result may hold them (D37), and the lease's scaled
# intervals are fractions. The same value rules otherwise: no duplicate key, no NaN,
# integers within 2^53 - 1, nesting at most 32, no lone surrogate, no BOM.
JsonError = docs.JsonError


def parse_strict(data):
    """The strict parser the contract asks of the node, for what the node sends.
    Raises JsonError and nothing else."""
    return docs.parse_lenient(data, floats=True)


def canonical(value):
    """Canonical JSON bytes (section *Documents*): sorted keys, no spaces, UTF-8 kept."""
    return docs.canonical(value, floats=True)


def digest(value):
    """A document's digest: the lowercase hex SHA-256 of its canonical bytes."""
    return docs.digest(value, floats=True)


def client_event_id(attempt_id, sequence, internal_name, payload_digest):
    """SESSION-PROGRESS-1: the first 16 bytes of SHA-256(<attempt_id>:<sequence>:<internal
    name>:<payload_digest>), version and variant bits set, as a canonical UUID."""
    raw = bytearray(hashlib.sha256(("%s:%d:%s:%s" % (attempt_id, sequence, internal_name, payload_digest))
                                   .encode("utf-8")).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))


def utc_text(epoch_s):
    """A canonical UTC timestamp with microseconds (the lease's expiry precision)."""
    return datetime.datetime.fromtimestamp(epoch_s, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_utc(text):
    """Epoch seconds of a canonical UTC timestamp, or None."""
    match = _TIMESTAMP_RE.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    try:
        when = datetime.datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    return when.replace(tzinfo=datetime.timezone.utc).timestamp() + float(match.group(2) or 0)


def canonical_uuid(value):
    """The canonical text of a UUID in any spelling uuid.UUID() takes, else None."""
    try:
        return str(uuid.UUID(value)) if isinstance(value, str) else None
    except ValueError:
        return None


def schema_problems(name, value):
    """conformance.schema's findings for value against contract/schemas/session/<name>."""
    if name not in _schemas:
        with open(os.path.join(_SCHEMA_DIR, name + ".schema.json"), encoding="utf-8") as handle:
            _schemas[name] = json.load(handle)
    return validate(value, deploy.deployed_schema(name, _schemas[name]))  # the deployment's values (D38)


def refusal(status, code, detail="refused by the conformance control plane", retry_after_s=None):
    """A status fault whose body is the contract's error envelope: install it with add_fault."""
    return faults.status(status, body=canonical({"code": code, "detail": detail}), retry_after_s=retry_after_s)


# ---------------------------------------------------------------- documents

def build_lease(binding, capability, expires_at, base_url, allowed_paths, heartbeat_s, claim_poll_s,
                idle_timeout_s, context, generation):
    """The lease (section *The lease*): exactly fifteen keys."""
    lease = dict((k, binding[k]) for k in ("session_id", "workspace_id", "run_id", "attempt_id", "fence"))
    lease.update(schema_version=SCHEMA_VERSION, generation=generation, capability=capability,
                 capability_expires_at=expires_at, callback_base_url=base_url,
                 allowed_callback_paths=list(allowed_paths), heartbeat_interval_seconds=heartbeat_s,
                 claim_poll_interval_seconds=claim_poll_s, idle_timeout_seconds=idle_timeout_s,
                 context=dict(context))
    return lease


def acquisition_document(binding, acquisition, status, now_wall, fail_code=None):
    """An acquisition document (schema acquisition) bound to the lease and the source; fail_code, the
    code of a failed one when its script gives none (an expiry)."""
    script = acquisition.script
    doc = {"crawler_session_id": acquisition.crawler_session_id, "status": status, "failure_code": None,
           "workspace_id": binding["workspace_id"], "run_id": binding["run_id"],
           "attempt_id": binding["attempt_id"], "research_session_id": binding["session_id"],
           "source_id": acquisition.source_id, "producer_fence": binding["fence"], "adapter_id": ADAPTER_ID}
    if status == "failed":
        doc["failure_code"] = fail_code or script.fail_code
    if status == "result_ready":
        doc.update(request_digest=script.request_digest, source_authority_digest=script.source_authority_digest,
                   egress_policy_attestation=script.egress_policy_attestation)
        doc["result_download"] = {
            "url": script.bundle_url, "bundle_size_bytes": script.bundle_size, "bundle_sha256": script.bundle_sha256,
            "expires_at": utc_text(int(now_wall + script.download_expires_in_s)),
            "crawler_session_id": acquisition.crawler_session_id, "request_digest": script.request_digest,
            "source_id": acquisition.source_id, "source_authority_digest": script.source_authority_digest}
    if script.patch is not None:
        patched = script.patch(doc)
        doc = patched if patched is not None else doc
    return doc


def event_problems(event, binding, sequence_after=0):
    """(sequence or None, problems) of one progress-event command: its schema, its binding, its
    digest, and the sequence number its client_event_id recomputes with (searched from
    sequence_after + 1, then from 1)."""
    problems = ["schema: " + p for p in schema_problems("progress-event", event)]
    if not isinstance(event, dict) or not isinstance(event.get("payload"), dict):
        return None, problems or ["not an event object"]
    problems += _binding_problems(event, binding, "append")
    payload_digest = digest(event["payload"])
    if event.get("payload_digest") != payload_digest:
        problems.append("payload_digest is not the payload's digest")
    name = INTERNAL_NAMES.get(event.get("event_type"))
    wanted = event.get("client_event_id")
    order = list(range(sequence_after + 1, EVENT_SEQUENCE_SEARCH + 1)) + list(range(1, sequence_after + 1))
    sequence = next((s for s in order if name is not None
                     and client_event_id(binding["attempt_id"], s, name, payload_digest) == wanted), None)
    if sequence is None:
        problems.append("client_event_id does not recompute for any sequence 1..%d" % EVENT_SEQUENCE_SEARCH)
    return sequence, problems


def _binding_problems(doc, binding, verb):
    """How a command body's fence binding differs from the lease's (fence aside)."""
    if not isinstance(doc, dict):
        return []
    keys = BINDING + (("session_id",) if verb in WITH_SESSION else ())
    found = ["%s differs from the lease's" % k for k in keys if doc.get(k) != binding[k]]
    if doc.get("fence") != binding["fence"]:
        found.append("fence differs from the lease's")
    return found


# ---------------------------------------------------------------- records

class ControlCall(object):
    """One request the control plane received, in arrival order. No secret is kept.

    verb (VERBS), method, path, has_query, exchange (the transcript record), t (arrival,
    time.monotonic()), headers (as received, the Authorization value masked), key (the
    Idempotency-Key), bearer ("capability", "identity", "refused", "malformed", None), ids (from
    the path), body (bytes, at most MAX_RECORDED_BODY_BYTES) and body_total, doc (the strict
    parse, or None) and json_error, canonical (body is canonical JSON), problems (every fault
    found; body_problems and header_problems are their parts), secret_places ([(place, what)]:
    where a secret was found), status (the answer chosen, or "fault" when a fault answered), code
    (the refusal's code), answer (the document answered), replayed (an idempotent replay), probe
    (the probe a claim handed out).
    """

    def __init__(self, verb, exchange, body=b"", body_total=0, ids=None, bearer_form=False):
        self.verb = verb
        self.exchange = exchange
        self.method = exchange.method
        self.path = exchange.path
        self.has_query = "?" in exchange.path
        self.t = exchange.t_start
        # The transcript's headers (secrets masked); a bearer keeps its scheme.
        self.headers = [(k, "Bearer " + MASK if bearer_form and k.lower() == "authorization" else v)
                        for k, v in exchange.headers]
        self.header_names = [k for k, _ in self.headers]
        self.key = self.header("idempotency-key")
        self.ids = dict(ids or {})
        self.body, self.body_total = body, body_total
        self.doc, self.json_error, self.canonical = None, None, False
        if body:
            try:
                self.doc = parse_strict(body)
                self.canonical = canonical(self.doc) == body
            except JsonError as exc:
                self.json_error = str(exc)
        self.bearer = None
        self.body_problems, self.header_problems, self.other_problems = [], [], []
        self.secret_places = []
        self.status = self.code = self.answer = self.probe = None
        self.replayed = False
        self.local_path = self.path.split("?", 1)[0]  # below the callback base (the plane sets it)

    def mask(self, secrets):
        """Keep no secret the body carried (the nonce of a lease request included); doc follows."""
        masked = self.body
        for secret in secrets:
            masked = masked.replace(secret.encode("utf-8"), MASK.encode("utf-8"))
        if masked != self.body:
            self.body, self.doc = masked, parse_strict(masked) if self.doc is not None else None

    @property
    def problems(self):
        return self.header_problems + self.body_problems + self.other_problems

    @property
    def template(self):
        return TEMPLATES[self.verb][1] if self.verb in TEMPLATES else None

    def header(self, name):
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def header_all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def __repr__(self):
        return "ControlCall(%s %s, key=%r, status=%r, code=%r, problems=%r)" % (
            self.verb, self.method, self.key, self.status, self.code, self.problems)


ProgressEvent = collections.namedtuple("ProgressEvent", "call index doc event_type facts sequence problems")
ProgressEvent.__doc__ = """One event of an append: the ControlCall, its index in the body, the event
document, its event_type and facts, the sequence its client_event_id recomputes with (None when
none does), and what is wrong with it (schema, binding, digest, id). call.status says whether the
append was accepted."""


# How an expiring acquisition says so (set_source expire_once): a 410 refusal of its create or of its
# reads, or (as the upstream's Studio may) a document that settles failed with CRAWLER_SESSION_EXPIRED,
# answering its create or its reads (SESSION-ACQUIRE-5, D46).
EXPIRY_FORMS = (False, True, "create", "read", "create-document", "read-document")


class SourceScript(object):
    """What acquisitions of one source do (set_source). The bundle's bytes are not kept: only
    its size and SHA-256, and the digests the descriptor and document carry."""

    def __init__(self, source_id, bundle_url=None, bundle_bytes=None, ready_after_reads=0, fail_code=None,
                 expire_once=False, expire_acquisitions=None, refuse=None, retry_after_s=None,
                 request_digest=None, source_authority_digest=None, egress_policy_attestation=None,
                 download_expires_in_s=DOWNLOAD_EXPIRES_IN_S, patch=None):
        ready = ready_after_reads is not None and fail_code is None and refuse is None
        if ready and (bundle_url is None or bundle_bytes is None):
            raise ValueError("set_source(%s): a source that becomes ready needs bundle_url and bundle_bytes"
                             % source_id)
        if expire_once not in EXPIRY_FORMS:
            raise ValueError("expire_once must be one of %s" % ", ".join(repr(f) for f in EXPIRY_FORMS))
        self.source_id, self.bundle_url, self.ready_after_reads = source_id, bundle_url, ready_after_reads
        self.fail_code, self.refuse, self.retry_after_s, self.patch = fail_code, refuse, retry_after_s, patch
        self.expire_at = "read" if expire_once is True else expire_once
        self.expirations_left = expire_acquisitions if expire_acquisitions is not None else int(bool(expire_once))
        self.download_expires_in_s = download_expires_in_s
        bundle = bytes(bundle_bytes or b"")
        self.bundle_size, self.bundle_sha256 = len(bundle), hashlib.sha256(bundle).hexdigest()
        found = _bundle_bindings(bundle)
        self.request_digest = request_digest or found[0] or _hex("request", source_id)
        self.egress_policy_attestation = egress_policy_attestation or found[1] or _hex("egress", source_id)
        self.source_authority_digest = source_authority_digest or _hex("source-authority", source_id)


def _hex(label, source_id):
    return hashlib.sha256(("conformance:%s:%s" % (label, source_id)).encode("utf-8")).hexdigest()


def _bundle_bindings(bundle):
    """(request_digest, egress_policy_attestation) a crawler result carries (SESSION-ACQUIRE-8)."""
    try:
        doc = json.loads(bundle.decode("utf-8"))
        receipt = doc.get("acquisition_receipt") or {}
        return doc.get("request_digest"), receipt.get("egress_policy_attestation")
    except Exception:
        return None, None


class Acquisition(object):
    """One acquisition: its id, source, key, script; creates and reads answered; expired."""

    def __init__(self, crawler_session_id, source_id, key, script, expired):
        self.crawler_session_id, self.source_id, self.key, self.script = crawler_session_id, source_id, key, script
        self.expired = expired
        self.creates = 0
        self.reads = 0
        self.documents = []  # every document answered, in order

    def status(self):
        script = self.script
        if script.ready_after_reads is None or self.reads < script.ready_after_reads:
            return "pending"
        return "failed" if script.fail_code is not None else "result_ready"

    def __repr__(self):
        return "Acquisition(%s, source %s, reads=%d, %s)" % (self.crawler_session_id, self.source_id, self.reads,
                                                              "expired" if self.expired else self.status())


class Refused(Exception):
    """A refusal decided by a helper of the fake: the status, the code, the detail, a Retry-After."""

    def __init__(self, status, code, detail, retry_after_s=None):
        Exception.__init__(self, code)
        self.status, self.code, self.detail, self.retry_after_s = status, code, detail, retry_after_s


class ProbeQueue(object):
    """The probes scripted for claims, those handed out, and those settled (under the fake's lock)."""

    def __init__(self):
        self.queue = collections.deque()
        self.handed = collections.OrderedDict()   # probe id -> probe
        self.settled = collections.OrderedDict()  # probe id -> the report call that settled it
        self.by_key = {}                          # claim key -> the answer that handed a probe out
        self.ordinal = 0

    def enqueue(self, kind, request, probe_id=None, ordinal=None):
        self.ordinal += 1
        probe = {"probe_id": probe_id or str(uuid.uuid4()), "probe_kind": kind,
                 "ordinal": self.ordinal if ordinal is None else ordinal, "request": request}
        self.queue.append(probe)
        return probe["probe_id"]

    def claim(self, key, session_state, interval, patch):
        """(answer, replayed): a key that was handed a probe gets the same answer again (D26);
        a closed session hands out nothing."""
        if key is not None and key in self.by_key:
            return self.by_key[key], True
        doc = {"session_state": session_state, "claimed": False}
        if session_state == "live" and self.queue:
            probe = self.queue.popleft()
            self.handed[probe["probe_id"]] = probe
            doc.update(claimed=True, probe=probe)
        if interval is not OMIT:
            doc["claim_poll_interval_seconds"] = interval
        if patch is not None:
            patched = patch(doc)
            doc = patched if patched is not None else doc
        if isinstance(doc, dict) and "probe" in doc and key is not None:
            self.by_key[key] = doc
        return doc, False

    def settle(self, probe_id, call):
        # the path names the probe by its id's canonical text, whatever spelling the claim used (D43)
        probe_id = next((handed for handed in self.handed if canonical_uuid(handed) == probe_id), probe_id)
        if probe_id not in self.handed:
            raise Refused(404, "NOT_FOUND", "no such probe was handed out")
        if probe_id in self.settled:
            raise Refused(409, "RESEARCH_PROBE_ALREADY_SETTLED", "the probe has its answer")
        self.settled[probe_id] = call


class AcquisitionBook(object):
    """The scripted sources and the acquisitions made of them (under the fake's lock)."""

    def __init__(self):
        self.sources = {}                          # source id -> SourceScript
        self.by_id = collections.OrderedDict()     # crawler_session_id -> Acquisition
        self.by_key = {}                           # create key -> Acquisition

    def create(self, key, source_id, allowlist, binding):
        """(document, replayed) of a create: one acquisition per key (SESSION-ACQUIRE-1)."""
        if not isinstance(allowlist, list) or source_id not in allowlist:
            raise Refused(403, "RESEARCH_SOURCE_FORBIDDEN", "the source is not in the session's scope")
        script = self.sources.get(source_id) or SourceScript(source_id, fail_code="RESEARCH_SOURCE_UNACQUIRABLE")
        if script.refuse is not None:
            raise Refused(script.refuse[0], script.refuse[1], "the acquisition is refused", script.retry_after_s)
        acquisition = self.by_key.get(key) if key is not None else None
        replayed = acquisition is not None
        if acquisition is None:
            expired = script.expirations_left > 0
            script.expirations_left -= int(expired)
            acquisition = Acquisition(str(uuid.uuid4()), source_id, key, script, expired)
            self.by_id[acquisition.crawler_session_id] = acquisition
            if key is not None:
                self.by_key[key] = acquisition
        acquisition.creates += 1
        if acquisition.expired and script.expire_at == "create":
            raise Refused(410, "CRAWLER_SESSION_EXPIRED", "the acquisition expired")
        if acquisition.expired and script.expire_at == "create-document":
            return self._answer(acquisition, binding, "failed", EXPIRED_CODE), replayed
        status = "pending" if acquisition.expired else acquisition.status()
        return self._answer(acquisition, binding, status), replayed

    def read(self, crawler_session_id, binding):
        acquisition = self.by_id.get(crawler_session_id)
        if acquisition is None:
            raise Refused(404, "NOT_FOUND", "no such acquisition")
        if acquisition.expired and acquisition.script.expire_at == "read-document":
            acquisition.reads += 1
            return self._answer(acquisition, binding, "failed", EXPIRED_CODE)
        if acquisition.expired:
            raise Refused(410, "CRAWLER_SESSION_EXPIRED", "the acquisition expired")
        acquisition.reads += 1
        return self._answer(acquisition, binding, acquisition.status())

    @staticmethod
    def _answer(acquisition, binding, status, fail_code=None):
        doc = acquisition_document(binding, acquisition, status, time.time(), fail_code)
        acquisition.documents.append(doc)
        return doc


def _template_re(template):
    """A template as a pattern: each {name} one id (no / or :), captured by its name."""
    parts, start = [], 0
    for match in re.finditer(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", template):
        parts.append(re.escape(template[start:match.start()]) + "(?P<%s>[^/:]+)" % match.group(1))
        start = match.end()
    return re.compile("".join(parts) + re.escape(template[start:]))


def route_of(method, path, prefix):
    """(verb, ids, method_ok) of a request path, by the templates in force (D38)."""
    if path.startswith(WORKER_PATH + "/dispatches/") and path.endswith(":exchange"):
        return "exchange", {"dispatch_id": path[len(WORKER_PATH) + 12:-9]}, method == "POST"
    if path.startswith(WORKER_PATH + "/sessions/") and path.endswith(":lease"):
        return "lease", {"session_id": path[len(WORKER_PATH) + 10:-6]}, method == "POST"
    if not path.startswith(prefix):
        return "other", {}, True
    rest = path[len(prefix):]
    for verb, (verb_method, template, _status) in TEMPLATES.items():
        match = _template_re(template).fullmatch(rest)
        if match:
            return verb, match.groupdict(), method == verb_method
    return "other", {}, True


def _local_path(path, prefix):
    """A request's path below the callback base (the path an allowed_callback_paths entry names)."""
    path = path.split("?", 1)[0]
    return path[len(prefix):] if prefix and path.startswith(prefix) else path


def path_pattern(entry):
    """The paths one allowed_callback_paths entry allows (SESSION-CALLBACK-2, D16): itself and
    what lies below it after a / or a : (an entry ending in / is a prefix), each {name} one id."""
    parts, start = [], 0
    for match in re.finditer(r"\{[A-Za-z_][A-Za-z0-9_]*\}", entry):
        parts.append(re.escape(entry[start:match.start()]) + "[^/:]+")
        start = match.end()
    parts.append(re.escape(entry[start:]))
    return re.compile("".join(parts) + (".*" if entry.endswith("/") else "(?:[/:].*)?"), re.DOTALL)


def path_allowed(entries, path):
    """SESSION-CALLBACK-2: some entry of allowed_callback_paths allows this concrete path."""
    return any(isinstance(entry, str) and path_pattern(entry).fullmatch(path) for entry in entries or ())


def body_documents(call, binding):
    """The command documents of a fenced body (each event of an append), noting call.body_problems:
    strict JSON, the schema, the binding (the fence among them), canonical bytes."""
    found = []
    if call.doc is None:
        found.append("not strict JSON (%s)" % (call.json_error or "no body"))
    docs = call.doc if call.verb == "append" and isinstance(call.doc, list) else [call.doc]
    if call.verb == "append" and call.doc is not None and not isinstance(call.doc, list):
        found.append("not a JSON array")
    for doc in docs if call.doc is not None else []:
        found += schema_problems(BODY_SCHEMAS.get(call.verb, "progress-event"), doc)
        found += _binding_problems(doc, binding, call.verb)
    if call.verb == "report" and isinstance(call.doc, dict) and canonical_uuid(call.doc.get("probe_id")) \
            != call.ids["probe_id"]:
        found.append("probe_id differs from the path's")  # the path carries the id's canonical text (D43)
    if call.body and not call.canonical:
        found.append("not canonical JSON")
    call.body_problems = found
    return [d for d in docs if isinstance(d, dict)]


def header_problems(call, attempt_id):
    """SESSION-CALLBACK-3 (callbacks) and SESSION-DISPATCH-3 (exchange, lease): the header set."""
    found = []
    names = [name.lower() for name in call.header_names]
    if call.verb in ("exchange", "lease"):
        wanted = ["accept", "authorization", "content-length", "content-type", "host"]
        if sorted(names) != wanted:
            found.append("headers are not exactly Host, Authorization, Content-Type, Accept, Content-Length")
    if call.header("accept") != "application/json":
        found.append("Accept is not application/json")
    if len(call.header_all("authorization")) != 1:
        found.append("not exactly one Authorization header")
    if "cookie" in names:
        found.append("a Cookie header")
    if call.body_total or call.method == "POST":
        if call.header("content-type") != "application/json":
            found.append("Content-Type is not application/json")
        if call.header("content-length") is None:
            found.append("no Content-Length")
    form = KEY_FORMS.get(call.verb)
    if call.verb == "read" and call.key is not None:
        found.append("an Idempotency-Key on an acquisition read")
    elif form is not None:
        # the key repeats the probe id as the claim wrote it (D43); the path carries its canonical text
        named = (call.doc or {}).get("probe_id") if isinstance(call.doc, dict) else None
        probe = named if isinstance(named, str) and canonical_uuid(named) == call.ids.get("probe_id") else \
            call.ids.get("probe_id", "")
        pattern = form.format(a=re.escape(attempt_id), p=re.escape(probe))
        if call.key is None or not re.match("^" + pattern + r"\Z", call.key):
            found.append("Idempotency-Key %s is not %s" % ("missing" if call.key is None else repr(call.key), form))
    if call.has_query:
        found.append("a query string")
    return found


# ---------------------------------------------------------------- invariants (what only this fake can judge)

def _v(name, expected, offenders, describe):
    if not offenders:
        return []
    shown = "; ".join(describe(item) for item in offenders[:5])
    more = " (and %d more)" % (len(offenders) - 5) if len(offenders) > 5 else ""
    return [Violation(name, expected, shown + more)]


def judge(calls, events, allowed, expiry_mono):
    """The invariants of ControlPlane.invariants(), from its records."""
    found = []
    cap = [c for c in calls if c.bearer == "capability"]
    misplaced = [(c, p, w) for c in calls for p, w in c.secret_places
                 if not (p == "authorization" and w == "capability" and c.verb in TEMPLATES)
                 and not (p == "authorization" and w == "another secret" and c.verb in ("exchange", "lease"))
                 and not (p == "body" and w == "the lease nonce" and c.verb == "lease")]
    found += _v("SESSION-SECRET-1: the capability only in the Authorization of capability calls",
                "each secret only where the contract sends it", misplaced,
                lambda item: "%s in the %s of %s %s" % (item[2], item[1], item[0].method, item[0].path))
    found += _v("SESSION-CALLBACK-2: only the paths the lease allows",
                "every capability call's template in allowed_callback_paths",
                [c for c in cap if c.template is not None and not path_allowed(allowed, c.local_path)],
                lambda c: "%s %s (template %s)" % (c.method, c.path, c.template))
    found += _v("SESSION-CALLBACK-3: headers", "Accept, Content-Type, Content-Length, the verb's Idempotency-Key,"
                " no cookie, no query", [c for c in cap if c.template and c.header_problems],
                lambda c: "%s #%d: %s" % (c.verb, c.exchange.seq, ", ".join(c.header_problems)))
    found += _v("SESSION-CALLBACK-4: bodies repeat the fence binding",
                "canonical bodies of the verb's schema with the lease's binding",
                [c for c in cap if c.verb in FENCED and c.body_problems],
                lambda c: "%s #%d: %s" % (c.verb, c.exchange.seq, ", ".join(c.body_problems[:3])))
    if expiry_mono is not None:
        found += _v("SESSION-DEADLINE-2: no capability call after the deadline",
                    "no capability call arriving more than %d ms after the expiry" % (DEADLINE_SLACK_S * 1000),
                    [c for c in cap if c.t > expiry_mono + DEADLINE_SLACK_S],
                    lambda c: "%s arrived %.3f s after the expiry" % (c.verb, c.t - expiry_mono))
    keys = collections.Counter(c.key for c in calls if c.verb == "heartbeat" and c.key is not None)
    found += _v("SESSION-HEARTBEAT-2: one key per beat (D1)", "every heartbeat with a key of its own",
                sorted(k for k, n in keys.items() if n > 1), lambda k: "%r sent %d times" % (k, keys[k]))
    for verb, clause in (("exchange", "SESSION-DISPATCH-3: the exchange request, sent once"),
                         ("lease", "SESSION-SERVICE-5: the legacy lease request, sent once")):
        sent = [c for c in calls if c.verb == verb]
        found += _v(clause, "at most one %s request" % verb, sent[1:], lambda c: "another at #%d" % c.exchange.seq)
        found += _v(clause, "exactly its headers and a canonical body", [c for c in sent if c.header_problems
                    or (c.body and not c.canonical)], lambda c: ", ".join(c.header_problems) or "body not canonical")
    starts = [c for c in calls if c.verb == "start"]  # a start a fault answered first shows no bearer
    first = starts[0].exchange if starts else None
    succeeded = first is not None and first.status in (200, 201) and first.outcome == "ok"

    def too_early(c):  # before the start; before its answer; after a failed start, anything but the last append
        if first is None or c.t < first.t_start:
            return True
        return c.t < first.t_answer if succeeded else c.verb != "append"
    early = [c for c in cap if c.verb != "start" and too_early(c)]
    found += _v("SESSION-START-1: attempt:start comes first, once", "one attempt:start, answered 200 before any other"
                " capability call (after a failed one, only the last append)", early + starts[1:],
                lambda c: "%s #%d" % (c.verb, c.exchange.seq))
    reports = collections.defaultdict(set)
    for c in calls:
        if c.verb == "report" and c.body:
            reports[c.ids.get("probe_id")].add((c.key, c.body))
    found += _v("SESSION-REPORT-4: a report is resent with the same bytes", "one key and one body per probe",
                sorted(p for p, sends in reports.items() if len(sends) > 1), lambda p: "probe %s" % p)
    found += _v("SESSION-PROGRESS-1: events with their digest and id", "every event's digest and id recompute",
                [e for e in events if e.problems], lambda e: "%s: %s" % (e.event_type, ", ".join(e.problems[:2])))
    cap = deploy.MAX_PROGRESS_EVENTS_PER_ATTEMPT
    found += _v("SESSION-PROGRESS-6: at most MAX_PROGRESS_EVENTS_PER_ATTEMPT events",
                "no event numbered above %d" % cap, [e for e in events if (e.sequence or 0) > cap],
                lambda e: "%s numbered %d" % (e.event_type, e.sequence))
    return found


# ---------------------------------------------------------------- the fake

def _fresh():
    return str(uuid.uuid4())


def _encode(doc):
    """An answer's bytes: sorted and compact, whatever a patch put in (NaN included)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


class ControlPlane(Fake):
    """The control plane of one session: one dispatch, one lease, one attempt.

    token_check(token, audience) -> bool judges the identity token of the exchange (audience
    exchange_audience) and of the legacy lease (lease_audience), both the origin by default.
    Options (also plane keywords; attributes after): dispatch_id (a UUID4), session_id,
    workspace_id, run_id, attempt_id (fresh UUIDs), generation, fence; heartbeat_s,
    claim_poll_s, lifetime_s, idle_timeout_s (seconds as served; default contract seconds
    scaled); source_ids (the allowlist; default one fresh id); allowed_paths (default every
    template); callback_prefix (a path the callbacks are served under, in callback_base_url);
    lease_patch(lease) and claim_patch(answer) (return the new document, or None to keep the
    one changed); dispatch_state ("open", "claimed", "closed"); lease_nonce (Service mode;
    default a fresh one: give it to the Service's start body).
    """

    OPTIONS = ("dispatch_id", "session_id", "workspace_id", "run_id", "attempt_id", "generation", "fence",
               "heartbeat_s", "claim_poll_s", "lifetime_s", "idle_timeout_s", "source_ids", "allowed_paths",
               "callback_prefix", "lease_patch", "claim_patch", "dispatch_state", "exchange_audience",
               "lease_audience", "lease_nonce", "statuses")

    def __init__(self, token_check, seed=0, secret_values=None, cert_chain=None, dispatch_id=None, session_id=None,
                 workspace_id=None, run_id=None, attempt_id=None, generation=3, fence=7, heartbeat_s=None,
                 claim_poll_s=None, lifetime_s=None, idle_timeout_s=None, source_ids=None, allowed_paths=None,
                 callback_prefix="", lease_patch=None, claim_patch=None, dispatch_state="open",
                 exchange_audience=None, lease_audience=None, lease_nonce=None, statuses=None):
        self.token_check = token_check
        # The status each success is answered with, by verb (lease included): the table's unless given
        # (a producer may answer a create replay 200, a claim 201: D42).
        self.statuses = dict(statuses or {})
        self.dispatch_id = dispatch_id or _fresh()
        self.binding = {"session_id": session_id or _fresh(), "workspace_id": workspace_id or _fresh(),
                        "run_id": run_id or _fresh(), "attempt_id": attempt_id or _fresh(), "fence": fence}
        self.generation = generation
        self.heartbeat_s = scaled(HEARTBEAT_CONTRACT_S) if heartbeat_s is None else heartbeat_s
        self.claim_poll_s = scaled(CLAIM_POLL_CONTRACT_S) if claim_poll_s is None else claim_poll_s
        self.lifetime_s = scaled(CAPABILITY_LIFETIME_CONTRACT_S) if lifetime_s is None else lifetime_s
        self.idle_timeout_s = scaled(IDLE_TIMEOUT_CONTRACT_S) if idle_timeout_s is None else idle_timeout_s
        self.source_ids = list(source_ids) if source_ids is not None else [_fresh()]
        self.context = {"dataset_id": _fresh(), "question_id": _fresh(), "table_id": None,
                        "source_ids": self.source_ids}
        every = [template for _method, template, _status in TEMPLATES.values()]
        self.allowed_paths = list(allowed_paths if allowed_paths is not None else every)
        self.callback_prefix, self.lease_patch, self.claim_patch = callback_prefix, lease_patch, claim_patch
        self.dispatch_state = dispatch_state
        self.lease_nonce = lease_nonce or _secrets.token_urlsafe(32)
        # a capability of the deployment's length (D38): 43 characters after the prefix, within its bounds
        length = min(max(43, deploy.MIN_CAPABILITY_BYTES - 7), deploy.MAX_CAPABILITY_BYTES - 7)
        self.capability = "mr_cap_" + _secrets.token_urlsafe(length)[:length]
        # SESSION-SECRET-3: every refusal's detail carries this, so a check can look for it in output.
        self.detail_canary = "CANARY" + _secrets.token_hex(8)
        self.session_state = "live"
        self.claim_interval = self.claim_poll_s
        self._plane_secrets = secret_values or (lambda: ())
        self._lock = threading.RLock()
        self._records = {}                              # exchange seq -> ControlCall
        self._progress = []                             # ProgressEvent, in arrival order
        self._probes, self._book = ProbeQueue(), AcquisitionBook()
        self._lease = self._lease_bytes = self._issued = None
        self._claimed = False
        self._fence_bumps = 0
        self._last_sequence = 0
        Fake.__init__(self, LoopbackServer("control", tls=True, seed=seed, secret_values=self._all_secrets,
                                           server_header="Google Frontend", cert_chain=cert_chain))
        self.exchange_audience = exchange_audience or self.origin
        self.lease_audience = lease_audience or self.origin
        self.server.route("*", "/*", self._handle, raw=True)

    # ---------------------------------------------------------------- addresses and route matches
    @property
    def name(self):
        """The server's name: a Timeline and the lifecycle triggers take this fake as it is."""
        return self.server.name

    @property
    def exchange_url(self):
        return "%s%s/dispatches/%s:exchange" % (self.origin, WORKER_PATH, self.dispatch_id)

    @property
    def lease_url(self):
        return "%s%s/sessions/%s:lease" % (self.origin, WORKER_PATH, self.binding["session_id"])

    @property
    def callback_base_url(self):
        return self.origin + self.callback_prefix

    @staticmethod
    def _match(method, key, fields):
        return Match(**dict({"method": method, "key": key}, **fields))

    def exchange_match(self, **fields):
        """The Match of POST .../dispatches/{id}:exchange, narrowed by fields (first=1, ...)."""
        return self._match("POST", "*/dispatches/*:exchange", fields)

    def lease_match(self, **fields):
        return self._match("POST", "*/sessions/*:lease", fields)

    @staticmethod
    def _glob(verb):
        """The verb's path template in force (D38) as a glob: each {id} any text, any prefix before."""
        return "*" + re.sub(r"\{[A-Za-z_][A-Za-z0-9_]*\}", "*", TEMPLATES[verb][1])

    def start_match(self, **fields):
        return self._match("POST", self._glob("start"), fields)

    def heartbeat_match(self, **fields):
        return self._match("POST", self._glob("heartbeat"), fields)

    def events_match(self, **fields):
        return self._match("POST", self._glob("append"), fields)

    def claim_match(self, **fields):
        return self._match("POST", self._glob("claim"), fields)

    def report_match(self, **fields):
        return self._match("POST", self._glob("report"), fields)

    def acquisition_match(self, **fields):
        """The Match of an acquisition create (POST <the create's template>)."""
        return self._match("POST", self._glob("acquire"), fields)

    def acquisition_read_match(self, **fields):
        return self._match("GET", self._glob("read"), fields)

    # ---------------------------------------------------------------- the lease
    def issue(self):
        """Build the lease now (the fake does it at the first good exchange or legacy lease, so the
        capability's window starts then) and return it. It is served once only."""
        with self._lock:
            if self._lease is None:
                wall, mono = time.time(), time.monotonic()
                lease = build_lease(self.binding, self.capability, utc_text(wall + self.lifetime_s),
                                    self.callback_base_url, self.allowed_paths, self.heartbeat_s, self.claim_poll_s,
                                    self.idle_timeout_s, self.context, self.generation)
                if self.lease_patch is not None:
                    patched = self.lease_patch(lease)
                    lease = patched if patched is not None else lease
                self._lease, self._issued, self._lease_bytes = lease, (wall, mono), _encode(lease)
            return self._lease

    @property
    def lease(self):
        """The lease as served (None before it was built)."""
        with self._lock:
            return self._lease

    def _served(self, key, default):
        value = (self._lease or {}).get(key, default)
        return value if isinstance(value, type(default)) and not isinstance(value, bool) else default

    def _bound(self):
        """The binding bodies must repeat: the served lease's (a patch may change it), else the options'."""
        return dict((k, self._served(k, v)) for k, v in self.binding.items())

    def expiry(self):
        """(wall, monotonic) seconds of the capability's expiry as served, or None before the lease."""
        with self._lock:
            if self._issued is None:
                return None
            wall0, mono0 = self._issued
            wall = parse_utc(self._served("capability_expires_at", ""))
            wall = wall0 + self.lifetime_s if wall is None else wall
            return wall, mono0 + (wall - wall0)

    # ---------------------------------------------------------------- scripting
    def enqueue_probe(self, kind, request, probe_id=None, ordinal=None):
        """Queue a probe for the next claims; returns its id. ordinal: default 1, 2, ... per probe."""
        with self._lock:
            return self._probes.enqueue(kind, request, probe_id, ordinal)

    def close_session(self, state="closed"):
        """Every later claim answer carries this session_state ("closed", "failed", ...)."""
        with self._lock:
            self.session_state = state

    def stale_fence(self):
        """From now on, fenced calls carry an old fence: 409 ATTEMPT_FENCE_STALE."""
        with self._lock:
            self._fence_bumps += 1

    def set_claim_interval(self, value):
        """The claim answer's claim_poll_interval_seconds from now on (any value; OMIT: no key)."""
        with self._lock:
            self.claim_interval = value

    def set_source(self, source_id, **script):
        """Script the acquisitions of source_id (SourceScript's keywords): bundle_url and
        bundle_bytes (the descriptor's url, size and SHA-256), ready_after_reads (0: ready at
        create; n: after n reads; None: never), fail_code (settles failed), expire_once
        (True or "read": the first acquisition's reads answer 410 CRAWLER_SESSION_EXPIRED;
        "create": its create does), expire_acquisitions (how many acquisitions expire),
        refuse=(status, code) and retry_after_s (every create refused), request_digest,
        source_authority_digest, egress_policy_attestation (default: the bundle's own, else
        derived), download_expires_in_s, patch(doc). A source never scripted settles failed
        with RESEARCH_SOURCE_UNACQUIRABLE."""
        with self._lock:
            self._book.sources[source_id] = SourceScript(source_id, **script)

    # ---------------------------------------------------------------- handler
    def _handle(self, ctx):
        req = ctx.request
        body = read_body(ctx, MAX_RECORDED_BODY_BYTES)
        total = ctx.body.consumed
        verb, ids, method_ok = route_of(req.method, req.path, self.callback_prefix)
        bearer = [value for value in req.headers.get_all("authorization") if value.startswith("Bearer ")]
        call = ControlCall(verb, ctx.exchange, body, total, ids, bearer_form=bool(bearer))
        call.local_path = _local_path(req.path, self.callback_prefix)
        with self._lock:
            self._records[ctx.exchange.seq] = call
            call.secret_places = self._secret_places(req, body)
            answer, raw = self._judge(call, req, method_ok), call.doc
            call.mask(self._all_secrets())
            if answer is None and verb == "append":
                self._record_events(call, raw)
        ctx.note(verb=verb, problems=list(call.problems))
        if ctx.refused:
            call.status, call.code = "fault", None
            ctx.respond(500)  # replaced by the fault's answer: the fake did nothing
            return
        if answer is None:
            with self._lock:
                answer = self._act(call)
        status, payload, headers = answer
        ctx.respond(status, [("Content-Type", "application/json"), ("Cache-Control", "no-store")] + headers,
                    body=payload, error_code=call.code)

    def _refuse(self, call, status, code, detail, retry_after_s=None):
        call.status, call.code = status, code
        headers = [("Retry-After", "%d" % retry_after_s)] if retry_after_s is not None else []
        return status, canonical({"code": code, "detail": "%s (%s)" % (detail, self.detail_canary)}), headers

    def _ok(self, call, status, doc, raw=None):
        call.status, call.answer = status, doc
        return status, raw if raw is not None else _encode(doc), []

    def _secret_places(self, req, body):
        names = {self.capability: "capability", self._served("capability", ""): "capability",
                 self.lease_nonce: "the lease nonce"}
        found = set()
        for secret in self._all_secrets():
            what = names.get(secret, "another secret")
            found.update((name.lower(), what) for name, value in req.headers if secret in value)
            if secret in req.target:
                found.add(("path", what))
            if secret.encode("utf-8") in body:
                found.add(("body", what))
        return sorted(found)

    def _judge(self, call, req, method_ok):
        """A refusal that needs no state change, or None (state is read under the lock)."""
        if call.verb == "other":
            return self._refuse(call, 404, "NOT_FOUND", "no such route")
        if not method_ok:
            return self._refuse(call, 405, "METHOD_NOT_ALLOWED", "this path takes another method")
        bound = self._bound()
        call.header_problems = header_problems(call, bound["attempt_id"])
        auth = req.headers.get_all("authorization")
        token = auth[0][7:] if len(auth) == 1 and auth[0].startswith("Bearer ") and auth[0][7:] else None
        call.bearer = None if not auth else "malformed" if token is None else "refused"
        if token is None:
            return self._refuse(call, 401, "AUTHORIZATION_DENIED", "no bearer token")
        if call.verb in ("exchange", "lease"):
            return self._judge_entry(call, token)
        if self._lease is None or token != self._served("capability", self.capability):
            return self._refuse(call, 401, "AUTHORIZATION_DENIED", "the bearer is not this session's capability")
        call.bearer = "capability"
        if call.t >= self.expiry()[1]:
            return self._refuse(call, 401, "AUTHORIZATION_DENIED", "the capability has expired")
        if call.ids["attempt_id"] != bound["attempt_id"]:
            return self._refuse(call, 403, "AUTHORIZATION_DENIED", "the capability is for another attempt")
        if not path_allowed(self._served("allowed_callback_paths", []), call.local_path):
            return self._refuse(call, 403, "AUTHORIZATION_DENIED", "the lease does not allow this path")
        if call.verb == "read":
            call.other_problems += ["a body on an acquisition read"] if call.body_total else []
            return None
        docs = body_documents(call, bound)
        refusing = [p for p in call.body_problems if not p.startswith("fence") and p != "not canonical JSON"]
        if refusing:
            return self._refuse(call, 400, "REQUEST_INVALID", "the body does not hold: " + refusing[0])
        current = bound["fence"] + self._fence_bumps
        if any(d["fence"] < current for d in docs):
            return self._refuse(call, 409, "ATTEMPT_FENCE_STALE", "the fence is older than the attempt's")
        if any(d["fence"] != current for d in docs):
            return self._refuse(call, 400, "REQUEST_INVALID", "the fence is newer than the attempt's")
        return None

    def _judge_entry(self, call, token):
        exchange = call.verb == "exchange"
        if not self.token_check(token, self.exchange_audience if exchange else self.lease_audience):
            return self._refuse(call, 401, "AUTHORIZATION_DENIED", "the identity token is refused")
        call.bearer = "identity"
        path_id = call.ids["dispatch_id" if exchange else "session_id"]
        if path_id != (self.dispatch_id if exchange else self.binding["session_id"]):
            return self._refuse(call, 404, "NOT_FOUND", "no such dispatch" if exchange else "no such session")
        problems = ["not strict JSON (%s)" % (call.json_error or "no body")] if call.doc is None else \
            schema_problems(BODY_SCHEMAS[call.verb], call.doc)
        if not problems and call.doc.get("dispatch_id" if exchange else "session_id") != path_id:
            problems.append("the body names another %s than the path" % ("dispatch" if exchange else "session"))
        call.body_problems = problems + (["not canonical JSON"] if call.body and not call.canonical else [])
        if problems:
            return self._refuse(call, 400, "REQUEST_INVALID", "the body does not hold: " + problems[0])
        if not exchange and call.doc["lease_nonce"] != self.lease_nonce:
            return self._refuse(call, 403, "AUTHORIZATION_DENIED", "the lease nonce is not this session's")
        return None

    def _record_events(self, call, raw):
        """Each event judged as sent (raw), kept as masked (call.doc)."""
        bound = self._bound()
        for index, event in enumerate(raw):
            sequence, problems = event_problems(event, bound, self._last_sequence)
            self._last_sequence = max(self._last_sequence, sequence or 0)
            shown = call.doc[index]
            self._progress.append(ProgressEvent(call, index, shown, shown.get("event_type"),
                                                shown["payload"].get("facts"), sequence, problems))

    def _act(self, call):
        """The answer of a call that passed _judge: the state changes here, under the lock."""
        verb, bound = call.verb, self._bound()
        try:
            if verb in ("exchange", "lease"):
                if self.dispatch_state == "closed":
                    raise Refused(409, "RESEARCH_SESSION_DISPATCH_CLOSED", "the session is over")
                if self.dispatch_state == "claimed" or self._claimed:
                    raise Refused(409, "RESEARCH_SESSION_DISPATCH_ALREADY_CLAIMED", "the lease was issued")
                self.issue()
                self._claimed = True
                return self._ok(call, self.statuses.get(verb, 200), self._lease, raw=self._lease_bytes)
            if verb == "claim":
                doc, call.replayed = self._probes.claim(call.key, self.session_state, self.claim_interval,
                                                        self.claim_patch)
                call.probe = doc.get("probe") if isinstance(doc, dict) else None
                return self._ok(call, self.statuses.get(verb, 200), doc)
            if verb == "report":
                self._probes.settle(call.ids["probe_id"], call)
            if verb == "acquire":
                doc, call.replayed = self._book.create(call.key, call.doc["source_id"],
                                                       self._served("context", {}).get("source_ids"), bound)
                return self._ok(call, self.statuses.get(verb, 201), doc)
            if verb == "read":
                return self._ok(call, self.statuses.get(verb, 200), self._book.read(call.ids["crawler_session_id"],
                                                                                    bound))
            return self._ok(call, self.statuses.get(verb, 200), {})
        except Refused as refused:
            return self._refuse(call, refused.status, refused.code, refused.detail, refused.retry_after_s)

    # ---------------------------------------------------------------- observe (safe while the node runs)
    def calls(self, verb=None):
        """Every request (ControlCall), in arrival order; verb: only those (VERBS). A request a
        request-phase fault answered before the handler ran has status "fault" and only what the
        transcript shows (masked headers, no body); one whose body is still being read (no fault,
        the handler has not recorded it yet) has status None and the same."""
        transcript = self.transcript
        found = []
        with self._lock:
            for ex in transcript:
                call = self._records.get(ex.seq)
                if call is None:
                    route = route_of(ex.method, ex.path.split("?", 1)[0], self.callback_prefix)
                    call = ControlCall(route[0], ex, ids=route[1])
                    call.local_path = _local_path(ex.path.split("?", 1)[0], self.callback_prefix)
                    call.status = "fault" if ex.fault is not None else None
                if verb is None or call.verb == verb:
                    found.append(call)
        return found

    def heartbeats(self):
        return self.calls("heartbeat")

    def claims(self):
        return self.calls("claim")

    def reports(self, probe_id=None):
        wanted = canonical_uuid(probe_id) or probe_id
        return [c for c in self.calls("report") if probe_id is None or c.ids.get("probe_id") == wanted]

    def progress_events(self):
        """Every event of every append that passed the fake's checks (ProgressEvent), flattened in
        arrival order; named so as not to hide Fake.events (the server's event stream)."""
        with self._lock:
            return list(self._progress)

    def acquisitions(self):
        """Every acquisition created (Acquisition), in order."""
        with self._lock:
            return list(self._book.by_id.values())

    def handed_probes(self):
        """The probes claims handed out, in order."""
        with self._lock:
            return list(self._probes.handed.values())

    def started(self, verb, n=1):
        """Predicate for a plane's stop_when: n requests of verb have arrived."""
        return lambda: len(self.calls(verb)) >= n

    def wait_calls(self, verb, n, timeout):
        """True once n requests of verb have arrived, within timeout seconds (a Deadline)."""
        return self.wait_until(self.started(verb, n), timeout)

    # ---------------------------------------------------------------- secrets and invariants
    def secrets(self):
        """The capability (as built, and as served when a patch changed it) and the lease nonce."""
        with self._lock:
            served = self._served("capability", self.capability)
        return sorted(set([self.capability, served, self.lease_nonce]))

    def _all_secrets(self):
        return [s for s in set(self.secrets()) | set(self._plane_secrets()) if s and len(s) >= MIN_SECRET_CHARS]

    def describe_secret(self, secret):
        """A name for secret when it is one of this fake's, else None."""
        if secret == self.lease_nonce:
            return "the lease nonce"
        return "the capability" if secret in self.secrets() else None

    def canaries(self):
        """Text every refusal's detail carries: no output of the node may repeat it (SESSION-SECRET-3)."""
        return [self.detail_canary]

    def invariants(self):
        """SESSION-SECRET-1, CALLBACK-2, -3, -4, DEADLINE-2, HEARTBEAT-2 (D1), DISPATCH-3, SERVICE-5,
        START-1, REPORT-4, PROGRESS-1 and -6, as far as this fake's records show them."""
        calls = self.calls()
        with self._lock:
            events, allowed = list(self._progress), self._served("allowed_callback_paths", [])
        expiry = self.expiry()
        return judge(calls, events, allowed, expiry[1] if expiry else None)
