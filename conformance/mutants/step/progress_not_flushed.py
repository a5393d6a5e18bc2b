"""Progress lines go through sys.stdout.write without a flush, so on a pipe they arrive only at exit."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        _write_fd(1, \"@lspo:progress %s\\n\" % payload)  # STEP-PROGRESS-1: whole line, unbuffered\n",
    "        sys.stdout.write(\"@lspo:progress %s\\n\" % payload)\n",
)]
KILLS = ["progress.flushed"]
