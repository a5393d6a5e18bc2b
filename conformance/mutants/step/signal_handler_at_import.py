"""Installs the SIGTERM handler at module level, next to the STOP object, so importing the file changes the importer's signals."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "STOP = Stop(PROGRAM)  # the process's one stop flag and in-flight ledger (handlers installed in main)\n",
    "STOP = Stop(PROGRAM)  # the process's one stop flag and in-flight ledger\n"
    "signal.signal(signal.SIGTERM, STOP.handle)  # as early as possible\n",
)]
KILLS = ["node.import"]
