"""Unit tests for the shared blocks in nodes/blocks/, on real loopback sockets.

Each block is imported from its canonical file (nodes/blocks/<name>.py); the
copies embedded in the nodes are kept identical by conformance.sync, which
test_sync.py covers.
"""

import ast
import contextlib
import http.client
import os
import signal
import socket
import ssl
import stat
import tempfile
import threading
import time
import unittest

from conformance import faults
from conformance import servers
from conformance import sync
from conformance.timeouts import POLL_INTERVAL_S, SHORT_TIMEOUT_S
from nodes.blocks import atomic_write as atomic_block
from nodes.blocks import deadline as deadline_block
from nodes.blocks import proxy as proxy_block
from nodes.blocks import redact as redact_block
from nodes.blocks import stop as stop_block
from nodes.blocks import transport as transport_block
from nodes.blocks import utc_timestamp as utc_timestamp_block

# A stop or an expired budget must end a blocked call well within this (the
# contract's goal is 0.1 s; this bound only has to tell "at once" from "waited
# out a timeout" on a loaded machine).
PROMPT_S = 1.5
# How long a test lets a call block before it acts on it.
SETTLE_S = 0.2
# Tries of a connect to a full accept queue (see test_stop_during_connect_ends_it_at_once).
FULL_BACKLOG_ATTEMPTS = 3


def later(delay_s, action):
    """Run `action` from a daemon thread after `delay_s`; returns the thread."""
    def run():
        time.sleep(delay_s)
        action()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


