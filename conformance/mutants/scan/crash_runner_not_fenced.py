"""A restarted worker closes the generation a previous life recorded without stopping its runner, so a runner left over by a killed worker keeps running beside the new generation."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    "        identity = runner[\"identity\"]\n"
    "        if identity is not None:  # SCAN-RUNNER-9: only the exact pid + start time + executable is ever signalled\n"
    "            if stop_exact_identity(identity[\"payload\"], RUNNER_STOP_TIMEOUT_S) != \"dead\":\n",
    "        identity = runner[\"identity\"]\n"
    "        if False:\n"
    "            if stop_exact_identity(identity[\"payload\"], RUNNER_STOP_TIMEOUT_S) != \"dead\":\n",
)]
KILLS = ["crash.scan"]
