"""Drops the SIGTERM handler: fine as a plain process, deaf to SIGTERM as PID 1."""
NODE = "conformance/tests/data/toy_node.py"
REPLACE = [("    signal.signal(signal.SIGTERM, lambda signum, frame: stopped.append(signum))  # SELFTEST-STOP-1\n", "")]
KILLS = ["stop.sigterm-pid1"]
