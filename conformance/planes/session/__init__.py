"""The session plane: a fake platform for one session worker run (contract/session.md).

    plane = ctx.plane()                                   # SessionPlane; defaults make a small live session
    source = plane.add_source(columns=["city", "temp"], rows=[["Oslo", 3], ["Lima", 19]])
    probe_id = plane.probe("sample_rows", source, limit=5)
    plane.start()                                         # Job mode: the six argv cells, a fresh TMPDIR
    report = plane.wait_report(probe_id)                  # the ControlCall of its result report
    plane.close_session()                                 # the next claim answer says "closed"
    result = plane.wait()                                 # RunResult
    plane.summary()                                       # the summary line, parsed (SESSION-EXIT-1)

The plane composes fakes, each a loopback server on 127.0.0.1, port 0, that owns its options,
its handler, its observations and its invariants, one module each:

    ../metadata.py  plane.metadata  MetadataServer: identity tokens (GCE_METADATA_HOST), shared
                                    with the crawler plane; the control plane asks it minted_for()
    control.py   plane.control   ControlPlane: the fake control plane ("Studio"): the dispatch
                                 exchange and the legacy lease, the lease it builds, the producer
                                 callbacks (start, heartbeat, events:append, probes:claim,
                                 probes/{id}:result, session-acquisitions), the probe queue and the
                                 scripted acquisitions, its records and invariants
                 plane.store     conformance.store.ObjectStore (HTTPS, STORAGE_EMULATOR_HOST): the
                                 bundles, each behind a presigned GET under
                                 /<bucket>/crawler-quarantine/v2/
                 plane.tripwire  a LoopbackServer every proxy variable names: any connection breaks
                                 SESSION-CONFIG-5 (and a descriptor URL "on another host" can point here)
    sources.py   plane.sources   SourceBook: bundles (crawler results, D27) built from rows, stored,
                                 presigned, scripted at the control plane; descriptor_patch,
                                 document_patch for the SESSION-ACQUIRE variants
    watch.py     Watch           samples a run: every process (argv, environment), every scratch file
    verdict.py   the summary line, the output rules, secrets at fakes that must never see one
    service.py   ServiceMode     Service mode: PORT, wait_listening, start_session, service_request
    plane.py     SessionPlane    the node's environment (Job and Service mode), the run, the waits,
                                 what spans fakes

Faults enter every fake one way, ``add_fault(fault, match)`` with a route helper:

    plane.control.add_fault(faults.status(503), plane.control.claim_match(first=1))
    plane.control.add_fault(refusal(409, "ATTEMPT_STALE"), plane.control.report_match())
    plane.metadata.add_fault(faults.hang(), plane.metadata.identity_match())
    plane.store.add_fault(faults.oversize(1 << 20), source.match())

Options: the fakes' (ControlPlane.OPTIONS, MetadataServer.OPTIONS) are the plane's keywords
(``ctx.plane(lifetime_s=3.0, source_ids=[...])``); the plane's own are results_bucket,
extra_env, drop_env, proxies, store_plain_http, untrusted and misnamed. Acting:
start(mode="job"|"service", env=..., argv=...), wait, run, signal, stop_when; waits: wait_for,
wait_heartbeats, wait_claims, wait_report, wait_listening; Service: start_session,
service_request. invariants() after every check.
"""

from conformance.planes.session.control import (OMIT, TEMPLATES, VERBS, Acquisition, ControlCall, ControlPlane,
                                                ProgressEvent, SourceScript, client_event_id, refusal)
from conformance.planes.session.plane import PHASE_TIMEOUT_S, SESSION_RUN_TIMEOUT_S, SessionPlane
from conformance.planes.session.service import ServiceAnswer
from conformance.planes.session.sources import (BUCKET, MAX_BUNDLE_BYTES, Bundle, Source, build_bundle,
                                                descriptor_patch, document_patch)

__all__ = ["SessionPlane", "Plane", "make_plane", "ServiceAnswer", "SESSION_RUN_TIMEOUT_S", "PHASE_TIMEOUT_S",
           "Source", "Bundle", "build_bundle", "descriptor_patch", "document_patch", "BUCKET", "MAX_BUNDLE_BYTES",
           "ControlPlane", "ControlCall", "ProgressEvent", "SourceScript", "Acquisition", "OMIT", "TEMPLATES",
           "VERBS", "client_event_id", "refusal"]


def make_plane(ctx, *args, **kwargs):
    return SessionPlane(ctx, *args, **kwargs)


Plane = SessionPlane
