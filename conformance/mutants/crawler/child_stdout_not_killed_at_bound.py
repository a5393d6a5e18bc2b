"""Stdout past MAX_CRAWLER_RESULT_BYTES is only stopped being read, not a reason to kill: a flooding child runs to its deadline."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        if self.stdout_size > MAX_CRAWLER_RESULT_BYTES:  # CRAWLER-CHILD-6: killed at once\n'
    '            self.overflow = "stdout"\n',
    '',
)]
KILLS = ["child.stdout-bound"]
