"""Retries an expired-looking refusal up to three times with the freshest envelope instead of once."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            return operation(fresh)  # STEP-CREDS-4: once; a second refusal ends the run\n",
    "            for tries_left in (3, 2, 1):  # a few retries in case the agent is mid-rotation\n"
    "                try:\n"
    "                    return operation(fresh)\n"
    "                except Expired:\n"
    "                    if tries_left == 1:\n"
    "                        raise\n"
    "                    fresh = self.creds.get(force=True)\n",
)]
KILLS = ["creds.at-most-one-retry"]
