"""Installs the signal handlers at module level, right after FLOW is made ("as early as possible"), so importing the file changes the importer's signals."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    'FLOW = Flow()\n',
    'FLOW = Flow()\n'
    'signal.signal(signal.SIGTERM, lambda signum, frame: None)  # early: a stop during start-up counts too\n',
)]
KILLS = ["node.import"]
