"""The timeline of requests across fakes (conformance/timeline.py)."""

import http.client
import threading
import time
import unittest

from conformance import faults
from conformance.servers import Exchange, LoopbackServer, json_reply
from conformance.timeline import Timeline
from conformance.timeouts import SHORT_TIMEOUT_S


class StubFake:
    """A fake with a hand-made transcript: exact times for exact answers."""

    def __init__(self, name, rows):
        self.name = name
        self.transcript = [Exchange(seq, 1, method, path, None, [], t, t_end=None if status is None else t + 0.01,
                                    status=status, outcome="ok" if status is not None else None)
                           for seq, (t, method, path, status) in enumerate(rows, 1)]


def stub_timeline():
    plane = StubFake("plane", [(10.0, "POST", "/claim", 201), (10.5, "GET", "/poll", 200),
                               (11.1, "GET", "/poll", 200), (11.2, "POST", "/heartbeat", 200),
                               (11.8, "GET", "/poll?x=1\u2026masked\u2026", 503), (12.0, "GET", "/poll", None)])
    store = StubFake("store", [(10.5, "PUT", "/bucket/a/result.json", 200), (11.15, "GET", "/bucket/a/in.csv", 200)])
    return Timeline([plane, store])


class QueryTest(unittest.TestCase):
    def test_merged_by_arrival_across_fakes(self):
        entries = stub_timeline().entries()
        self.assertEqual([(e.fake, e.t_start) for e in entries],
                         [("plane", 10.0), ("plane", 10.5), ("store", 10.5), ("plane", 11.1), ("store", 11.15),
                          ("plane", 11.2), ("plane", 11.8), ("plane", 12.0)])
        self.assertEqual(entries[6].path, "/poll")   # the (masked) query is not part of the path
        self.assertIsNone(entries[-1].t_end)         # still unanswered
        self.assertIsNone(entries[-1].status)

    def test_filters(self):
        timeline = stub_timeline()
        self.assertEqual(timeline.count(fake="store"), 2)
        self.assertEqual(timeline.count(fake=["store", "plane"]), 8)
        self.assertEqual(timeline.count(method="get"), 5)
        self.assertEqual(timeline.count(path="/poll"), 4)
        self.assertEqual(timeline.count(path="/bucket/*"), 2)
        self.assertEqual(timeline.count(path="*.json"), 1)
        self.assertEqual(timeline.count(status=200), 5)
        self.assertEqual(timeline.count(status=[503, None]), 2)
        self.assertEqual([e.t_start for e in timeline.requests(since=11.1, until=11.8)], [11.1, 11.15, 11.2])
        self.assertEqual(timeline.count(where=lambda e: e.t_end is None), 1)
        self.assertEqual(timeline.first(path="/poll").t_start, 10.5)
        self.assertEqual(timeline.last(fake="store").path, "/bucket/a/in.csv")
        self.assertIsNone(timeline.first(path="/nothing"))
        self.assertEqual(timeline.requests(fake="nobody"), [])

    def test_intervals_between_successive_matches(self):
        timeline = stub_timeline()
        gaps = timeline.intervals(fake="plane", path="/poll")
        self.assertEqual([round(g, 6) for g in gaps], [0.6, 0.7, 0.2])
        self.assertEqual([round(g, 6) for g in timeline.intervals(path="/poll", status=200)], [0.6])
        self.assertEqual(timeline.intervals(path="/claim"), [])           # one request: no interval
        self.assertEqual(timeline.intervals(path="/poll", until=10.6), [])

    def test_marks_and_render(self):
        timeline = stub_timeline()
        timeline.mark("SIGTERM", 11.5)
        self.assertEqual(timeline.marks[0].label, "SIGTERM")
        text = timeline.render(t0=10.0)
        lines = text.splitlines()
        self.assertEqual(lines[0], "timeline (8 requests; seconds since t0):")
        self.assertEqual(lines[1], "   +0.000  plane POST /claim -> 201 (10 ms)")
        self.assertIn("   +1.500  -- SIGTERM", lines)
        self.assertEqual(lines[-1], "   +2.000  plane GET /poll -> - (unanswered)")
        self.assertTrue(lines.index("   +1.500  -- SIGTERM") < lines.index("   +1.800  plane GET /poll -> 503 (10 ms)"))
        short = timeline.render(limit=4).splitlines()
        self.assertEqual(len(short), 1 + 4 + 1)
        self.assertIn("... 5 lines ...", short[3])
        self.assertEqual(Timeline().render(), "timeline: no request")


