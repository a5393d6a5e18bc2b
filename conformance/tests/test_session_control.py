"""The session control plane fake without a node: a small client written here drives it.

The client does what contract/session.md asks of a session worker, with http.client and the
test CA: exchange the dispatch, start, beat, claim, acquire, read, report and append events,
each body canonical and bound to the lease. The fake must answer as the contract says, record
what it saw, and report each invariant when a call breaks it (and only then).
"""

import hashlib
import http.client
import json
import os
import ssl
import threading
import time
import unittest
import urllib.parse
import uuid

from conformance import faults
from conformance.planes.session import OMIT, TEMPLATES, ControlPlane, client_event_id, refusal
from conformance.planes.session.control import canonical, schema_problems, utc_text
from conformance.servers import CA_FILE, MASK
from conformance.tests.contract_text import ContractText
from conformance.timeline import Timeline
from conformance.timescale import scaled
from conformance.timeouts import SHORT_TIMEOUT_S

GOOD_TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJ0ZXN0In0.c2lnbmF0dXJlLWNhbmFyeS0xMjM0NTY"
BUNDLE = b'{"acquisition_receipt":{"egress_policy_attestation":"' + b"c" * 64 + b'"},"request_digest":"' + \
    b"a" * 64 + b'","source_id":"x"}'
INTERNAL = {"attempt_started": "attempt_started", "source_probe_started": "source_probe_started",
            "source_probe_completed": "source_probe_settled", "attempt_finished": "attempt_finished"}


def tls_context():
    return ssl.create_default_context(cafile=CA_FILE)


def event_id(attempt_id, sequence, name, payload_digest):
    """The client's own derivation (SESSION-PROGRESS-1), written apart from the fake's."""
    raw = bytearray(hashlib.sha256(("%s:%d:%s:%s" % (attempt_id, sequence, name, payload_digest)).encode()).digest())
    raw[6], raw[8] = (raw[6] & 0x0F) | 0x40, (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw[:16])))


class Client(object):
    """A well-behaved session worker, one request per method; every request on its own connection."""

    def __init__(self, control):
        self.control = control
        split = urllib.parse.urlsplit(control.origin)
        self.host, self.port = split.hostname, split.port
        self.lease = None
        self.beats = self.polls = self.batches = self.sequence = 0

    def send(self, method, path, body=None, token=None, key=None, extra=(), accept=True):
        """(status, parsed answer or None, headers) of one request; body: a value (sent canonical) or bytes."""
        data = body if body is None or isinstance(body, bytes) else canonical(body)
        conn = http.client.HTTPSConnection(self.host, self.port, context=tls_context(), timeout=SHORT_TIMEOUT_S)
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            if token is not None:
                conn.putheader("Authorization", "Bearer " + token)
            if data is not None:
                conn.putheader("Content-Type", "application/json")
            if accept:
                conn.putheader("Accept", "application/json")
            if key is not None:
                conn.putheader("Idempotency-Key", key)
            for name, value in extra:
                conn.putheader(name, value)
            if data is not None:
                conn.putheader("Content-Length", str(len(data)))
            conn.endheaders(data)
            response = conn.getresponse()
            raw = response.read()
            return response.status, (json.loads(raw.decode("utf-8")) if raw else None), dict(response.getheaders())
        finally:
            conn.close()

    # -- entry
    def exchange(self, token=GOOD_TOKEN, body=None, dispatch_id=None):
        dispatch_id = dispatch_id or self.control.dispatch_id
        if body is None:
            body = {"dispatch_id": dispatch_id, "schema_version": "3.0.0"}
        path = "/internal/v3/session-worker/dispatches/%s:exchange" % dispatch_id
        status, doc, headers = self.send("POST", path, body, token)
        if status == 200:
            self.lease = doc
        return status, doc

    def legacy_lease(self, nonce=None, token=GOOD_TOKEN):
        session_id = self.control.binding["session_id"]
        body = {"lease_nonce": nonce or self.control.lease_nonce, "schema_version": "3.0.0", "session_id": session_id}
        status, doc, _headers = self.send("POST", "/internal/v3/session-worker/sessions/%s:lease" % session_id, body,
                                          token)
        if status == 200:
            self.lease = doc
        return status, doc

    # -- callbacks
    def binding(self, **extra):
        doc = dict((k, self.lease[k]) for k in ("workspace_id", "run_id", "attempt_id", "fence"))
        doc.update(schema_version="3.0.0", **extra)
        return doc

    def path(self, verb, **ids):
        ids.setdefault("attempt_id", self.lease["attempt_id"])
        return TEMPLATES[verb][1].format(**ids)

    def key(self, *parts):
        return ":".join(("session", self.lease["attempt_id"]) + tuple(str(p) for p in parts))

    def call(self, verb, body=None, key=None, token=None, ids=None, **options):
        method = TEMPLATES[verb][0]
        token = self.lease["capability"] if token is None else token
        status, doc, headers = self.send(method, self.path(verb, **(ids or {})), body, token, key, **options)
        return status, doc, headers

    def start(self, **options):
        return self.call("start", self.binding(), self.key("start"), **options)

    def heartbeat(self, number=None, **options):
        self.beats += 1
        return self.call("heartbeat", self.binding(), self.key("heartbeat", number or self.beats), **options)

    def claim(self, poll=None, **options):
        if poll is None:
            self.polls += 1
            poll = self.polls
        return self.call("claim", self.binding(session_id=self.lease["session_id"]), self.key("claim", poll),
                         **options)

    def report(self, probe_id, outcome="failed", failure_code="PROBE_FAILED", **options):
        body = self.binding(session_id=self.lease["session_id"], probe_id=probe_id, outcome=outcome,
                            failure_code=failure_code)
        return self.call("report", body, self.key("result", probe_id), ids={"probe_id": probe_id}, **options)

    def acquire(self, source_id, epoch=0, **options):
        body = self.binding(session_id=self.lease["session_id"], source_id=source_id)
        return self.call("acquire", body, self.key("acquire", source_id, epoch), **options)

    def read(self, crawler_session_id, **options):
        return self.call("read", None, None, ids={"crawler_session_id": crawler_session_id}, **options)

    def event(self, event_type, facts):
        self.sequence += 1
        payload = {"name": event_type, "facts": facts}
        payload_digest = hashlib.sha256(canonical(payload)).hexdigest()
        return self.binding(client_event_id=event_id(self.lease["attempt_id"], self.sequence, INTERNAL[event_type],
                                                     payload_digest),
                            event_type=event_type, payload_digest=payload_digest, payload=payload)

    def append(self, events, **options):
        self.batches += 1
        return self.call("append", events, self.key("event-progress", self.batches), **options)


