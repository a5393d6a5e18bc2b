"""Installs the signal handlers at module level, right after PROCESS is made ("as early as possible"), so importing the file changes the importer's signals."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    'PROCESS = ProcessState()\n',
    'PROCESS = ProcessState()\n'
    'signal.signal(signal.SIGTERM, lambda signum, frame: None)  # early: a stop during start-up counts too\n',
)]
KILLS = ["node.import"]
