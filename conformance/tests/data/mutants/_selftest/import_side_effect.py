"""Installs a signal handler at import time instead of in main()."""
NODE = "conformance/tests/data/toy_node.py"
REPLACE = [("POLL_S = 0.01", "signal.signal(signal.SIGUSR1, signal.SIG_IGN)\nPOLL_S = 0.01")]
KILLS = ["node.import"]