class ControlTest(unittest.TestCase):
    def setUp(self):
        self.checked = []
        self.fakes = []

    def tearDown(self):
        for fake in self.fakes:
            fake.close()

    def make(self, **options):
        def token_check(token, audience):
            self.checked.append((token, audience))
            return token == GOOD_TOKEN
        control = ControlPlane(token_check, **options)
        self.fakes.append(control)
        return control, Client(control)

    def session(self, **options):
        """A fake and a client that holds the lease and has been answered attempt:start."""
        control, client = self.make(**options)
        self.assertEqual(client.exchange()[0], 200)
        self.assertEqual(client.start()[0], 200)
        return control, client

    def violations(self, control):
        return [v.name.split(":")[0] for v in control.invariants()]


class ExchangeTest(ControlTest):
    def test_the_first_good_exchange_answers_the_lease(self):
        control, client = self.make()
        self.assertIsNone(control.lease)  # built at the exchange, so its window starts then
        before = time.time()
        status, lease = client.exchange()
        self.assertEqual(status, 200)
        self.assertEqual(schema_problems("lease", lease), [])
        self.assertEqual(lease, control.lease)
        self.assertRegex(lease["capability"], r"^mr_cap_[A-Za-z0-9_-]{32,256}\Z")
        self.assertEqual(lease["callback_base_url"], control.origin)
        self.assertEqual(lease["allowed_callback_paths"], [t for _m, t, _s in TEMPLATES.values()])
        self.assertEqual((lease["heartbeat_interval_seconds"], lease["claim_poll_interval_seconds"]),
                         (scaled(2.0), scaled(1.0)))
        for name in ("session_id", "workspace_id", "run_id", "attempt_id"):
            self.assertEqual(str(uuid.UUID(lease[name])), lease[name])
        # The window starts at the exchange: about the scaled lifetime from now.
        expires = control.expiry()[0]
        self.assertAlmostEqual(expires - before, scaled(600.0), delta=2.0)
        self.assertRegex(lease["capability_expires_at"], r"\.[0-9]{6}Z\Z")
        self.assertEqual(self.checked, [(GOOD_TOKEN, control.origin)])
        (call,) = control.calls("exchange")
        self.assertEqual((call.bearer, call.status, call.problems), ("identity", 200, []))
        self.assertEqual(self.violations(control), [])

    def test_a_second_exchange_finds_the_dispatch_claimed(self):
        control, client = self.make()
        self.assertEqual(client.exchange()[0], 200)
        status, doc = client.exchange()
        self.assertEqual((status, doc["code"]), (409, "RESEARCH_SESSION_DISPATCH_ALREADY_CLAIMED"))
        self.assertEqual(schema_problems("error", doc), [])
        self.assertIn("SESSION-DISPATCH-3", self.violations(control))

    def test_a_dispatch_closed_or_claimed_up_front(self):
        for state, code in (("closed", "RESEARCH_SESSION_DISPATCH_CLOSED"),
                            ("claimed", "RESEARCH_SESSION_DISPATCH_ALREADY_CLAIMED")):
            with self.subTest(state=state):
                control, client = self.make(dispatch_state=state)
                status, doc = client.exchange()
                self.assertEqual((status, doc["code"]), (409, code))
                self.assertIsNone(control.lease)

    def test_a_bad_token_is_refused_and_consumes_nothing(self):
        control, client = self.make()
        self.assertEqual(client.exchange(token="not-the-token")[:1], (401,))
        status, doc, _h = client.send("POST", urllib.parse.urlsplit(control.exchange_url).path,
                                      {"dispatch_id": control.dispatch_id, "schema_version": "3.0.0"})
        self.assertEqual((status, doc["code"]), (401, "AUTHORIZATION_DENIED"))
        self.assertEqual([c.bearer for c in control.calls("exchange")], ["refused", None])
        self.assertEqual(client.exchange()[0], 200)

    def test_a_wrong_body_or_dispatch_is_refused(self):
        control, client = self.make()
        other = str(uuid.uuid4())
        cases = [({"dispatch_id": other, "schema_version": "3.0.0"}, None, 400, "REQUEST_INVALID"),
                 ({"dispatch_id": control.dispatch_id, "schema_version": "2.0.0"}, None, 400, "REQUEST_INVALID"),
                 (b"{not json", None, 400, "REQUEST_INVALID"),
                 (None, other, 404, "NOT_FOUND")]
        for body, dispatch_id, status, code in cases:
            with self.subTest(body=body, dispatch_id=dispatch_id):
                got, doc = client.exchange(body=body, dispatch_id=dispatch_id)
                self.assertEqual((got, doc["code"]), (status, code))
        self.assertIsNone(control.lease)
        self.assertEqual(client.exchange()[0], 200)

    def test_the_legacy_lease_needs_the_nonce(self):
        control, client = self.make()
        status, doc = client.legacy_lease(nonce="x" * 40)
        self.assertEqual((status, doc["code"]), (403, "AUTHORIZATION_DENIED"))
        status, lease = client.legacy_lease()
        self.assertEqual(status, 200)
        self.assertEqual(lease["session_id"], control.binding["session_id"])
        self.assertIn(control.lease_nonce, control.secrets())
        self.assertEqual(self.checked[-1], (GOOD_TOKEN, control.origin))

    def test_lease_patch_changes_what_is_served(self):
        control, client = self.make(lease_patch=lambda lease: lease.update(fence=8),
                                    heartbeat_s=0.8, allowed_paths=[TEMPLATES[v][1] for v in ("start", "claim",
                                                                                                "report")])
        status, lease = client.exchange()
        self.assertEqual((lease["fence"], lease["heartbeat_interval_seconds"]), (8, 0.8))
        self.assertEqual(len(lease["allowed_callback_paths"]), 3)
        self.assertEqual(client.start()[0], 200)  # the served fence is the one bodies must repeat


