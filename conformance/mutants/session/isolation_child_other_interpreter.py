"""A probe child runs under the system's python3 rather than the node's own interpreter (a venv's or --python's is lost)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            [sys.executable, "-I", "-S", program, PROBE_CHILD_FLAG],',
    '            ["/usr/bin/python3", "-I", "-S", program, PROBE_CHILD_FLAG],',
)]
KILLS = ["isolation.sandbox"]
