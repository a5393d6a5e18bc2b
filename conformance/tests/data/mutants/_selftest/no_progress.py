"""Greets without the progress line (a SHOULD: the check is NON-STRICT)."""
NODE = "conformance/tests/data/toy_node.py"
REPLACE = [('    print("@toy:progress 0.5", flush=True)  # SELFTEST-GREET-2\n', "")]
KILLS = ["greet.progress"]
