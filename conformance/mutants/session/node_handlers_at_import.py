"""Installs the stop handlers at module level, right after PROCESS is made ("as early as possible"), so importing the file changes the importer's signals."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    'PROCESS = NodeProcess()  # SESSION-NODE-3: these objects open nothing; main() does the rest\n',
    'PROCESS = NodeProcess()  # SESSION-NODE-3: these objects open nothing; main() does the rest\n'
    'signal.signal(signal.SIGTERM, lambda signum, frame: None)  # early: a stop during start-up counts too\n',
)]
KILLS = ["node.import"]
