"""The trailer's events_sha256 hashes the event lines without their newlines (writer and validator agree with each other, not with SCAN-BUNDLE-1)."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('        self._events_hash.update(line)\n        self.event_count += 1',
     '        self._events_hash.update(line[:-1])\n        self.event_count += 1'),
    ('            events_hash.update(line)\n            count += 1',
     '            events_hash.update(line[:-1])\n            count += 1'),
]
KILLS = ["bundle.envelope"]