class SilentServer(object):
    """A loopback listener that accepts connections and then does `behaviour`.

    behaviour "silent": read the request, never answer.
    behaviour "dribble": answer one byte every `interval_s`, for ever.
    behaviour "ok": answer 200 with a short body.
    """

    def __init__(self, behaviour="silent", interval_s=0.1):
        self.behaviour = behaviour
        self.interval_s = interval_s
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.closing = threading.Event()
        self.connections = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.closing.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        try:
            conn.recv(65536)
            if self.behaviour == "ok":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
            elif self.behaviour == "dribble":
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10000:
                    if self.closing.wait(self.interval_s):
                        return
                    conn.sendall(bytes([byte]))
            else:
                self.closing.wait(SHORT_TIMEOUT_S)
        except OSError:
            pass

    def url(self, path="/x?X-Amz-Signature=secret"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def close(self):
        self.closing.set()
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # close() alone does not wake accept()
        except OSError:
            pass
        self.listener.close()
        for conn in self.connections:
            conn.close()
        self.thread.join(SHORT_TIMEOUT_S)


class FullBacklog(object):
    """A listener whose accept queue is full: a new connect() never completes.

    The harness's own blackhole (conformance.faults.blackhole) fills the queue
    until a probe connect stops completing, so it holds on a loaded machine,
    where two fixed fillers may not have landed yet.
    """

    def __init__(self):
        self.hole = faults.blackhole()
        self.address = (self.hole.host, self.hole.port)

    def close(self):
        self.hole.close()


def new_stop(testcase):
    """A Stop whose handler line goes to a pipe the test can read."""
    err_r, err_w = os.pipe()
    os.set_blocking(err_r, False)
    stop = stop_block.Stop("test", stderr_fd=err_w)
    stop.open()
    testcase.addCleanup(close_wakeup_pipe, stop)
    testcase.addCleanup(os.close, err_r)
    testcase.addCleanup(os.close, err_w)
    stop.err_r = err_r
    return stop


def close_wakeup_pipe(stop):
    """A node's wakeup pipe lasts as long as its process (the block has no close()); a test's does not."""
    for fd in (stop._wake_r, stop._wake_w):
        os.close(fd)


@contextlib.contextmanager
def opened(exchange):
    """`exchange` opened for a with block and closed after it (HttpExchange is not a context manager:
    no node uses it as one)."""
    try:
        yield exchange.open()
    finally:
        exchange.close()


def handler_output(stop):
    try:
        return os.read(stop.err_r, 65536).decode()
    except BlockingIOError:
        return ""


class RedactTest(unittest.TestCase):
    redact = staticmethod(redact_block.redact)

    def test_query_removed_path_kept(self):
        self.assertEqual(self.redact("GET https://store.example/b/k.csv?X-Amz-Signature=abc failed"),
                         "GET https://store.example/b/k.csv?REDACTED failed")

    def test_userinfo_removed(self):
        self.assertEqual(self.redact("see http://user:pass@host:8080/p"), "see http://host:8080/p")

    def test_fragment_removed(self):
        self.assertEqual(self.redact("http://h/p#token=1"), "http://h/p#REDACTED")

    def test_first_of_query_or_fragment_cuts(self):
        self.assertEqual(self.redact("http://h/p#frag?q=1"), "http://h/p#REDACTED")

    def test_scheme_case_and_s3(self):
        self.assertEqual(self.redact("HTTPS://H/p?x=1 and s3://bucket/key?versionId=2"),
                         "HTTPS://H/p?REDACTED and s3://bucket/key?REDACTED")

    def test_url_ends_at_quote_or_angle_bracket(self):
        self.assertEqual(self.redact("<Url>http://h/p?sig=1</Url> 'http://h/q?s=2'"),
                         "<Url>http://h/p?REDACTED</Url> 'http://h/q?REDACTED'")

    def test_idempotent_and_keeps_trailing_punctuation(self):
        once = self.redact("refused (see https://h/k?X-Amz-Signature=abc).")
        self.assertEqual(once, "refused (see https://h/k?REDACTED")
        self.assertEqual(self.redact(once + ")."), once + ").")
        self.assertEqual(self.redact("http://h/p?REDACTED&sig=abc"), "http://h/p?REDACTED")

    def test_known_secrets_replaced_short_ones_kept(self):
        out = self.redact("policy eyJleHBpcmF0aW9uIjo= status 204", secrets={"eyJleHBpcmF0aW9uIjo=", "204"})
        self.assertEqual(out, "policy REDACTED status 204")

    def test_single_line(self):
        self.assertEqual(self.redact("  one\r\ntwo\x00three\x7f  "), "one two three")

    def test_plain_text_unchanged(self):
        self.assertEqual(self.redact("nothing to hide here"), "nothing to hide here")

    def test_non_string_input(self):
        self.assertEqual(self.redact(OSError(2, "No such file")), "[Errno 2] No such file")


class DeadlineTest(unittest.TestCase):
    def test_remaining_and_expired(self):
        budget = deadline_block.Deadline(SETTLE_S)
        self.assertFalse(budget.expired())
        self.assertGreater(budget.remaining(), 0)
        time.sleep(SETTLE_S * 1.5)
        self.assertTrue(budget.expired())
        self.assertEqual(budget.remaining(), 0.0)

    def test_sooner(self):
        short, long_ = deadline_block.Deadline(1), deadline_block.Deadline(100)
        self.assertIs(deadline_block.sooner(short, long_), short)
        self.assertIs(deadline_block.sooner(long_, short), short)
        self.assertIs(deadline_block.sooner(None, long_), long_)
        self.assertIs(deadline_block.sooner(long_, None), long_)

    def test_watchdog_fires_once_at_the_deadline(self):
        calls = []
        with deadline_block.Watchdog(deadline_block.Deadline(SETTLE_S), lambda: calls.append(time.monotonic())) as dog:
            time.sleep(SETTLE_S * 3)
        self.assertTrue(dog.fired)
        self.assertEqual(len(calls), 1)

    def test_watchdog_cancelled_on_exit(self):
        calls = []
        with deadline_block.Watchdog(deadline_block.Deadline(SETTLE_S), lambda: calls.append(1)) as dog:
            pass
        time.sleep(SETTLE_S * 2)
        self.assertFalse(dog.fired)
        self.assertEqual(calls, [])

    def test_watchdog_swallows_errors(self):
        def boom():
            raise RuntimeError("no traceback from the timer thread")
        with deadline_block.Watchdog(deadline_block.Deadline(0.01), boom) as dog:
            time.sleep(SETTLE_S)
        self.assertTrue(dog.fired)


class UtcTimestampTest(unittest.TestCase):
    def test_parse_utc_timestamp(self):
        parse = utc_timestamp_block.parse_utc_timestamp
        self.assertEqual(parse("1970-01-01T00:00:10Z"), 10.0)
        self.assertEqual(parse("1970-01-01T00:00:10z"), 10.0)
        self.assertEqual(parse("1970-01-01T00:00:10"), 10.0)  # naive means UTC
        self.assertEqual(parse("1970-01-01T01:00:10+01:00"), 10.0)
        self.assertEqual(parse("1969-12-31T23:00:10-0100"), 10.0)
        self.assertEqual(parse("1970-01-01 00:00:10.5Z"), 10.5)
        self.assertEqual(parse("1970-01-02"), 86400.0)
        self.assertEqual(parse(" 1970-01-01T00:00:00+00:00 "), 0.0)
        for bad in ("", "soon", "2026-13-01T00:00:00Z", "2026-01-01T25:00:00Z", None, 17, "2026-01-01T00:00:00Zjunk"):
            self.assertIsNone(parse(bad), bad)


class StopTest(unittest.TestCase):
    def setUp(self):
        self.stop = new_stop(self)

    def test_handle_sets_flag_wakes_and_prints_once(self):
        self.stop.handle(signal.SIGTERM, None)
        self.stop.handle(signal.SIGINT, None)
        self.assertTrue(self.stop.requested)
        self.assertTrue(self.stop.should_abandon())
        self.assertEqual(self.stop.signum, signal.SIGINT)
        wake = self.stop.wait_fd()
        self.assertIsNotNone(wake)
        self.assertTrue(os.read(wake, 10))
        self.assertEqual(handler_output(self.stop), "test: stop requested (signal %d); finishing up\n" % signal.SIGTERM)
        with self.assertRaises(stop_block.StopRequested):
            self.stop.check("the next step")

    def test_handle_shuts_ledger_sockets_while_abandonable(self):
        left, right = socket.socketpair()
        self.addCleanup(left.close)
        self.addCleanup(right.close)
        self.stop.track(left)
        self.stop.handle(signal.SIGTERM, None)
        self.assertEqual(left.recv(10), b"")  # shut down: a read returns at once

    def test_not_abandonable_only_sets_the_flag(self):
        left, right = socket.socketpair()
        self.addCleanup(left.close)
        self.addCleanup(right.close)
        self.stop.track(left)
        self.stop.abandonable = False
        self.stop.handle(signal.SIGTERM, None)
        self.assertTrue(self.stop.requested)
        self.assertFalse(self.stop.should_abandon())
        self.assertIsNone(self.stop.wait_fd())
        right.sendall(b"x")
        self.assertEqual(left.recv(10), b"x")  # still usable

    def test_handler_survives_a_closed_socket_and_no_pipe(self):
        stop = stop_block.Stop("test", stderr_fd=None)  # never opened, and no line to print
        sock = socket.socket()
        sock.close()
        stop.track(sock)
        stop.handle(signal.SIGTERM, None)
        self.assertTrue(stop.requested)

    def test_real_signal_ends_a_blocked_read(self):
        left, right = socket.socketpair()
        self.addCleanup(left.close)
        self.addCleanup(right.close)
        self.stop.track(left)
        previous = signal.signal(signal.SIGUSR1, self.stop.handle)
        self.addCleanup(signal.signal, signal.SIGUSR1, previous)
        left.settimeout(SHORT_TIMEOUT_S)
        later(SETTLE_S, lambda: os.kill(os.getpid(), signal.SIGUSR1))
        started = time.monotonic()
        self.assertEqual(left.recv(10), b"")
        self.assertLess(time.monotonic() - started, SETTLE_S + PROMPT_S)
        self.assertTrue(self.stop.requested)


class AtomicWriteTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(self._cleanup)

    def _cleanup(self):
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)

    def test_bytes_written_private_no_leftover(self):
        path = os.path.join(self.dir, "f.json")
        atomic_block.atomic_write(path, b"{}\n")
        with open(path, "rb") as handle:
            self.assertEqual(handle.read(), b"{}\n")
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode) & 0o077, 0)
        self.assertEqual(os.listdir(self.dir), ["f.json"])

    def test_callable_content_and_replace(self):
        path = os.path.join(self.dir, "f")
        atomic_block.atomic_write(path, b"old")
        atomic_block.atomic_write(path, lambda fd: os.write(fd, b"new"), mode=0o644)
        with open(path, "rb") as handle:
            self.assertEqual(handle.read(), b"new")
        self.assertEqual(os.listdir(self.dir), ["f"])

    def test_failure_leaves_old_file_and_no_temporary(self):
        path = os.path.join(self.dir, "f")
        atomic_block.atomic_write(path, b"old")

        def fail(fd):
            os.write(fd, b"partial")
            raise KeyboardInterrupt
        with self.assertRaises(KeyboardInterrupt):
            atomic_block.atomic_write(path, fail)
        with open(path, "rb") as handle:
            self.assertEqual(handle.read(), b"old")
        self.assertEqual(os.listdir(self.dir), ["f"])


