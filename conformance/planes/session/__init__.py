"""The session plane's fakes (contract/session.md), one module each; the plane that composes
them is still to be written.

    control.py   ControlPlane: the fake control plane ("Studio"): the dispatch exchange and the
                 legacy lease, the lease it builds, the producer callbacks (start, heartbeat,
                 events:append, probes:claim, probes/{id}:result, session-acquisitions), the
                 probe queue and the scripted acquisitions, its records and invariants

A plane makes the control plane with a token_check that asks the metadata fake about each
identity token, gives the node STUDIO_API_ORIGIN = control.origin and the exchange URL
control.exchange_url, and serves the bundles the acquisitions name from the object store:

    control = ControlPlane(token_check=judge_token, secret_values=plane.secrets, seed=seed)
    probe_id = control.enqueue_probe("source_inspect", {"source_id": control.source_ids[0]})
    control.set_source(control.source_ids[0], bundle_url=url, bundle_bytes=raw)
    control.add_fault(faults.status(503), control.claim_match(first=1))
    control.add_fault(refusal(409, "ATTEMPT_STALE"), control.report_match())
"""

from conformance.planes.session.control import (OMIT, TEMPLATES, VERBS, Acquisition, ControlCall, ControlPlane,
                                                ProgressEvent, SourceScript, client_event_id, refusal)

__all__ = ["ControlPlane", "ControlCall", "ProgressEvent", "SourceScript", "Acquisition", "OMIT", "TEMPLATES",
           "VERBS", "client_event_id", "refusal"]
