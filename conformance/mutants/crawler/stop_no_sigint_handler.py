"""Only SIGTERM gets the stop handler; SIGINT keeps Python's default and raises KeyboardInterrupt mid-fetch."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        signal.signal(signal.SIGINT, on_stop)  # CRAWLER-STOP-1: Ctrl-C is a stop, never a traceback\n',
    '',
)]
KILLS = ["stop.sigint"]
