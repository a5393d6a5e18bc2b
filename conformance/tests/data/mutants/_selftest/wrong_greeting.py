"""Greets with the wrong word."""
NODE = "conformance/tests/data/toy_node.py"
REPLACE = [('print("hello, %s" % name, flush=True)', 'print("hi, %s" % name, flush=True)')]
KILLS = ["greet.hello"]
