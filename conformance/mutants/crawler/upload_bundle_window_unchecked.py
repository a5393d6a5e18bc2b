"""The upload window is checked before the result PUT only, not before a failure bundle, so an expired URL is presented for the bundle."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        if self.window_left() < UPLOAD_MIN_WINDOW_S:  # CRAWLER-UPLOAD-5: never present an expired URL;\n'
    '            # the bundle is simply not delivered, so the line keeps its own code (CRAWLER-REPORT-2)\n'
    '            return settle(code, STATUS_FAILED, EXIT_CANCELLED if stopped else EXIT_FAILED)  # (a stop: 143, D13)\n',
    '',
)]
KILLS = ["upload.expired-window-bundle"]
