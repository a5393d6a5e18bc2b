"""Installs the SIGTERM handler at module level, next to the STOP object, so importing the file changes the importer's signals."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'STOP = Stop(PROGRAM, stderr_fd=None)\n',
    'STOP = Stop(PROGRAM, stderr_fd=None)\n'
    'signal.signal(signal.SIGTERM, STOP.handle)  # as early as possible: a stop during start-up counts too\n',
)]
KILLS = ["node.import"]
