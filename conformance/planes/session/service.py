"""Service mode (SESSION-SERVICE-*): the port the node listens on, its requests, the start body.

The Service is the upstream's rollback path: with no argument the node serves plain HTTP on
0.0.0.0:PORT and leases each session with a nonce it is handed in ``POST /sessions:start``. The
plane picks PORT by binding port 0 first (free_port), and ServiceMode gives the plane its
Service helpers:

    proc = plane.start(mode="service")          # PORT=plane.port, no argv
    plane.wait_listening()
    answer = plane.start_session()              # 202 {"accepted":true,"session_id":...} from a good node
    plane.service_request("GET", "/livez")      # ServiceAnswer(status, headers, raw, doc)
    plane.start_session(nonce="x" * 31)         # SESSION-SERVICE-2: 400 SESSION_START_INVALID
    plane.start_session(lease_url=OMIT)         # any field changed, or dropped
"""

import http.client
import json
import socket

from conformance.planes.session.control import OMIT, SCHEMA_VERSION, canonical
from conformance.timeouts import SHORT_TIMEOUT_S

__all__ = ["ServiceMode", "ServiceAnswer", "free_port"]

# How long the harness waits for one Service answer: a loopback request to a node that is up.
SERVICE_ANSWER_TIMEOUT_S = SHORT_TIMEOUT_S


class ServiceAnswer(object):
    """A Service-mode answer: status, headers [(name, value)], raw body, doc (parsed, or None)."""

    def __init__(self, status, headers, raw):
        self.status, self.headers, self.raw = status, headers, raw
        try:
            self.doc = json.loads(raw.decode("utf-8"))
        except ValueError:
            self.doc = None

    def __repr__(self):
        return "ServiceAnswer(%d, %r)" % (self.status, self.raw[:200])


class ServiceMode(object):
    """The Service-mode helpers of SessionPlane (which supplies control, runs and wait_for)."""

    @property
    def port(self):
        """The port the current Service-mode run listens on (PORT)."""
        return self.runs[-1].port if self.runs else None

    def wait_listening(self, timeout=SERVICE_ANSWER_TIMEOUT_S):
        """Return once the Service accepts a connection on its port (fails the check otherwise)."""
        def accepts():
            try:
                socket.create_connection(("127.0.0.1", self.port), SHORT_TIMEOUT_S).close()
                return True
            except OSError:
                return False
        self.wait_for(accepts, "a listener on PORT %s" % self.port, timeout)

    def service_request(self, method, path, body=None, headers=(), timeout=SERVICE_ANSWER_TIMEOUT_S):
        """One request to the Service (plain HTTP on PORT); its ServiceAnswer."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=dict(headers))
            response = conn.getresponse()
            return ServiceAnswer(response.status, response.getheaders(), response.read())
        finally:
            conn.close()

    def start_body(self, nonce=None, **fields):
        """The start document naming this control plane's session (SESSION-SERVICE-2), with the
        lease nonce the control plane expects unless nonce is given; fields override (OMIT drops)."""
        binding = self.control.binding
        body = {"schema_version": SCHEMA_VERSION, "session_id": binding["session_id"],
                "workspace_id": binding["workspace_id"], "lease_nonce": nonce or self.control.lease_nonce,
                "lease_url": self.control.lease_url}
        for name, value in fields.items():
            if value is OMIT:
                body.pop(name, None)
            else:
                body[name] = value
        return body

    def start_session(self, nonce=None, body=None, timeout=SERVICE_ANSWER_TIMEOUT_S, **fields):
        """POST /sessions:start with start_body(nonce, **fields), or body (bytes) as given."""
        raw = body if body is not None else canonical(self.start_body(nonce, **fields))
        return self.service_request("POST", "/sessions:start", raw, [("Content-Type", "application/json")], timeout)


def free_port():
    """A port nothing listens on now (bound on 0.0.0.0, port 0, then released): the Service's PORT."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("0.0.0.0", 0))
        return sock.getsockname()[1]
