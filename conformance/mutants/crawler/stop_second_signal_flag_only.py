"""A second stop is handled like the first (it only sets the flag again and re-arms the grace) instead of ending the process at once."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if signum == signal.SIGALRM or STOP.requested:  # CRAWLER-STOP-5: CANCEL_GRACE_S after the first, or a second\n',
    '    if signum == signal.SIGALRM:  # only the grace timer ends it\n',
)]
KILLS = ["stop.second-signal"]