class SessionTest(ControlTest):
    def test_a_body_past_the_record_bound_is_counted_not_kept(self):
        from conformance.planes.session.control import MAX_RECORDED_BODY_BYTES
        control, client = self.session()
        sent = b"[" + b" " * (MAX_RECORDED_BODY_BYTES + 4096) + b"]"
        status, _doc, _headers = client.call("append", sent, client.key("event-progress", 1))
        self.assertEqual(status, 400)
        call = control.calls("append")[-1]
        self.assertEqual((len(call.body), call.body_total), (MAX_RECORDED_BODY_BYTES, len(sent)))

    def test_a_result_with_a_fraction_is_a_report_like_any_other(self):
        control, client = self.session()
        source = control.source_ids[0]
        probe_id = control.enqueue_probe("evaluate_expression",
                                         {"source_id": source, "expression": {"aggregate": "avg", "column": "n"}})
        self.assertEqual(client.claim()[0], 200)
        result = ContractText("session").example("valid", "probe-result-evaluate-avg-fraction.json")
        result["source_id"] = source
        body = client.binding(session_id=client.lease["session_id"], probe_id=probe_id, outcome="succeeded",
                              result=result)
        status, _doc, _headers = client.call("report", body, client.key("result", probe_id),
                                             ids={"probe_id": probe_id})
        self.assertEqual(status, 200)
        self.assertEqual(control.reports(probe_id)[0].doc["result"]["value"], 500488.5)
        self.assertEqual(self.violations(control), [])

    def test_a_whole_little_session(self):
        control, client = self.make()
        source = control.source_ids[0]
        control.set_source(source, bundle_url="https://127.0.0.1:1/bucket/result?sig=x", bundle_bytes=BUNDLE,
                           ready_after_reads=2)
        probe_id = control.enqueue_probe("sample_rows", {"source_id": source})
        self.assertEqual(client.exchange()[0], 200)
        self.assertEqual(client.start()[:2], (200, {}))
        started = client.event("attempt_started", {"role": "session", "stage_total": 0})
        self.assertEqual(client.append([started])[0], 200)
        self.assertEqual(client.heartbeat()[0], 200)
        self.assertEqual(client.heartbeat()[0], 200)
        status, answer, _h = client.claim()
        self.assertEqual(status, 200)
        self.assertEqual(schema_problems("claim-answer", answer), [])
        self.assertEqual((answer["session_state"], answer["claimed"], answer["claim_poll_interval_seconds"]),
                         ("live", True, scaled(1.0)))
        self.assertEqual(answer["probe"], {"probe_id": probe_id, "probe_kind": "sample_rows", "ordinal": 1,
                                           "request": {"source_id": source}})
        self.assertEqual(schema_problems("probe", answer["probe"]), [])
        status, created, _h = client.acquire(source)
        self.assertEqual((status, created["status"]), (201, "pending"))
        self.assertEqual(schema_problems("acquisition", created), [])
        self.assertEqual((created["research_session_id"], created["producer_fence"], created["attempt_id"]),
                         (client.lease["session_id"], client.lease["fence"], client.lease["attempt_id"]))
        csid = created["crawler_session_id"]
        self.assertEqual(client.read(csid)[1]["status"], "pending")
        status, ready, _h = client.read(csid)
        self.assertEqual((status, ready["status"]), (200, "result_ready"))
        self.assertEqual(schema_problems("acquisition", ready), [])
        download = ready["result_download"]
        self.assertEqual((download["url"], download["bundle_size_bytes"], download["bundle_sha256"]),
                         ("https://127.0.0.1:1/bucket/result?sig=x", len(BUNDLE), hashlib.sha256(BUNDLE).hexdigest()))
        self.assertEqual((ready["request_digest"], ready["egress_policy_attestation"]), ("a" * 64, "c" * 64))
        self.assertEqual(download["request_digest"], ready["request_digest"])
        self.assertEqual(client.report(probe_id)[:2], (200, {}))
        status, doc, _h = client.report(probe_id)
        self.assertEqual((status, doc["code"]), (409, "RESEARCH_PROBE_ALREADY_SETTLED"))
        probe_started = client.event("source_probe_started", {"source_id": source, "probe_kind": "sample_rows",
                                                              "ordinal": 1})
        settled = client.event("source_probe_completed", {
            "source_id": source, "probe_kind": "sample_rows", "ordinal": 1, "outcome": "failed", "code": "PROBE_FAILED",
            "display_code": "PROBE_FAILED", "retry_after_seconds": 0, "bytes": 0})
        finished = client.event("attempt_finished", {"outcome": "closed"})
        self.assertEqual(client.append([probe_started, settled, finished])[0], 200)

        heartbeats = control.heartbeats()
        self.assertEqual([c.key for c in heartbeats], [client.key("heartbeat", 1), client.key("heartbeat", 2)])
        self.assertEqual([c.problems for c in control.calls() if c.problems], [])
        self.assertEqual([c.status for c in control.calls()], [200, 200, 200, 200, 200, 200, 201, 200, 200, 200, 409,
                                                                200])
        self.assertEqual([c.probe["probe_id"] for c in control.claims()], [probe_id])
        reports = control.reports(probe_id)
        self.assertEqual([c.status for c in reports], [200, 409])
        self.assertEqual(reports[0].body, reports[1].body)
        events = control.progress_events()
        self.assertEqual([(e.event_type, e.sequence, e.problems) for e in events],
                         [("attempt_started", 1, []), ("source_probe_started", 2, []),
                          ("source_probe_completed", 3, []), ("attempt_finished", 4, [])])
        (acquisition,) = control.acquisitions()
        self.assertEqual((acquisition.crawler_session_id, acquisition.creates, acquisition.reads), (csid, 1, 2))
        self.assertEqual(control.invariants(), [])

    def test_a_stale_fence_refuses_every_fenced_call(self):
        control, client = self.session()
        self.assertEqual(client.heartbeat()[0], 200)
        control.stale_fence()
        for verb, send in (("heartbeat", client.heartbeat), ("claim", client.claim)):
            with self.subTest(verb=verb):
                status, doc, _h = send()
                self.assertEqual((status, doc["code"]), (409, "ATTEMPT_FENCE_STALE"))
        status, doc, _h = client.append([client.event("attempt_finished", {"outcome": "stopped"})])
        self.assertEqual((status, doc["code"]), (409, "ATTEMPT_FENCE_STALE"))
        self.assertEqual(self.violations(control), [])

    def test_a_fence_newer_than_the_attempts_is_invalid(self):
        control, client = self.session()
        body = dict(client.binding(), fence=client.lease["fence"] + 1)
        status, doc, _h = client.call("heartbeat", body, client.key("heartbeat", 1))
        self.assertEqual((status, doc["code"]), (400, "REQUEST_INVALID"))

    def test_the_next_claim_carries_a_closed_session(self):
        for state in ("closed", "failed"):
            with self.subTest(state=state):
                control, client = self.session()
                control.enqueue_probe("source_inspect", {"source_id": control.source_ids[0]})
                control.close_session(state)
                status, answer, _h = client.claim()
                self.assertEqual((status, answer["session_state"], answer["claimed"]), (200, state, False))
                self.assertEqual(control.handed_probes(), [])

    def test_an_idle_claim_and_its_interval(self):
        control, client = self.session()
        status, answer, _h = client.claim()
        self.assertEqual(answer, {"session_state": "live", "claimed": False,
                                  "claim_poll_interval_seconds": scaled(1.0)})
        for value, shown in ((0.7, 0.7), (-1, -1), ("2", "2"), (None, None)):
            control.set_claim_interval(value)
            self.assertEqual(client.claim()[1]["claim_poll_interval_seconds"], shown)
        control.set_claim_interval(OMIT)
        self.assertNotIn("claim_poll_interval_seconds", client.claim()[1])

    def test_claim_patch_changes_the_answer(self):
        control, client = self.session(claim_patch=lambda answer: {"claimed": "yes"})
        self.assertEqual(client.claim()[1], {"claimed": "yes"})

    def test_a_claim_resent_under_its_key_gets_its_probe_again(self):
        control, client = self.session()
        first = control.enqueue_probe("source_inspect", {"source_id": control.source_ids[0]})
        second = control.enqueue_probe("source_inspect", {"source_id": control.source_ids[0]}, ordinal=9)
        self.assertEqual(client.claim(poll=1)[1]["probe"]["probe_id"], first)
        self.assertEqual(client.claim(poll=1)[1]["probe"]["probe_id"], first)
        probe = client.claim(poll=2)[1]["probe"]
        self.assertEqual((probe["probe_id"], probe["ordinal"]), (second, 9))
        self.assertEqual([c.replayed for c in control.claims()], [False, True, False])
        self.assertEqual(client.claim(poll=3)[1]["claimed"], False)
        control.enqueue_probe("source_inspect", {"source_id": control.source_ids[0]})
        self.assertEqual(client.claim(poll=4)[1]["probe"]["ordinal"], 3)  # the third probe enqueued

    def test_a_report_for_a_probe_never_handed_out(self):
        control, client = self.session()
        status, doc, _h = client.report(str(uuid.uuid4()))
        self.assertEqual((status, doc["code"]), (404, "NOT_FOUND"))

    def test_a_report_whose_body_names_another_probe(self):
        control, client = self.session()
        probe_id = control.enqueue_probe("source_inspect", {"source_id": control.source_ids[0]})
        client.claim()
        body = client.binding(session_id=client.lease["session_id"], probe_id=str(uuid.uuid4()), outcome="failed",
                              failure_code="PROBE_FAILED")
        status, doc, _h = client.call("report", body, client.key("result", probe_id), ids={"probe_id": probe_id})
        self.assertEqual((status, doc["code"]), (400, "REQUEST_INVALID"))
        self.assertEqual(client.report(probe_id)[0], 200)


