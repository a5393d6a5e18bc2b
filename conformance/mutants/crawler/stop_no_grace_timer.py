"""No grace timer is armed on the first stop, so a PUT whose answer never comes is waited for up to the upload timeout, not CANCEL_GRACE_S."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    signal.setitimer(signal.ITIMER_REAL, CANCEL_GRACE_S)  # CRAWLER-STOP-5: so does the grace running out\n',
    '',
)]
KILLS = ["stop.put-answer-lost"]
