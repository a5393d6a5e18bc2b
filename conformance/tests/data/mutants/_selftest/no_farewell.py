"""The toy leaves without saying goodbye."""
NODE = "conformance/tests/data/toy_node.py"
REPLACE = [("    print(\"bye\", flush=True)  # SELFTEST-WORK-1\n", "")]
KILLS = ["work.farewell"]
