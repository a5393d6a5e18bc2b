"""The marker is written before result.json is uploaded (the report goes up last, after the receipt)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        self.phase = \"writing result.json\"\n"
    "        self.write_result(inventory_first=True)  # STEP-RESULT-1: inventory first on the normal path\n",
    "        self.phase = \"writing result.json\"\n"
    "        self.result_after_marker = True\n",
), (
    "        return self.conclude(status, outcome, reason)  # STEP-MARKER-1: the receipt is the last write\n",
    "        outcome = self.conclude(status, outcome, reason)\n"
    "        if getattr(self, \"result_after_marker\", False):\n"
    "            try:\n"
    "                self.write_result(inventory_first=True)\n"
    "            except BaseException as exc:\n"
    "                say(\"could not write result.json: %s\" % describe(exc))\n"
    "        return outcome\n",
)]
KILLS = ["marker.last", "marker.produced-ports", "work.copy", "creds.agree-no-warning",
         "creds.expires-garbage", "creds.expires-missing", "creds.expires-zulu", "creds.legacy-variable",
         "creds.marker-rereads", "creds.precedence", "creds.proactive-refresh", "creds.retry-after-rotation",
         "exit.codes", "fault.input.dribble", "fault.manifest.dribble", "fault.manifest.expired-rotated",
         "fault.marker.dribble", "fault.marker.expired-rotated", "fault.output.dribble",
         "fault.output.expired-rotated", "fault.result.dribble", "fault.result.expired",
         "fault.result.expired-rotated", "fault.result.reset", "fault.result.slowdown",
         "fault.result.throttled", "http.unauthorized-rotated", "http.user-agent", "work.names",
         "input.tls", "input.uppercase-pin", "manifest.identity-types", "manifest.identity-wins",
         "marker.shape", "output.multipart", "work.name-clash", "progress.format", "progress.order",
         "result.fact-rules", "result.params-ceiling", "result.shape", "stream.scratch-success"]