class TransportTest(unittest.TestCase):
    def setUp(self):
        self.stop = new_stop(self)

    def server(self, behaviour, **kwargs):
        server = SilentServer(behaviour, **kwargs)
        self.addCleanup(server.close)
        return server

    def test_split_url(self):
        split = transport_block.split_url
        self.assertEqual(split("http://h/p?q=1#f"), ("http", "h", 80, "/p?q=1"))
        self.assertEqual(split("HTTPS://H:8443"), ("https", "h", 8443, "/"))
        self.assertEqual(split("http://[::1]:81/x"), ("http", "::1", 81, "/x"))
        for bad in ("ftp://h/p?sig=SECRET", "http:///p?sig=SECRET", "http://h:99999/?sig=SECRET",
                    "http://h/a b?sig=SECRET", "", None):
            with self.assertRaises(ValueError) as caught:
                split(bad)
            self.assertNotIn("SECRET", str(caught.exception))

    def test_exchange_round_trip(self):
        server = self.server("ok")
        with opened(transport_block.HttpExchange(server.url(), self.stop, timeout_s=SHORT_TIMEOUT_S,
                                                 connect_deadline_s=SHORT_TIMEOUT_S)) as exchange:
            self.assertIn(exchange.sock, self.stop._inflight)
            exchange.conn.request("GET", exchange.target.request_target)
            response = exchange.conn.getresponse()
            self.assertEqual((response.status, response.read()), (200, b"hello"))
        self.assertNotIn(exchange.sock, self.stop._inflight)

    def test_resolve_a_name_in_a_thread(self):
        addresses = transport_block.resolve("localhost", 80, self.stop, deadline_block.Deadline(SHORT_TIMEOUT_S))
        self.assertTrue(addresses)

    def slow_resolver(self):
        """Make getaddrinfo() of a name block, as a broken resolver does."""
        real = socket.getaddrinfo
        release = threading.Event()

        def slow(host, *args, **kwargs):
            flags = args[4] if len(args) > 4 else kwargs.get("flags", 0)
            if host == "slow.invalid" and not flags & socket.AI_NUMERICHOST:
                release.wait(SHORT_TIMEOUT_S)
            return real(host, *args, **kwargs)
        socket.getaddrinfo = slow
        self.addCleanup(setattr, socket, "getaddrinfo", real)
        self.addCleanup(release.set)

    def test_stop_during_name_lookup_ends_the_wait(self):
        self.slow_resolver()
        later(SETTLE_S, lambda: self.stop.handle(signal.SIGTERM, None))
        started = time.monotonic()
        with self.assertRaises(stop_block.StopRequested):
            transport_block.resolve("slow.invalid", 80, self.stop, deadline_block.Deadline(SHORT_TIMEOUT_S))
        self.assertLess(time.monotonic() - started, SETTLE_S + PROMPT_S)

    def test_name_lookup_bounded_by_the_deadline(self):
        self.slow_resolver()
        started = time.monotonic()
        with self.assertRaises(TimeoutError):
            transport_block.resolve("slow.invalid", 80, self.stop, deadline_block.Deadline(SETTLE_S))
        self.assertLess(time.monotonic() - started, SETTLE_S + PROMPT_S)

    def test_no_connection_after_a_stop(self):
        server = self.server("ok")
        self.stop.handle(signal.SIGTERM, None)
        with self.assertRaises(stop_block.StopRequested):
            transport_block.HttpExchange(server.url(), self.stop, timeout_s=1, connect_deadline_s=1).open()
        time.sleep(SETTLE_S)
        self.assertEqual(server.connections, [])

    def test_stop_during_connect_ends_it_at_once(self):
        # On a heavily loaded machine the loopback stack has been seen to reset a
        # connect to a full accept queue instead of dropping its SYN; the test is
        # about the stop, so such an attempt is made again on a fresh queue.
        for attempt in range(FULL_BACKLOG_ATTEMPTS):
            stop = new_stop(self)
            backlog = FullBacklog()
            self.addCleanup(backlog.close)
            target = transport_block.Target("http", "127.0.0.1", backlog.address[1], "/")
            later(SETTLE_S, lambda: stop.handle(signal.SIGTERM, None))
            started = time.monotonic()
            try:
                transport_block.open_socket(target, stop, deadline_block.Deadline(SHORT_TIMEOUT_S))
            except stop_block.StopRequested:
                break
            except (ConnectionResetError, ConnectionRefusedError):
                if attempt + 1 == FULL_BACKLOG_ATTEMPTS:
                    raise
                time.sleep(SETTLE_S)  # let the pending stop fire on this attempt's Stop
                continue
            self.fail("open_socket returned although the connect could not complete")
        self.assertLess(time.monotonic() - started, SETTLE_S + PROMPT_S)
        self.assertEqual(stop._inflight, set())

    def test_connect_deadline_is_elapsed(self):
        backlog = FullBacklog()
        self.addCleanup(backlog.close)
        target = transport_block.Target("http", "127.0.0.1", backlog.address[1], "/")
        started = time.monotonic()
        with self.assertRaises(TimeoutError):
            transport_block.open_socket(target, self.stop, deadline_block.Deadline(SETTLE_S))
        self.assertLess(time.monotonic() - started, SETTLE_S + PROMPT_S)

    def test_shutdown_ends_a_blocked_first_byte_wait(self):
        server = self.server("silent")
        with opened(transport_block.HttpExchange(server.url(), self.stop, timeout_s=SHORT_TIMEOUT_S,
                                                 connect_deadline_s=SHORT_TIMEOUT_S)) as exchange:
            exchange.conn.request("GET", exchange.target.request_target)
            later(SETTLE_S, lambda: self.stop.handle(signal.SIGTERM, None))
            started = time.monotonic()
            with self.assertRaises((http.client.RemoteDisconnected, OSError)):
                exchange.conn.getresponse()
            self.assertLess(time.monotonic() - started, SETTLE_S + PROMPT_S)

    def test_watchdog_bounds_a_dribbling_answer(self):
        server = self.server("dribble", interval_s=SETTLE_S / 4)
        budget = deadline_block.Deadline(SETTLE_S * 2)
        self.stop.abandonable = False  # the receipt: a stop would not cut it, the budget does
        with opened(transport_block.HttpExchange(server.url(), self.stop, timeout_s=SHORT_TIMEOUT_S,
                                                 connect_deadline_s=SHORT_TIMEOUT_S, budget=budget)) as exchange:
            exchange.conn.request("GET", exchange.target.request_target)
            started = time.monotonic()
            with deadline_block.Watchdog(budget, self.stop.abandon_all) as dog:
                with self.assertRaises((http.client.HTTPException, OSError)):
                    exchange.conn.getresponse()
            self.assertTrue(dog.fired)
            self.assertLess(time.monotonic() - started, SETTLE_S * 2 + PROMPT_S)

    def test_expired_budget_refuses_to_connect(self):
        server = self.server("ok")
        budget = deadline_block.Deadline(0)
        time.sleep(POLL_INTERVAL_S)
        with self.assertRaises(TimeoutError):
            transport_block.HttpExchange(server.url(), self.stop, timeout_s=1, connect_deadline_s=1,
                                         budget=budget).open()



