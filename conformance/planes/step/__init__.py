"""The step plane: a fake LSPO platform for one external step.

    plane = ctx.step_plane(inputs=[Input("a.csv", b"x,y\\n1,2\\n")])
    proc = plane.start()                 # the node, as PID 1 when possible
    result = plane.wait(proc)            # RunResult, then collection
    plane.marker                         # the parsed completion marker, or None

The plane composes fakes (contract/step.md), each owning its options, its
behaviour, its observations and its invariants, one module each, in the order
the platform plays them:

    job.py        plane.job        Job: the manifest (an object in the store, or a
                                   local file) and the pinned inputs; the identity
                                   variables
    agent.py      plane.agent      CredentialsAgent: writes the credentials envelope
                                   (every URL presigned with its current token) and
                                   rotates, rewrites or removes it under the node
    collector.py  plane.collector  Collector: staging (presigned POST under
                                   KEY_PREFIX, or a directory) and collection after
                                   exit: marker, result.json, every listed object
                                   re-read, what a collector refuses
                  plane.store      conformance.store.ObjectStore: objects, tokens,
                                   presigned GET and POST
                  plane.proxy      conformance.proxy.ProxyServer (proxy=True), or None
    plane.py      StepPlane: the node's environment, the run, the invariants across fakes
    base.py       the run's fixed identity (execution 41, attempt 2, generation 3),
                  the names in staging, Input

Faults enter the servers the one way every fake takes them, conformance/faults.py's
vocabulary through ``add_fault(fault, match=None)``:

    plane.store.add_fault(faults.status(503), Match(method="GET", key="inputs/*"))
    plane.proxy.add_fault(faults.reset(after_bytes=0))

Peer variety (contract/step.md, area PEER): the agent's ``dialect`` and the job's
``manifest_dialect`` rewrite the envelope and the manifest as the upstream's real peers
may write them (ENVELOPE_DIALECTS, MANIFEST_DIALECTS, built on conformance/dialect.py);
the collector's ``post_answer`` has the store answer uploads 200 or 201; the plane's
``proxy_form`` and ``proxy_reply`` write the proxy's variables and its CONNECT answer in
the forms urllib read.

Options: a fake's options are the plane's keywords too (``ctx.step_plane(inputs=...,
expires_in_s=3, staging="local_path")`` reaches the job, the agent and the
collector), and its attributes after (``plane.agent.envelope_patch``); see each
fake's docstring.

Acting: ``start``/``wait``/``run``; ``stop_when(predicate)`` on a store event;
``wait_event``; the agent's ``rotate()``, ``write()``, ``rewrite_same()``,
``remove()``. Observing: each fake's own (``job.gets(item)``/``input_gets()``,
``agent.token``/``path``/``envelope()``, ``collector.marker_posts()``/
``data_posts()``/``marker_relpaths()``/``read_stored()``...), and on the plane
what the run shows across them: ``result``, ``marker``/``marker_raw``/``report``/
``report_raw`` (the collector's), ``progress()``, ``exchanges()``,
``describe_exchanges()``, ``secrets()``.

``invariants()`` states what must hold after any run, whatever the check was
about: the collector's own, then what spans fakes (see its docstring).
"""

from conformance.planes.step.agent import ENVELOPE_DIALECTS, CredentialsAgent
from conformance.planes.step.base import (CA_FILE, EXIT_STATUS, IDENTITY, IDENTITY_ENV, KEY_PREFIX, MARKER_NAME,
                                          OMIT, RESULT_NAME, Input, is_data_key, iso_utc, sha256_hex)
from conformance.planes.step.collector import Collector
from conformance.planes.step.job import MANIFEST_DIALECTS, MANIFEST_KEY, Job
from conformance.planes.step.plane import PROXY_FORMS, PROXY_VARIABLES, StepPlane

__all__ = ["StepPlane", "make_plane", "Plane", "Input", "OMIT", "IDENTITY", "IDENTITY_ENV", "KEY_PREFIX",
           "MARKER_NAME", "RESULT_NAME", "MANIFEST_KEY", "EXIT_STATUS", "CA_FILE", "PROXY_VARIABLES",
           "is_data_key", "iso_utc", "sha256_hex", "Job", "CredentialsAgent", "Collector", "ENVELOPE_DIALECTS",
           "MANIFEST_DIALECTS", "PROXY_FORMS"]


def make_plane(ctx, *args, **kwargs):
    return StepPlane(ctx, *args, **kwargs)


Plane = StepPlane