class RefusalTest(ControlTest):
    def assertRefused(self, answer, status, code):
        self.assertEqual((answer[0], answer[1]["code"]), (status, code))
        self.assertEqual(schema_problems("error", answer[1]), [])

    def test_callbacks_check_the_bearer(self):
        control, client = self.session()
        self.assertRefused(client.heartbeat(token="mr_cap_" + "x" * 40), 401, "AUTHORIZATION_DENIED")
        self.assertRefused(client.call("heartbeat", client.binding(), client.key("heartbeat", 9), token=GOOD_TOKEN),
                           401, "AUTHORIZATION_DENIED")
        status, doc, _h = client.send("POST", client.path("heartbeat"), client.binding())
        self.assertEqual((status, doc["code"]), (401, "AUTHORIZATION_DENIED"))
        self.assertEqual([c.bearer for c in control.heartbeats()], ["refused", "refused", None])

    def test_a_callback_before_any_lease(self):
        control, client = self.make()
        client.lease = {"attempt_id": control.binding["attempt_id"], "capability": control.capability,
                        "workspace_id": "w", "run_id": "r", "fence": 7}
        self.assertRefused(client.start(), 401, "AUTHORIZATION_DENIED")

    def test_another_attempt_or_a_path_the_lease_does_not_allow(self):
        control, client = self.session(allowed_paths=[TEMPLATES[v][1] for v in ("start", "claim", "report")])
        self.assertRefused(client.call("claim", client.binding(session_id=client.lease["session_id"]),
                                       client.key("claim", 1), ids={"attempt_id": str(uuid.uuid4())}),
                           403, "AUTHORIZATION_DENIED")
        self.assertRefused(client.heartbeat(), 403, "AUTHORIZATION_DENIED")

    def test_an_expired_capability(self):
        control, client = self.make(lease_patch=lambda lease: lease.update(capability_expires_at=utc_text(time.time()
                                                                                                          - 1)))
        client.exchange()
        self.assertRefused(client.start(), 401, "AUTHORIZATION_DENIED")
        self.assertEqual(control.calls("start")[0].bearer, "capability")

    def test_bodies_that_do_not_hold(self):
        control, client = self.session()
        other = str(uuid.uuid4())
        for name, body in (("another run", client.binding(run_id=other)),
                           ("a generation", client.binding(generation=3)),
                           ("not JSON", b"{"),
                           ("a duplicate key", canonical(client.binding())[:-1] + b',"fence":7}')):
            with self.subTest(body=name):
                self.assertRefused(client.call("heartbeat", body, client.key("heartbeat", 1)), 400, "REQUEST_INVALID")

    def test_unknown_routes_and_methods(self):
        control, client = self.session()
        status, doc, _h = client.send("POST", "/internal/v3/producer/attempts/%s:complete" % client.lease["attempt_id"],
                                      client.binding(), client.lease["capability"])
        self.assertEqual((status, doc["code"]), (404, "NOT_FOUND"))
        status, doc, _h = client.send("GET", client.path("claim"), None, client.lease["capability"])
        self.assertEqual((status, doc["code"]), (405, "METHOD_NOT_ALLOWED"))
        self.assertEqual([c.verb for c in control.calls()][-2:], ["other", "claim"])

    def test_every_refusal_detail_carries_the_canary(self):
        control, client = self.session()
        status, doc, _h = client.heartbeat(token="nope")
        self.assertIn(control.canaries()[0], doc["detail"])


