"""The spool is made with tempfile.mkstemp and never unlinked while open: a named file in TMPDIR that a killed node leaves behind."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    return tempfile.TemporaryFile(mode="w+b", buffering=0, prefix="crawler-", dir=directory)\n',
    '    fd, _path = tempfile.mkstemp(prefix="crawler-", dir=directory)\n'
    '    return os.fdopen(fd, "w+b", buffering=0)\n',
)]
KILLS = ["stream.private-spool"]