class TinyProxy(object):
    """A one-purpose proxy for the transport's tests: it reads one request head
    per connection, keeps it, and then does `behaviour`:

    "tunnel": CONNECT to the target, answer 200, relay both ways;
    "refuse": answer 407 with Proxy-Authenticate;
    "silent": never answer;
    "endless": answer a status line, then header bytes for ever;
    "answer": answer 200 with a short body itself (a forwarded request).
    """

    def __init__(self, behaviour):
        self.behaviour = behaviour
        self.heads = []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.closing = threading.Event()
        self.sockets = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def url(self, userinfo=""):
        return "http://%s127.0.0.1:%d" % (userinfo, self.port)

    def _serve(self):
        while not self.closing.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.sockets.append(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                head += chunk
            self.heads.append(head.split(b"\r\n\r\n", 1)[0].decode("latin-1"))
            if self.behaviour == "refuse":
                conn.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                             b"Proxy-Authenticate: Basic realm=\"t\"\r\nContent-Length: 0\r\n\r\n")
            elif self.behaviour == "answer":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nproxied")
            elif self.behaviour == "endless":
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                while not self.closing.wait(0.001):
                    conn.sendall(b"X-Filler: " + b"a" * 1000 + b"\r\n")
            elif self.behaviour == "tunnel":
                host, port = head.split(b" ", 2)[1].decode().rsplit(":", 1)
                upstream = socket.create_connection((host, int(port)), timeout=SHORT_TIMEOUT_S)
                self.sockets.append(upstream)
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                for a, b in ((conn, upstream), (upstream, conn)):
                    threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()
            else:
                self.closing.wait(SHORT_TIMEOUT_S)
        except OSError:
            pass

    @staticmethod
    def _pipe(source, destination):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    destination.shutdown(socket.SHUT_WR)
                    return
                destination.sendall(data)
        except OSError:
            pass

    def close(self):
        self.closing.set()
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        for sock in self.sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        self.thread.join(SHORT_TIMEOUT_S)


