"""The pin is only checked to be an absolute regular file: a file without the execute bit is found out at exec, after the fetch."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        # CRAWLER-CHILD-1: a relative pin would depend on the cwd; a bad one is found before the fetch\n'
    '        if not os.path.isabs(pin) or not os.path.isfile(pin) or not os.access(pin, os.X_OK):\n',
    '        if not os.path.isabs(pin) or not os.path.isfile(pin):\n',
)]
KILLS = ["child.pin-invalid"]
