"""Installs a signal handler at import time instead of in main()."""
NODE = "conformance/tests/data/toy_worker.py"
REPLACE = [('STATE_FILE = "state.json"\n', 'STATE_FILE = "state.json"\nsignal.signal(signal.SIGUSR1, signal.SIG_IGN)\n')]
KILLS = ["node.import"]
