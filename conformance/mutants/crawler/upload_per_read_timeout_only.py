"""An HTTP exchange (the PUT included) is bounded by its socket timeout alone, without the watchdog that makes it one elapsed deadline: a dribbled answer never ends (D9)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        with Watchdog(budget, STOP.abandon_all):\n',
    '        with contextlib.nullcontext():\n',
)]
KILLS = ["upload.deadline"]
