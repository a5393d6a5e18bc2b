"""Progress lines go through sys.stdout.write without a flush, so on a pipe they arrive only at exit."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        write_all(1, (\"@lspo:progress %s\\n\" % payload).encode(\"ascii\"))  # STEP-PROGRESS-1: whole line, unbuffered\n",
    "        sys.stdout.write(\"@lspo:progress %s\\n\" % payload)\n",
)]
KILLS = ["progress.flushed"]