class LiveTest(unittest.TestCase):
    """On real fakes: the timeline is read from their transcripts, live."""

    def setUp(self):
        self.plane = LoopbackServer("plane")
        self.store = LoopbackServer("store")
        for server in (self.plane, self.store):
            self.addCleanup(server.close)
            server.route("*", "/*", lambda request: json_reply({"ok": True}))
        self.timeline = Timeline({"cp": self.plane, "objects": self.store})

    def call(self, server, method, path):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=SHORT_TIMEOUT_S)
        try:
            conn.request(method, path, body=b"{}" if method == "POST" else None)
            answer = conn.getresponse()
            answer.read()
            return answer.status
        finally:
            conn.close()

    def test_names_order_and_times(self):
        t0 = time.monotonic()
        self.call(self.plane, "POST", "/claim")
        self.call(self.store, "GET", "/o?sig=secret")
        self.call(self.plane, "GET", "/poll")
        self.assertEqual(self.timeline.fakes, ["cp", "objects"])
        # The client has the whole answer a moment before the server's thread
        # stamps the exchange's end: wait for the stamps, not for luck.
        deadline = time.monotonic() + SHORT_TIMEOUT_S
        while any(e.t_end is None for e in self.timeline.entries()) and time.monotonic() < deadline:
            time.sleep(0.005)
        entries = self.timeline.entries()
        self.assertEqual([(e.fake, e.method, e.path, e.status) for e in entries],
                         [("cp", "POST", "/claim", 200), ("objects", "GET", "/o", 200), ("cp", "GET", "/poll", 200)])
        for entry in entries:
            self.assertTrue(t0 <= entry.t_start <= entry.t_end <= time.monotonic())
            self.assertEqual(entry.outcome, "ok")
        self.assertNotIn("secret", entries[1].exchange.path)

    def test_wait_for_one_fake_and_several(self):
        def later():
            time.sleep(0.05)
            self.call(self.plane, "GET", "/poll")
            self.call(self.store, "GET", "/o")
        worker = threading.Thread(target=later)
        worker.start()
        self.addCleanup(worker.join)
        self.assertTrue(self.timeline.wait_for(1, SHORT_TIMEOUT_S, fake="cp", path="/poll"))
        self.assertTrue(self.timeline.wait_for(2, SHORT_TIMEOUT_S))           # any fake: polled
        started = time.monotonic()
        self.assertFalse(self.timeline.wait_for(1, 0.1, fake="cp", path="/never"))
        self.assertGreaterEqual(time.monotonic() - started, 0.1)

    def test_a_held_request_shows_unanswered_until_it_ends(self):
        rule = self.plane.add_fault(faults.hang(), faults.Match(method="GET", first=1))
        caller = threading.Thread(target=lambda: self.assertRaises(Exception, self.call, self.plane, "GET", "/poll"))
        caller.start()
        self.addCleanup(caller.join)
        self.assertTrue(self.timeline.wait_for(1, SHORT_TIMEOUT_S, fake="cp"))
        held = self.timeline.first(fake="cp")
        self.assertIsNone(held.t_end)
        rule.release()
        self.assertTrue(self.plane.wait_until(lambda: self.timeline.first(fake="cp").t_end is not None,
                                              SHORT_TIMEOUT_S))
        self.assertEqual(self.timeline.first(fake="cp").outcome, "held")


if __name__ == "__main__":
    unittest.main()
