"""A :fail report the broker did not acknowledge with 204 is sent once more, though FAIL-2 makes it a single best-effort attempt."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            report_failure(self.config, code)  # CRAWLER-FAIL-2: best effort; the outcome is the same either way\n',
    '            if not report_failure(self.config, code):  # not acknowledged: one more try\n'
    '                report_failure(self.config, code)\n',
)]
KILLS = ["fail.best-effort"]
