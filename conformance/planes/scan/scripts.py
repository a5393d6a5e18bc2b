"""Scripted answers of the fake scan server: an answer of a check's choosing instead of the server's.

    server.script("claim", 201, b"{}", first=1)                 # the next claim: a malformed 201
    server.script("bundle", 200, receipt, commit=True)          # accepted, but a receipt that does not bind

A Script replaces the answer of some requests of one verb (counted from its installation; one
reservation's, or any) before the server acts (commit=False: a claim grants nothing, an upload
is not accepted) or after (commit=True). Scripts keeps them in installation order: each counts
every request of its verb, and the first that applies answers (ScanServer.script says what each
argument does).
"""

import json

from conformance.planes.scan.protocol import VERBS

__all__ = ["Script", "Scripts"]


class Script(object):
    """An answer that replaces the server's for some requests of one verb (see ScanServer.script)."""

    def __init__(self, verb, status, body, headers, reservation, skip, first, commit):
        self.verb, self.status, self.body, self.headers = verb, status, body, list(headers or ())
        self.reservation, self.skip, self.first, self.commit = reservation, skip, first, commit
        self.seen = self.applied = 0

    def consider(self, call):
        if call.verb != self.verb:
            return False
        if self.reservation is not None and call.reservation_id != self.reservation:
            return False
        self.seen += 1
        if self.seen <= self.skip or (self.first is not None and self.applied >= self.first):
            return False
        self.applied += 1
        return True

    def answer(self, call, status, doc, headers):
        """(status, body bytes, headers) of the scripted answer, given the server's own."""
        if callable(self.body):
            made = self.body(call, status, doc)
            new_status, body = made if isinstance(made, tuple) else (self.status or status, made)
        else:
            new_status, body = self.status or status, self.body
        if body is None:
            data = b""
        elif isinstance(body, (bytes, bytearray)):
            data = bytes(body)
        else:
            data = json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
        return new_status, data, self.headers if self.headers else (headers if new_status == status else [])


class Scripts(object):
    """The scripts of one server, in installation order; every method takes lock, the server's."""

    def __init__(self, lock):
        self._lock = lock
        self._scripts = []

    def add(self, verb, status=None, body=None, headers=(), reservation=None, nth=1, first=1, commit=False):
        """A new Script (ScanServer.script's arguments), answering from the nth request of verb on."""
        if verb not in VERBS:
            raise ValueError("script: verb must be one of %s" % ", ".join(VERBS))
        if not commit and status is None and not callable(body):
            raise ValueError("script: an answer given instead of the server's (commit=False) needs a status")
        rule = Script(verb, status, body, headers, None if reservation is None else int(reservation),
                      nth - 1, first, commit)
        with self._lock:
            self._scripts.append(rule)
        return rule

    def answer(self, call, act):
        """(status, doc or bytes, headers) of a call: act(call) gives the server's own answer (acting
        on the request), which the first script that applies replaces, before act runs (commit=False:
        act never runs) or after it."""
        with self._lock:
            chosen = [s for s in self._scripts if s.consider(call)]  # each counts every call of its verb
            script = chosen[0] if chosen else None
            if script is not None and not script.commit:
                call.scripted = True
                return script.answer(call, None, None, [])
            status, doc, headers = act(call)
            if script is not None:
                call.scripted = True
                return script.answer(call, status, doc, headers)
            return status, doc, headers