class AcquisitionTest(ControlTest):
    def setUp(self):
        ControlTest.setUp(self)
        self.control, self.client = self.session(source_ids=[str(uuid.uuid4()), str(uuid.uuid4())])
        self.source = self.control.source_ids[0]

    def script(self, **options):
        self.control.set_source(self.source, bundle_url="https://127.0.0.1:1/b/o?s=1", bundle_bytes=b"bytes",
                                **options)

    def test_ready_at_once_and_the_same_key_shares_one_acquisition(self):
        self.script()
        first = self.client.acquire(self.source)[1]
        again = self.client.acquire(self.source)[1]
        self.assertEqual(first["status"], "result_ready")
        self.assertEqual(again["crawler_session_id"], first["crawler_session_id"])
        self.assertEqual([c.replayed for c in self.control.calls("acquire")], [False, True])
        self.assertEqual(len(self.control.acquisitions()), 1)
        self.assertEqual(self.client.acquire(self.source, epoch=1)[0], 201)
        self.assertEqual(len(self.control.acquisitions()), 2)

    def test_an_acquisition_that_expires_once_on_read(self):
        self.script(expire_once=True)
        created = self.client.acquire(self.source)[1]
        self.assertEqual(created["status"], "pending")
        status, doc, _h = self.client.read(created["crawler_session_id"])
        self.assertEqual((status, doc["code"]), (410, "CRAWLER_SESSION_EXPIRED"))
        reopened = self.client.acquire(self.source, epoch=1)[1]
        self.assertEqual(reopened["status"], "result_ready")
        self.assertNotEqual(reopened["crawler_session_id"], created["crawler_session_id"])

    def test_an_acquisition_that_expires_at_its_create(self):
        self.script(expire_once="create", expire_acquisitions=2)
        for epoch in (0, 0, 1):
            status, doc, _h = self.client.acquire(self.source, epoch=epoch)
            self.assertEqual((status, doc["code"]), (410, "CRAWLER_SESSION_EXPIRED"))
        self.assertEqual(self.client.acquire(self.source, epoch=2)[0], 201)

    def test_failed_refused_forbidden_and_unscripted_sources(self):
        self.script(fail_code="RESEARCH_SOURCE_UNACQUIRABLE", ready_after_reads=1)
        created = self.client.acquire(self.source)[1]
        read = self.client.read(created["crawler_session_id"])[1]
        self.assertEqual((created["status"], read["status"], read["failure_code"]),
                         ("pending", "failed", "RESEARCH_SOURCE_UNACQUIRABLE"))
        self.assertNotIn("result_download", read)
        self.script(refuse=(429, "AGENT_BUDGET_EXCEEDED"), retry_after_s=7)
        status, doc, headers = self.client.acquire(self.source)
        self.assertEqual((status, doc["code"], headers.get("Retry-After")), (429, "AGENT_BUDGET_EXCEEDED", "7"))
        status, doc, _h = self.client.acquire(str(uuid.uuid4()))
        self.assertEqual((status, doc["code"]), (403, "RESEARCH_SOURCE_FORBIDDEN"))
        unscripted = self.client.acquire(self.control.source_ids[1])[1]
        self.assertEqual((unscripted["status"], unscripted["failure_code"]), ("failed", "RESEARCH_SOURCE_UNACQUIRABLE"))

    def test_never_ready_and_unknown_reads(self):
        self.script(ready_after_reads=None)
        created = self.client.acquire(self.source)[1]
        for _ in range(3):
            self.assertEqual(self.client.read(created["crawler_session_id"])[1]["status"], "pending")
        status, doc, _h = self.client.read(str(uuid.uuid4()))
        self.assertEqual((status, doc["code"]), (404, "NOT_FOUND"))

    def test_a_patch_breaks_one_binding(self):
        self.script(patch=lambda doc: doc.update(producer_fence=1))
        self.assertEqual(self.client.acquire(self.source)[1]["producer_fence"], 1)

    def test_a_ready_source_needs_its_bundle(self):
        with self.assertRaises(ValueError):
            self.control.set_source(self.source)


