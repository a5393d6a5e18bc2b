"""Forgets to remove its scratch file."""
NODE = "conformance/tests/data/toy_node.py"
REPLACE = [("        os.remove(scratch)  # SELFTEST-SCRATCH-1\n", "")]
KILLS = ["scratch.empty"]
