"""The fetch deadline is the fetch timeout alone, not shortened to keep UPLOAD_RESERVE_S of the capability window."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        fetch_deadline = Deadline(self.work_budget(config.timeouts.fetch))  # CRAWLER-FETCH-7: keeps the PUT's reserve\n",
    "        fetch_deadline = Deadline(config.timeouts.fetch)\n",
)]
KILLS = ["fetch.deadline"]