class FaultTest(ControlTest):
    def test_a_fault_on_the_first_claim_only(self):
        control, client = self.session()
        probe_id = control.enqueue_probe("source_inspect", {"source_id": control.source_ids[0]})
        rule = control.add_fault(faults.status(503), control.claim_match(first=1))
        self.assertEqual(client.heartbeat()[0], 200)
        self.assertEqual(client.claim(poll=1)[0], 503)
        status, answer, _h = client.claim(poll=1)
        self.assertEqual((status, answer["probe"]["probe_id"]), (200, probe_id))
        self.assertEqual(client.heartbeat()[0], 200)
        self.assertEqual([c.status for c in control.claims()], ["fault", 200])
        self.assertEqual((rule.applied, [c.replayed for c in control.claims()]), (1, [False, False]))

    def test_a_refusal_fault_carries_the_envelope(self):
        control, client = self.session()
        control.enqueue_probe("source_inspect", {"source_id": control.source_ids[0]})
        control.add_fault(refusal(409, "ATTEMPT_STALE", retry_after_s=2), control.report_match())
        probe_id = client.claim()[1]["probe"]["probe_id"]
        status, doc, headers = client.report(probe_id)
        self.assertEqual((status, doc["code"], headers.get("Retry-After")), (409, "ATTEMPT_STALE", "2"))
        self.assertEqual(client.report(probe_id)[0], 409)  # still refused: the probe is not settled by a fault
        self.assertEqual(control.reports()[0].status, "fault")

    def test_each_route_helper_matches_its_verb_only(self):
        control, client = self.session()
        source = control.source_ids[0]
        control.set_source(source, bundle_url="https://127.0.0.1:1/b/o?s=1", bundle_bytes=b"x", ready_after_reads=1)
        control.enqueue_probe("source_inspect", {"source_id": source})
        probe_id = client.claim()[1]["probe"]["probe_id"]
        csid = client.acquire(source)[1]["crawler_session_id"]
        sends = {"heartbeat": client.heartbeat, "claim": client.claim, "report": lambda: client.report(probe_id),
                 "append": lambda: client.append([client.event("attempt_finished", {"outcome": "closed"})]),
                 "acquire": lambda: client.acquire(source), "read": lambda: client.read(csid)}
        helpers = {"heartbeat": control.heartbeat_match, "claim": control.claim_match, "report": control.report_match,
                   "append": control.events_match, "acquire": control.acquisition_match,
                   "read": control.acquisition_read_match}
        for verb, helper in helpers.items():
            with self.subTest(verb=verb):
                rule = control.add_fault(faults.status(599), helper(first=1))
                for other, send in sends.items():
                    if other != verb:
                        self.assertNotEqual(send()[0], 599, other)
                self.assertEqual(sends[verb]()[0], 599)
                self.assertEqual(rule.applied, 1)

    def test_a_request_phase_fault_is_still_a_call(self):
        control, client = self.session()
        control.add_fault(faults.status(503), control.heartbeat_match(phase="request", first=1))
        self.assertEqual(client.heartbeat()[0], 503)
        (call,) = control.heartbeats()
        self.assertEqual((call.status, call.key, call.header("authorization")), ("fault", client.key("heartbeat", 1),
                                                                                  MASK))

    def test_exchange_and_lease_helpers(self):
        control, client = self.make()
        control.add_fault(faults.status(502), control.exchange_match(first=1))
        self.assertEqual(client.legacy_lease(nonce="n" * 40)[0], 403)  # not the exchange: not faulted
        self.assertEqual(client.exchange()[0], 502)
        self.assertIsNone(control.lease)  # a fault answered: nothing was issued
        self.assertEqual(client.exchange()[0], 200)
        control, client = self.make()
        control.add_fault(faults.status(502), control.lease_match(first=1))
        self.assertEqual(client.exchange(token="nope")[0], 401)
        self.assertEqual(client.legacy_lease()[0], 502)
        self.assertEqual(client.legacy_lease()[0], 200)


