"""The base of every fake that is one loopback server: the surface all of them share.

A fake owns one LoopbackServer (``fake.server``; conformance/servers.py), its
own options, handlers and observations, and the invariants only it can judge.
A plane composes fakes (conformance/planes/crawler/plane.py is the model).
Faults enter every fake the one way::

    plane.broker.add_fault(faults.hang(), plane.broker.redeem_match())
    plane.site.add_fault(faults.truncate(after_bytes=1000))       # every request

``add_fault(fault, match=None)`` speaks conformance/faults.py: a ``Fault`` and
a ``Match``; no match is every request the fake receives. A fake with more
than one route offers a small helper per route that returns the Match of that
route with any other fields added (``redeem_match(first=1)``), never a second
way to install a fault. The object store's core (conformance/store/core.py)
is a Fake too; the proxy (conformance/proxy.py), which is not a LoopbackServer,
offers the same add_fault.

``read_body(ctx, limit)`` is how a fake's raw handler takes a request body:
its first ``limit`` bytes are kept for the record, the rest is read and
dropped (``ctx.body.consumed`` then says how many bytes the node sent), so a
node that sends more than a document is recorded, never buffered.
"""


def read_body(ctx, limit):
    """The request body's first `limit` bytes; the rest is read and dropped."""
    kept = bytearray()
    mv = memoryview(bytearray(65536))
    while True:
        n = ctx.body.readinto(mv)
        if not n:
            break
        if len(kept) < limit:
            kept += mv[:min(n, limit - len(kept))]
    ctx.body_finished()
    return bytes(kept)


class Fake(object):
    """One fake server of the plane: ``server`` (a LoopbackServer) and the
    surface every fake shares. Subclasses route their handlers on it, keep
    their own observations, and say what must hold after any run in
    invariants()."""

    def __init__(self, server):
        self.server = server

    # -- faults: the one way in
    def add_fault(self, fault, match=None):
        """Install fault (conformance.faults.Fault) for the requests match
        (a conformance.faults.Match; None: every request this fake receives).
        Returns the FaultRule (counters, release, remove)."""
        return self.server.add_fault(fault, match)

    def clear_faults(self):
        self.server.clear_faults()

    # -- what the server saw
    @property
    def port(self):
        return self.server.port

    @property
    def origin(self):
        return self.server.origin

    @property
    def transcript(self):
        return self.server.transcript

    @property
    def events(self):
        return self.server.events

    @property
    def connections(self):
        return self.server.connections

    @property
    def errors(self):
        return self.server.errors

    def wait_until(self, condition, timeout):
        return self.server.wait_until(condition, timeout)

    def invariants(self):
        """Violations of what must hold after any run (none by default)."""
        return []

    def close(self):
        self.server.close()
