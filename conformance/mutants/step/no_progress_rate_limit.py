"""One progress line per input, however many inputs: no thinning and no line cap."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        # STEP-PROGRESS-3: the log is a 1000-line tail; progress must leave room for the reason a run failed\n        if self.lines >= PROGRESS_MAX_LINES:\n"
    "            return\n"
    "        # STEP-PROGRESS-2: never backwards; between inputs, at most one line per 1/200 of the run\n        if fraction < self.fraction or (fraction < 1.0 and step <= self.step):\n",
    "        if fraction < self.fraction:\n",
)]
KILLS = ["progress.rate-limit"]
