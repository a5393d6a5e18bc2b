"""Prints the token in a diagnostic, as a node debugging its credentials might."""
NODE = "conformance/tests/data/toy_node.py"
REPLACE = [('sys.stderr.write("toy: token of %d characters\\n" % len(token))',
            'sys.stderr.write("toy: token %s\\n" % token)')]
KILLS = ["redact.token"]
