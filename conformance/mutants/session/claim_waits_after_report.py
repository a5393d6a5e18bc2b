"""After a probe's report the loop waits the poll interval before the next claim, as after an empty answer."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "                self.handle_probe(Probe(probe))\n"
    "                continue  # SESSION-CLAIM-2: after a report, the next claim at once\n",
    "                self.handle_probe(Probe(probe))\n"
    "                self.wait(self.interval)\n"
    "                continue\n",
)]
KILLS = ["claim.one-at-a-time"]