class ProxyConfigTest(unittest.TestCase):
    """Which proxy a URL gets from an environment: urllib's variables, curl's NO_PROXY."""

    def pick(self, environ, url):
        return proxy_block.Proxies.from_environ(environ).pick(transport_block.split_url(url))

    def test_each_scheme_its_own_variable(self):
        environ = {"HTTPS_PROXY": "http://s:3128", "HTTP_PROXY": "http://p:8080"}
        self.assertEqual(self.pick(environ, "https://h/")[:2], ("s", 3128))
        self.assertEqual(self.pick(environ, "http://h/")[:2], ("p", 8080))
        self.assertIsNone(self.pick({"HTTPS_PROXY": "http://s:1"}, "http://h/"))
        self.assertIsNone(self.pick({"ALL_PROXY": "http://a:1"}, "https://h/"))

    def test_lowercase_wins_and_an_empty_one_unsets(self):
        self.assertEqual(self.pick({"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:2"},
                                   "https://h/")[:2], ("lower", 2))
        self.assertIsNone(self.pick({"HTTPS_PROXY": "http://upper:1", "https_proxy": ""}, "https://h/"))
        self.assertEqual(self.pick({"HTTPS_PROXY": "http://upper:1", "no_proxy": "", "NO_PROXY": "h"},
                                   "https://h/")[:2], ("upper", 1))

    def test_http_proxy_ignored_under_cgi(self):
        self.assertIsNone(self.pick({"HTTP_PROXY": "http://p:1", "REQUEST_METHOD": "GET"}, "http://h/"))
        self.assertEqual(self.pick({"http_proxy": "http://p:1", "REQUEST_METHOD": "GET"}, "http://h/")[:2], ("p", 1))

    def test_proxy_url_forms(self):
        parse = proxy_block.parse_proxy_url
        self.assertEqual(parse("http://proxy")[:3], ("proxy", 80, None))
        self.assertEqual(parse("HTTP://[::1]:3128/")[:2], ("::1", 3128))
        proxy = parse("http://us%40er:p%2Fss%25@proxy:1")
        self.assertEqual(proxy.authorization, "Basic dXNAZXI6cC9zcyU=")  # base64 of "us@er:p/ss%"
        self.assertIn("p/ss%", proxy.credentials)
        self.assertIn("p%2Fss%25", proxy.credentials)
        self.assertNotIn("p/ss", repr(proxy) + str(proxy))
        self.assertNotIn("dXNA", repr(proxy) + str(proxy))
        for bad in ("https://u:SECRET@proxy:1", "socks5://u:SECRET@proxy:1", "u:SECRET@proxy:3128",
                    "http://u:SECRET@proxy:99999", "http://u:SECRET@proxy:1/path", "http://u:SECRET@proxy:1/?q=1",
                    "http://u:SECRET@", ""):
            with self.assertRaises(ValueError) as caught:
                parse(bad)
            self.assertNotIn("SECRET", str(caught.exception))
            with self.assertRaises(proxy_block.ProxyConfigError) as caught:
                proxy_block.Proxies.from_environ({"https_proxy": bad or "x"})
            self.assertIn("https_proxy", str(caught.exception))
            self.assertNotIn("SECRET", str(caught.exception))

    def test_no_proxy_matching(self):
        cases = [
            # (NO_PROXY, URL, direct?)
            ("example.com", "https://example.com/", True),
            ("example.com", "https://a.example.com/", True),
            (".example.com", "https://a.b.example.com/", True),
            (".example.com", "https://example.com/", True),
            ("example.com.", "https://a.example.com./", True),
            ("example.com", "https://badexample.com/", False),
            ("example.com", "https://example.com.evil/", False),
            ("EXAMPLE.com", "https://a.Example.COM/", True),
            ("other.org, example.com", "https://example.com/", True),
            ("other.org example.com", "https://example.com/", True),
            ("other.org,,  ,example.com", "https://example.com/", True),
            ("*", "https://anything/", True),
            ("*.example.com", "https://a.example.com/", False),
            ("127.0.0.1", "http://127.0.0.1:8080/", True),
            ("0.0.1", "http://127.0.0.1/", False),
            ("127.0.0.1", "http://127.0.0.10/", False),
            ("localhost", "http://127.0.0.1/", False),
            ("::1", "http://[::1]/", True),
            ("[::1]", "http://[::1]:81/", True),
            ("[::1]:81", "http://[::1]:81/", True),
            ("[::1]:81", "http://[::1]:82/", False),
            ("0:0:0:0:0:0:0:1", "http://[::1]/", True),
            ("example.com:443", "https://example.com/", True),
            ("example.com:443", "http://example.com/", False),
            ("example.com:8080", "http://a.example.com:8080/", True),
            ("10.0.0.0/8", "http://10.1.2.3/", False),
        ]
        for no_proxy, url, direct in cases:
            with self.subTest(no_proxy=no_proxy, url=url):
                environ = {"http_proxy": "http://p:1", "https_proxy": "http://p:1", "no_proxy": no_proxy}
                self.assertEqual(self.pick(environ, url) is None, direct)

    def test_secrets_every_form(self):
        proxies = proxy_block.Proxies.from_environ({"https_proxy": "http://user1234:pass%2F5678@p:1",
                                                        "http_proxy": "http://p:2"})
        found = proxies.secrets()
        for form in ("user1234", "pass%2F5678", "pass/5678", "dXNlcjEyMzQ6cGFzcy81Njc4"):
            self.assertTrue(any(form in value for value in found), form)


