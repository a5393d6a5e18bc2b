"""The rows are joined by a comma without the newline, so a string may run from one line into the next and one row over two lines reads as one."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '.rstrip("\\n").replace("\\n", ",\\n") + "]")\n',
    '.rstrip("\\n").replace("\\n", ",") + "]")\n',
)]
KILLS = ["peer.content-rows"]
