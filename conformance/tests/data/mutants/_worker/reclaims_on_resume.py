"""Ignores the granted claim in its state file and claims again on every start (a replay, but a claim)."""
NODE = "conformance/tests/data/toy_worker.py"
REPLACE = [('    if state.get("claim_id"):  # WORKER-STATE-1: a granted claim is resumed, never made again\n'
            "        return state\n", "")]
KILLS = ["state.crash-resume"]
