"""No flush after a report: the settled event waits for the next probe's start or the end, coalesced with them."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "            self.progress.make(\"source_probe_settled\", facts)\n"
    "        self.progress.flush(cap=self.drain_cap)  # SESSION-PROGRESS-4: after each report, narrated or not\n",
    "            self.progress.make(\"source_probe_settled\", facts)\n",
)]
KILLS = ["progress.batches"]
