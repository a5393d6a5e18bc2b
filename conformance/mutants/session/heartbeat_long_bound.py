"""A heartbeat gets the ordinary CALLBACK_TIMEOUT_S, so one hung beat holds the next back for 10 s."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                                            limit_s=min(self.interval, CALLBACK_TIMEOUT_S), holder=self)\n',
    '                                            limit_s=CALLBACK_TIMEOUT_S, holder=self)\n',
)]
KILLS = ["heartbeat.failures-ignored"]
