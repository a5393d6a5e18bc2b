"""One progress line per input, however many inputs: no thinning and no line cap."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if self.lines >= PROGRESS_MAX_LINES:  # STEP-PROGRESS-3\n"
    "            return\n"
    "        if fraction < self.fraction or (fraction < 1.0 and step <= self.step):  # STEP-PROGRESS-2\n",
    "        if fraction < self.fraction:\n",
)]
KILLS = ["progress.rate-limit"]
