"""The crawler plane: a fake platform, control plane, source and store for one crawler job.

    plane = ctx.plane()                          # defaults make a small successful run
    result = plane.run()                         # RunResult; the node ran to its end
    plane.status_line()                          # ("CRAWLER_X", "reported") or None
    plane.stored_result()                        # the stored result (StoredObject) or None
    plane.verify_result(plane.stored_result().raw)   # [] when it keeps every CRAWLER-RESULT rule

The plane composes fakes (contract/crawler.md), each a LoopbackServer on
127.0.0.1, port 0, that owns its options, its handler, its observations and
its invariants, one module each:

                 plane.metadata  MetadataServer: identity tokens (GCE_METADATA_HOST), from
                                 conformance/planes/metadata.py (shared with the session plane)
    broker.py    plane.broker    Broker: :redeem and :fail, the bootstrap it builds
    site.py      plane.site      SourceSite: the source, redirects, transport evidence
                 plane.tripwire  Tripwire: redirects, proxies and SSRF targets point here
    child.py     plane.child     Child: the scripted normaliser (child={...}), or the node's own
                 plane.store     conformance.store.ObjectStore: the capability is one
                                 sign_put URL under crawler-quarantine/v2/
    plane.py     CrawlerPlane: the node's environment, the run, what spans fakes
    verdict.py   the account of the fetch, the status line, the secret scan
    base.py      the run's fixed identity, and the Fake base class

Faults enter every fake the same way, conformance/faults.py's vocabulary
through ``add_fault(fault, match=None)`` (no match: every request that fake
receives); a fake with routes offers a helper that returns a route's Match:

    plane.metadata.add_fault(faults.hang(), plane.metadata.identity_match())
    plane.broker.add_fault(faults.status(503), plane.broker.redeem_match(first=1))
    plane.broker.add_fault(faults.reset(after_bytes=0), plane.broker.fail_match())
    plane.site.add_fault(faults.truncate(after_bytes=1000), plane.site.source_match())
    plane.store.add_fault(faults.accept_then_hang(), Match(method="PUT"))

Options: a fake's options are the plane's keywords too (``ctx.plane(redeem_status=500,
source=b"...")`` reaches the broker and the site), and its attributes after
(``plane.broker.fail_status = 401``); see each fake's docstring.

Acting: ``start``/``wait``/``run``, ``stop_when(condition)`` with a fake's
predicate: ``metadata.started()``, ``broker.redeem_started()``,
``broker.fail_started()``, ``site.started()``, ``site.bytes_sent(n)``,
``child.started()``, and the plane's ``put_started()``, ``put_body_done()``.
Observing: each fake's own (``metadata.requests()``/``tokens()``,
``broker.redeems()``/``fails()``, ``site.requests()``, ``tripwire.connections``,
``child.record()``/``pids()``), and across fakes ``status_line``, ``puts``,
``stored``/``stored_result``/``stored_bundle``, ``transport_evidence``,
``verify_result`` (any node's result), ``reference_problems`` (the reference
node's example work), ``describe_exchanges``.

``invariants()`` states what must hold after any run, whatever the check was
about: each fake's own, then what spans fakes (see its docstring). The
documents and their rules come from ``conformance.planes.crawler_docs``, never
retyped here.
"""

from conformance.planes.crawler.base import (AUDIENCE_BASE, BROKER_PATH, BUCKET, CA_FILE, DEFAULT_SOURCE,
                                             EXECUTION, SESSION_ID, SOURCE_PATH, Fake)
from conformance.planes.crawler.broker import Broker, BrokerCall
from conformance.planes.crawler.child import Child
from conformance.planes.crawler.plane import CRAWLER_RUN_TIMEOUT_S, CrawlerPlane, StoredObject, loopback_addresses
from conformance.planes.crawler.site import GeneratedJsonl, SiteEntry, SourceHop, SourceSite, Tripwire

__all__ = ["CrawlerPlane", "make_plane", "Plane", "GeneratedJsonl", "SESSION_ID",
           "AUDIENCE_BASE", "BROKER_PATH", "BUCKET", "EXECUTION", "SOURCE_PATH", "DEFAULT_SOURCE",
           "CA_FILE", "CRAWLER_RUN_TIMEOUT_S", "Fake", "Broker",
           "BrokerCall", "SourceSite", "SiteEntry", "SourceHop", "Tripwire", "Child", "StoredObject",
           "loopback_addresses"]


def make_plane(ctx, *args, **kwargs):
    return CrawlerPlane(ctx, *args, **kwargs)


Plane = CrawlerPlane
