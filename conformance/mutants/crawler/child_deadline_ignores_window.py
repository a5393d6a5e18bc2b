"""The child's deadline is the child timeout alone, not shortened to keep UPLOAD_RESERVE_S of the capability window."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        child_deadline = Deadline(self.work_budget(config.timeouts.child))  # CRAWLER-CHILD-7: keeps the PUT's reserve\n",
    '        child_deadline = Deadline(config.timeouts.child)\n',
)]
KILLS = ["child.window-cap"]
