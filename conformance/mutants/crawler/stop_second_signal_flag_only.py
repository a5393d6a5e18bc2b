"""A second stop is handled like the first (it only sets the flag again and re-arms the grace) instead of ending the process at once."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if STOP.requested:  # CRAWLER-STOP-5: a second stop ends it now\n'
    '        exit_now()\n'
    '        return\n',
    '',
)]
KILLS = ["stop.second-signal"]