class InvariantTest(ControlTest):
    """Each invariant: reported when a call breaks it; the whole session test shows them silent."""

    def assertReported(self, control, clause):
        found = self.violations(control)
        self.assertIn(clause, found)
        self.assertEqual(found, [clause], control.invariants())

    def test_secret_1_the_capability_in_another_header(self):
        control, client = self.session()
        client.heartbeat(extra=[("X-Debug", client.lease["capability"])])
        self.assertReported(control, "SESSION-SECRET-1")

    def test_secret_1_the_identity_token_on_a_callback(self):
        control, client = self.session(secret_values=lambda: [GOOD_TOKEN])
        client.heartbeat(token=GOOD_TOKEN)
        self.assertReported(control, "SESSION-SECRET-1")

    def test_callback_2_a_path_the_lease_does_not_allow(self):
        control, client = self.session(allowed_paths=[TEMPLATES[v][1] for v in ("start", "claim", "report")])
        client.heartbeat()
        self.assertReported(control, "SESSION-CALLBACK-2")

    def test_callback_3_headers(self):
        control, client = self.session()
        client.heartbeat(accept=False)
        self.assertReported(control, "SESSION-CALLBACK-3")

    def test_callback_4_a_body_that_is_not_canonical(self):
        control, client = self.session()
        self.assertEqual(client.call("heartbeat", json.dumps(client.binding()).encode(),
                                     client.key("heartbeat", 1))[0], 200)
        self.assertReported(control, "SESSION-CALLBACK-4")

    def test_deadline_2_a_call_after_the_expiry(self):
        control, client = self.make(lease_patch=lambda lease: lease.update(capability_expires_at=utc_text(time.time()
                                                                                                          - 1)))
        client.exchange()
        client.start()
        # The refused start is the only capability call: late, and yet first and once.
        self.assertReported(control, "SESSION-DEADLINE-2")

    def test_heartbeat_2_two_beats_with_one_key(self):
        control, client = self.session()
        client.heartbeat(number=1)
        client.heartbeat(number=1)
        self.assertReported(control, "SESSION-HEARTBEAT-2")

    def test_dispatch_3_two_exchanges(self):
        control, client = self.make()
        client.exchange()
        client.exchange(token="wrong")
        self.assertReported(control, "SESSION-DISPATCH-3")

    def test_dispatch_3_an_exchange_with_another_header(self):
        control, client = self.make()
        path = urllib.parse.urlsplit(control.exchange_url).path
        status, _doc, _h = client.send("POST", path, {"dispatch_id": control.dispatch_id, "schema_version": "3.0.0"},
                                       GOOD_TOKEN, extra=[("X-Trace", "1")])
        self.assertEqual(status, 200)
        self.assertEqual(control.calls("exchange")[0].header_problems,
                         ["headers are not exactly Host, Authorization, Content-Type, Accept, Content-Length"])
        self.assertReported(control, "SESSION-DISPATCH-3")

    def test_service_5_two_lease_requests(self):
        control, client = self.make()
        client.legacy_lease()
        client.legacy_lease()
        self.assertReported(control, "SESSION-SERVICE-5")

    def test_start_1_a_heartbeat_before_the_start(self):
        control, client = self.make()
        client.exchange()
        client.heartbeat()
        client.start()
        self.assertReported(control, "SESSION-START-1")

    def test_start_1_two_starts(self):
        control, client = self.session()
        client.start()
        self.assertReported(control, "SESSION-START-1")

    def test_start_1_an_append_may_follow_a_start_never_answered(self):
        control, client = self.make()
        client.exchange()
        control.add_fault(faults.reset(after_bytes=0), control.start_match(phase="request"))
        with self.assertRaises((ConnectionError, http.client.HTTPException, ssl.SSLError, OSError)):
            client.start()
        self.assertTrue(control.wait_until(lambda: control.calls("start")[0].exchange.t_end is not None,
                                           SHORT_TIMEOUT_S))
        client.append([client.event("attempt_finished", {"outcome": "stopped"})])
        self.assertEqual(self.violations(control), [])
        client.heartbeat()
        self.assertReported(control, "SESSION-START-1")

    def test_report_4_a_resend_with_other_bytes(self):
        control, client = self.session()
        control.enqueue_probe("source_inspect", {"source_id": control.source_ids[0]})
        probe_id = client.claim()[1]["probe"]["probe_id"]
        client.report(probe_id, failure_code="PROBE_FAILED")
        client.report(probe_id, failure_code="SANDBOX_TIMEOUT")
        self.assertReported(control, "SESSION-REPORT-4")

    def test_progress_1_an_event_whose_digest_does_not_recompute(self):
        control, client = self.session()
        event = client.event("attempt_started", {"role": "session", "stage_total": 0})
        event["payload_digest"] = "0" * 64
        self.assertEqual(client.append([event])[0], 200)  # recorded, not refused
        self.assertReported(control, "SESSION-PROGRESS-1")

    def test_progress_1_an_event_id_from_another_attempt(self):
        control, client = self.session()
        event = client.event("attempt_started", {"role": "session", "stage_total": 0})
        event["client_event_id"] = event_id(str(uuid.uuid4()), 1, "attempt_started", event["payload_digest"])
        client.append([event])
        self.assertReported(control, "SESSION-PROGRESS-1")

    def test_progress_6_an_event_numbered_257(self):
        control, client = self.session()
        client.sequence = 256
        client.append([client.event("attempt_finished", {"outcome": "closed"})])
        self.assertEqual(control.progress_events()[0].sequence, 257)
        self.assertReported(control, "SESSION-PROGRESS-6")