class ProxyTransportTest(unittest.TestCase):
    """The tunnel and forwarding, against TinyProxy, with the stop and the deadline."""

    def setUp(self):
        self.stop = new_stop(self)

    def proxy(self, behaviour):
        proxy = TinyProxy(behaviour)
        self.addCleanup(proxy.close)
        return proxy

    def proxies(self, proxy, userinfo="user:pa%2Fss@"):
        return proxy_block.Proxies.from_environ({"https_proxy": proxy.url(userinfo),
                                                     "http_proxy": proxy.url(userinfo)})

    def test_tunnel_then_tls_to_the_origin(self):
        origin = servers.LoopbackServer("origin", tls=True)
        self.addCleanup(origin.close)
        origin.serve_bytes("/x", b"through the tunnel")
        proxy = self.proxy("tunnel")
        context = lambda: ssl.create_default_context(cafile=servers.CA_FILE)  # noqa: E731
        with opened(transport_block.HttpExchange(origin.origin + "/x?X-Amz-Signature=secret", self.stop,
                                                 timeout_s=SHORT_TIMEOUT_S, connect_deadline_s=SHORT_TIMEOUT_S,
                                                 ssl_context_factory=context, proxies=self.proxies(proxy))) as exchange:
            self.assertEqual(exchange.target.request_target, "/x?X-Amz-Signature=secret")
            self.assertIn(exchange.sock, self.stop._inflight)
            exchange.conn.request("GET", exchange.target.request_target)
            response = exchange.conn.getresponse()
            self.assertEqual((response.status, response.read()), (200, b"through the tunnel"))
        authority = "127.0.0.1:%d" % origin.port
        lines = proxy.heads[0].split("\r\n")
        self.assertEqual(lines[0], "CONNECT %s HTTP/1.1" % authority)
        self.assertIn("Host: %s" % authority, lines)
        self.assertIn("Proxy-Authorization: Basic dXNlcjpwYS9zcw==", lines)  # user:pa/ss
        self.assertNotIn("X-Amz-Signature", proxy.heads[0])
        self.assertNotIn("proxy-authorization", " ".join(n.lower() for n, _v in origin.transcript[0].headers))
        self.assertEqual(self.stop._inflight, set())

    def test_refused_tunnel_names_the_status_not_the_credentials(self):
        proxy = self.proxy("refuse")
        with self.assertRaises(proxy_block.ProxyRefused) as caught:
            transport_block.HttpExchange("https://127.0.0.1:1/x", self.stop, timeout_s=1,
                                         connect_deadline_s=SHORT_TIMEOUT_S,
                                         proxies=self.proxies(proxy, "user:SECRETPASSWORD@")).open()
        self.assertEqual(caught.exception.status, 407)
        self.assertIsInstance(caught.exception, OSError)
        self.assertIn("407", str(caught.exception))
        self.assertNotIn("SECRETPASSWORD", str(caught.exception))
        self.assertNotIn(proxy_block.parse_proxy_url(proxy.url("user:SECRETPASSWORD@")).authorization[6:],
                         str(caught.exception))
        self.assertEqual(self.stop._inflight, set())

    def test_stop_while_the_proxy_withholds_its_answer(self):
        proxy = self.proxy("silent")
        later(SETTLE_S, lambda: self.stop.handle(signal.SIGTERM, None))
        started = time.monotonic()
        with self.assertRaises(stop_block.StopRequested):
            transport_block.HttpExchange("https://127.0.0.1:1/x", self.stop, timeout_s=1,
                                         connect_deadline_s=SHORT_TIMEOUT_S, proxies=self.proxies(proxy)).open()
        self.assertLess(time.monotonic() - started, SETTLE_S + PROMPT_S)
        self.assertEqual(self.stop._inflight, set())

    def test_the_proxy_answer_lies_within_the_connect_deadline(self):
        proxy = self.proxy("silent")
        started = time.monotonic()
        with self.assertRaises(TimeoutError):
            transport_block.HttpExchange("https://127.0.0.1:1/x", self.stop, timeout_s=SHORT_TIMEOUT_S,
                                         connect_deadline_s=SETTLE_S, proxies=self.proxies(proxy)).open()
        self.assertLess(time.monotonic() - started, SETTLE_S + PROMPT_S)

    def test_an_endless_reply_head_is_refused(self):
        proxy = self.proxy("endless")
        with self.assertRaises(proxy_block.ProxyRefused) as caught:
            transport_block.HttpExchange("https://127.0.0.1:1/x", self.stop, timeout_s=1,
                                         connect_deadline_s=SHORT_TIMEOUT_S, proxies=self.proxies(proxy)).open()
        self.assertIsNone(caught.exception.status)

    def test_plain_http_goes_to_the_proxy_in_absolute_form(self):
        proxy = self.proxy("answer")
        with opened(transport_block.HttpExchange("http://origin.invalid:8080/a/b?q=1", self.stop,
                                                 timeout_s=SHORT_TIMEOUT_S, connect_deadline_s=SHORT_TIMEOUT_S,
                                                 proxies=self.proxies(proxy))) as exchange:
            exchange.conn.putrequest("GET", exchange.target.request_target)
            exchange.conn.endheaders()
            response = exchange.conn.getresponse()
            self.assertEqual((response.status, response.read()), (200, b"proxied"))
        lines = proxy.heads[0].split("\r\n")
        self.assertEqual(lines[0], "GET http://origin.invalid:8080/a/b?q=1 HTTP/1.1")
        self.assertIn("Host: origin.invalid:8080", lines)
        self.assertIn("Proxy-Authorization: Basic dXNlcjpwYS9zcw==", lines)

    def test_no_proxy_host_and_no_proxies_connect_directly(self):
        server = SilentServer("ok")
        self.addCleanup(server.close)
        proxy = self.proxy("answer")
        exempt = proxy_block.Proxies.from_environ({"http_proxy": proxy.url(), "no_proxy": "127.0.0.1"})
        for proxies in (None, exempt):
            with opened(transport_block.HttpExchange(server.url(), self.stop, timeout_s=SHORT_TIMEOUT_S,
                                                     connect_deadline_s=SHORT_TIMEOUT_S, proxies=proxies)) as exchange:
                self.assertIsNone(exchange.proxy)
                self.assertIs(type(exchange.conn), http.client.HTTPConnection)
                self.assertEqual(exchange.target.request_target, "/x?X-Amz-Signature=secret")
                exchange.conn.request("GET", exchange.target.request_target)
                self.assertEqual(exchange.conn.getresponse().read(), b"hello")
        self.assertEqual(proxy.heads, [])


