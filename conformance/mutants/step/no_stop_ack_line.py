"""The stop handler stays silent: an operator reading the log cannot tell a stop
from a crash until the CANCELLED line (if any) arrives."""
NODE = "nodes/hello_node.py"
REPLACE = [('                line = "%s: stop requested (signal %d); finishing up\\n" % (self.program, signum)',
            '                line = ""')]
KILLS = ["stop.ack-line"]
