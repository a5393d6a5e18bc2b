"""The signal handler stays silent: nothing on stderr acknowledges the stop or names the signal."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "                os.write(self.stderr_fd, line.encode(\"ascii\", \"replace\"))\n",
    "                pass\n",
)]
KILLS = ["stop.ack-line"]
