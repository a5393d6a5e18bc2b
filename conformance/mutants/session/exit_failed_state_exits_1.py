"""A session the server says is `failed` ends with exit 1, as if the worker had failed (the naive mapping)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        say("%s: session job did not reach a terminal session state" % doc["failure_code"])\n'
    '        return EXIT_FAILED\n'
    '    return EXIT_OK\n',
    '        say("%s: session job did not reach a terminal session state" % doc["failure_code"])\n'
    '        return EXIT_FAILED\n'
    '    return EXIT_FAILED if doc["terminal_state"] == FAILED_STATE else EXIT_OK\n',
)]
KILLS = ["exit.table"]