class ObservationTest(ControlTest):
    def test_secrets_never_reach_the_transcript(self):
        control, client = self.session(secret_values=lambda: [GOOD_TOKEN])
        client.heartbeat(extra=[("X-Debug", client.lease["capability"])])
        dump = repr(control.transcript) + repr([(c.headers, c.body, c.doc) for c in control.calls()])
        for secret in control.secrets() + [GOOD_TOKEN]:
            self.assertNotIn(secret, dump)
        self.assertIn(("X-Debug", MASK), control.transcript[-1].headers)
        self.assertEqual(control.calls("heartbeat")[0].header("authorization"), "Bearer " + MASK)
        self.assertEqual(control.describe_secret(client.lease["capability"]), "the capability")
        self.assertEqual(control.describe_secret(control.lease_nonce), "the lease nonce")

    def test_a_secret_in_a_body_is_not_kept(self):
        control, client = self.make()
        client.legacy_lease()
        client.start()
        nonce, capability = control.lease_nonce, client.lease["capability"]
        client.heartbeat(number=capability)
        client.call("claim", client.binding(session_id=capability), client.key("claim", 1))
        lease_call, _start, beat, claim = control.calls()
        self.assertNotIn(nonce.encode(), lease_call.body)
        self.assertEqual(lease_call.doc["lease_nonce"], MASK)
        self.assertEqual(lease_call.status, 200)  # judged on what was sent, before the mask
        self.assertNotIn(capability, repr(beat.headers) + repr(claim.body) + repr(claim.doc))
        self.assertEqual(claim.doc["session_id"], MASK)
        self.assertIn(("idempotency-key", "capability"), beat.secret_places)
        self.assertIn(("body", "capability"), claim.secret_places)
        self.assertEqual(self.violations(control), ["SESSION-SECRET-1", "SESSION-CALLBACK-3", "SESSION-CALLBACK-4"])

    def test_the_event_id_of_the_contracts_examples(self):
        folder = os.path.join(ContractText("session").example_dir, "valid")
        for sequence, name in enumerate(("attempt-started", "probe-started", "probe-completed-ok",
                                         "attempt-finished-stopped"), 1):
            with open(os.path.join(folder, "progress-event-%s.json" % name)) as handle:
                event = json.load(handle)
            digest = hashlib.sha256(canonical(event["payload"])).hexdigest()
            internal = INTERNAL[event["event_type"]]
            self.assertEqual(digest, event["payload_digest"])
            self.assertEqual(client_event_id(event["attempt_id"], sequence, internal, digest), event["client_event_id"])

    def test_a_timeline_and_waits_take_the_fake(self):
        control, client = self.session()
        timeline = Timeline([control])
        self.assertFalse(control.started("heartbeat")())
        client.heartbeat()
        self.assertTrue(control.wait_calls("heartbeat", 1, SHORT_TIMEOUT_S))
        self.assertEqual(timeline.count(fake="control", path="*:heartbeat"), 1)
        self.assertEqual([c.verb for c in control.calls()], ["exchange", "start", "heartbeat"])

    def test_queries_are_snapshots_taken_while_calls_arrive(self):
        control, client = self.session()
        queries = (control.calls, control.heartbeats, control.progress_events, control.acquisitions,
                   control.handed_probes, control.invariants)
        seen, failures, stop = [], [], threading.Event()

        def watch():
            while not stop.is_set():
                try:
                    seen.append([len(query()) for query in queries])
                except Exception as exc:  # a query that cannot run beside the handler
                    failures.append(exc)
        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            for _ in range(5):
                self.assertEqual(client.heartbeat()[0], 200)
                self.assertEqual(client.append([client.event("attempt_finished", {"outcome": "closed"})])[0], 200)
        finally:
            stop.set()
            watcher.join(SHORT_TIMEOUT_S)
        self.assertEqual((failures, len(control.heartbeats())), ([], 5))
        self.assertTrue(seen)
        for query in queries[:-1]:
            with self.subTest(query=query.__name__):
                got = query()
                got.append("mine")
                self.assertNotIn("mine", query())

if __name__ == "__main__":
    unittest.main()
