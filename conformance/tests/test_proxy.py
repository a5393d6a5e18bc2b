"""Unit tests for the harness's proxy fake (conformance/proxy.py), with a raw client.

The node's side of a proxy (the tunnel, forwarding, NO_PROXY) is tested in
test_blocks.py against the transport block; here the fake itself is judged:
what it records, how it forwards, how its faults act and that close() ends
every connection it holds.
"""

import base64
import socket
import ssl
import time
import unittest

from conformance import faults
from conformance.faults import Match
from conformance.proxy import ProxyServer
from conformance.servers import CA_FILE, LoopbackServer
from conformance.timeouts import SHORT_TIMEOUT_S

USER, PASSWORD = "CANARYuser0001", "CANARY/pass%0002"


def basic(user, password):
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


class ProxyServerTest(unittest.TestCase):
    def setUp(self):
        self.origin = LoopbackServer("origin")
        self.addCleanup(self.origin.close)
        self.origin.serve_bytes("/x", b"origin bytes")
        self.proxy = ProxyServer("proxy", credentials=(USER, PASSWORD))
        self.addCleanup(self.proxy.close)

    def client(self):
        sock = socket.create_connection(("127.0.0.1", self.proxy.port), timeout=SHORT_TIMEOUT_S)
        self.addCleanup(sock.close)
        return sock

    def test_url_and_secrets_carry_every_form(self):
        self.assertEqual(self.proxy.url(),
                         "http://CANARYuser0001:CANARY%2Fpass%250002@127.0.0.1:" + str(self.proxy.port))
        self.assertEqual(self.proxy.url(credentials=False), "http://127.0.0.1:%d" % self.proxy.port)
        for form in (USER, PASSWORD, "CANARY%2Fpass%250002", basic(USER, PASSWORD)[6:]):
            self.assertIn(form, self.proxy.secrets())

    def test_forwards_absolute_form_in_origin_form_without_its_headers(self):
        sock = self.client()
        target = "http://127.0.0.1:%d/x?sig=SECRET" % self.origin.port
        sock.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nProxy-Authorization: %s\r\n"
                      "Connection: close\r\n\r\n" % (target, self.origin.port, basic(USER, PASSWORD))).encode())
        answer = b"".join(iter(lambda: sock.recv(65536), b""))
        self.assertTrue(answer.startswith(b"HTTP/1.1 200"), answer[:80])
        self.assertTrue(answer.endswith(b"origin bytes"))
        request = self.proxy.requests[0]
        self.assertEqual((request.method, request.absolute, request.outcome), ("GET", True, "forwarded"))
        self.assertEqual(request.credentials, (USER, PASSWORD))
        self.assertNotIn("SECRET", request.target)
        self.assertEqual(request.key, "http://127.0.0.1:%d/x" % self.origin.port)
        seen = self.origin.transcript[0]
        self.assertEqual(seen.path.split("?")[0], "/x")
        self.assertNotIn("proxy-authorization", [name.lower() for name, _value in seen.headers])

    def test_tunnels_tls_to_the_origin(self):
        origin = LoopbackServer("tls-origin", tls=True)
        self.addCleanup(origin.close)
        origin.serve_bytes("/t", b"tunnelled")
        sock = self.client()
        authority = "127.0.0.1:%d" % origin.port
        sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: %s\r\n\r\n"
                      % (authority, authority, basic(USER, PASSWORD))).encode())
        self.assertTrue(read_head(sock).startswith(b"HTTP/1.1 200"))
        tls = ssl.create_default_context(cafile=CA_FILE).wrap_socket(sock, server_hostname="127.0.0.1")
        self.addCleanup(tls.close)
        tls.sendall(b"GET /t HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b"".join(iter(lambda: tls.recv(65536), b""))
        self.assertTrue(answer.endswith(b"tunnelled"))
        self.assertEqual([r.target for r in self.proxy.tunnels()], [authority])

    def test_missing_or_wrong_credentials_are_answered_407(self):
        for header in ("", "Proxy-Authorization: %s\r\n" % basic(USER, "wrong")):
            sock = self.client()
            sock.sendall(("CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n%s\r\n" % header).encode())
            head = read_head(sock)
            self.assertTrue(head.startswith(b"HTTP/1.1 407"), head)
            self.assertIn(b"Proxy-Authenticate: Basic", head)
        self.assertEqual([r.authorization for r in self.proxy.requests], [False, True])

    def test_origin_form_is_a_bad_request_and_other_hosts_a_bad_gateway(self):
        sock = self.client()
        sock.sendall(b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n")
        self.assertTrue(read_head(sock).startswith(b"HTTP/1.1 400"))
        sock = self.client()
        sock.sendall(("CONNECT 192.0.2.1:443 HTTP/1.1\r\nProxy-Authorization: %s\r\n\r\n"
                      % basic(USER, PASSWORD)).encode())
        self.assertTrue(read_head(sock).startswith(b"HTTP/1.1 502"))

    def test_faults_refuse_reset_and_hang_until_close(self):
        self.proxy.add_fault(faults.status(403), Match(method="CONNECT", first=1))
        self.proxy.add_fault(faults.reset(0), Match(method="CONNECT", first=1))
        self.proxy.add_fault(faults.hang(), Match(method="CONNECT", first=1))
        connect = b"CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n"
        sock = self.client()
        sock.sendall(connect)
        self.assertTrue(read_head(sock).startswith(b"HTTP/1.1 403"))
        sock = self.client()
        sock.sendall(connect)
        with self.assertRaises(ConnectionResetError):
            while sock.recv(65536):
                pass
        sock = self.client()
        sock.sendall(connect)
        self.assertIsNotNone(self.proxy.wait_for(lambda ev: ev.kind == "fault" and ev.detail.startswith("hang"),
                                                 SHORT_TIMEOUT_S))
        started = time.monotonic()
        self.proxy.close()
        self.assertEqual(sock.recv(65536), b"")
        self.assertLess(time.monotonic() - started, SHORT_TIMEOUT_S)
        self.assertEqual([r.outcome for r in self.proxy.requests], ["refused", "reset", "held"])
        self.assertEqual(self.proxy.errors, [])

    def test_kinds_it_cannot_act_on_are_refused(self):
        with self.assertRaises(ValueError):
            self.proxy.add_fault(faults.dribble(1, 0.1))
        with self.assertRaises(ValueError):
            self.proxy.add_fault(faults.reset(10))


if __name__ == "__main__":
    unittest.main()
