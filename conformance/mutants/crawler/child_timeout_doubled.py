"""The child is given twice its timeout (a grace period for a slow normaliser) before it is killed."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        child_deadline = Deadline(self.work_budget(config.timeouts.child))  # CRAWLER-CHILD-7: keeps the PUT's reserve\n",
    '        child_deadline = Deadline(self.work_budget(2 * config.timeouts.child))\n',
)]
KILLS = ["child.timeout"]