def unreached_block_names(text, label):
    """[(block, name)] for each top-level name an embedded block defines that
    nothing reachable from the node's own code (outside its blocks) uses."""
    owner = {}
    for block, begin, end in sync.find_regions(text, label):
        for index in range(begin + 1, end):
            owner[index + 1] = block  # 1-based line numbers, as ast gives them
    definitions, todo = {}, []
    for statement in ast.parse(text).body:
        names = []
        if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
            names = [statement.name]
        elif isinstance(statement, ast.Assign):
            names = [node.id for target in statement.targets for node in ast.walk(target)
                     if isinstance(node, ast.Name)]
        block = owner.get(statement.lineno)
        for name in names:
            definitions[name] = (block, statement)
        if block is None:  # the node's own code: everything it names is reached
            todo.extend(node.id for node in ast.walk(statement) if isinstance(node, ast.Name))
    reached = set()
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        if name in definitions:
            todo.extend(node.id for node in ast.walk(definitions[name][1]) if isinstance(node, ast.Name))
    return sorted((block, name) for name, (block, _statement) in definitions.items()
                  if block is not None and name not in reached)


class EmbeddingTest(unittest.TestCase):
    """A node embeds only what it calls: a block function no code of the node
    reaches is code a reader of the node must understand for nothing (and,
    for the crawler, proxy code its contract forbids it to use).  The fix is
    a finer block, embedded only where it is called (see nodes/blocks/README.md)."""

    def test_no_node_embeds_a_name_it_never_reaches(self):
        paths = sync.node_paths(sync.DEFAULT_ROOT) + [path for path, _ in sync.derivative_paths(sync.DEFAULT_ROOT)]
        self.assertTrue(paths)
        for path in paths:
            label = os.path.relpath(path, sync.DEFAULT_ROOT)
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            with self.subTest(node=label):
                self.assertEqual(unreached_block_names(text, label), [])

    def test_the_finder_sees_an_unreached_name(self):
        text = ("# ---- BEGIN BLOCK b (nodes/blocks/b.py) ----\n"
                "def used():\n    return helper()\n\n\ndef helper():\n    return 1\n\n\ndef spare():\n    return 2\n"
                "# ---- END BLOCK b ----\n\nprint(used())\n")
        self.assertEqual(unreached_block_names(text, "n.py"), [("b", "spare")])


if __name__ == "__main__":
    unittest.main()
