"""Page cache is never released (no fsync + posix_fadvise DONTNEED), so a large copy fills the cgroup with cache."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    try:\n"
    "        if dirty:\n"
    "            os.fsync(fd)\n"
    "        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # STEP-STREAM-2\n",
    "    return\n"
    "    try:\n"
    "        if dirty:\n"
    "            os.fsync(fd)\n"
    "        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # STEP-STREAM-2\n",
)]
KILLS = ["stream.cgroup"]
