"""A failed run writes its summary but no closing stderr line naming its code."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        say("%s: session job did not reach a terminal session state" % doc["failure_code"])\n'
    '        return EXIT_FAILED\n',
    '        return EXIT_FAILED\n',
)]
KILLS = ["exit.table"]
