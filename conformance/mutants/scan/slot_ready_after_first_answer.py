"""The ready line is printed once the server first answered a claim (a "connected" message), not before the first request."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        say("worker: started with %d slots" % len(self.slots))  # SCAN-SLOT-3: before the first request\n',
    '',
), (
    '        answer = self.api.claim(state["request_id"], self.worker.build)  # SCAN-CLAIM-3: the same id until answered\n',
    '        answer = self.api.claim(state["request_id"], self.worker.build)  # SCAN-CLAIM-3: the same id until answered\n'
    '        if not getattr(self.worker, "announced", False):\n'
    '            self.worker.announced = True\n'
    '            say("worker: started with %d slots" % len(self.worker.slots))\n',
)]
KILLS = ["slot.ready-first"]
