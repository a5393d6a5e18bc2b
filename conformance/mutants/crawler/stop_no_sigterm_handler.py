"""No SIGTERM handler is installed (the default action is relied on), and as PID 1 the kernel drops the signal."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        signal.signal(signal.SIGTERM, on_stop)  # CRAWLER-STOP-1: before the first request; honoured as PID 1\n',
    '',
)]
KILLS = ["stop.identity", "stop.redeem", "stop.fetch", "stop.fetch-connect", "stop.fetch-tls", "stop.child"]
