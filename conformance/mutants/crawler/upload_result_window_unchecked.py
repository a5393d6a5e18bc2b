"""The upload window is not checked again before the result PUT (it was checked when the capability arrived), so an expired URL is presented."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        if self.window_left() < UPLOAD_MIN_WINDOW_S:  # CRAWLER-UPLOAD-5: the store would refuse an expired URL\n'
    '            return Outcome(FAILED, CRAWLER_UPLOAD_CAPABILITY_EXPIRED)\n',
    '',
)]
KILLS = ["upload.expired-window"]
