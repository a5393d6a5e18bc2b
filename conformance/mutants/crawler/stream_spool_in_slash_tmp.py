"""The spools go to /tmp, hard-coded, whatever TMPDIR says."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    return tempfile.TemporaryFile(mode="w+b", buffering=0, prefix="crawler-", dir=directory)\n',
    '    return tempfile.TemporaryFile(mode="w+b", buffering=0, prefix="crawler-", dir="/tmp")\n',
)]
KILLS = ["stream.private-spool"]
