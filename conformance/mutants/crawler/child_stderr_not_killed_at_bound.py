"""Stderr past MAX_CHILD_STDERR_BYTES is only stopped being read, not a reason to kill: a child flooding stderr runs to its deadline."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        if len(self.stderr) > MAX_CHILD_STDERR_BYTES:  # CRAWLER-CHILD-6: 513 bytes is already inadmissible\n'
    '            self.overflow = "stderr"\n',
    '',
)]
KILLS = ["child.stderr-bound"]
