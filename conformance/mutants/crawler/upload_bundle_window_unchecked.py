"""The upload window is checked before the result PUT only, not before a failure bundle, so an expired URL is presented for the bundle."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        if REPORT_PLACE.get(code) != BUNDLE or self.window_left() < UPLOAD_MIN_WINDOW_S:\n',
    '        if REPORT_PLACE.get(code) != BUNDLE:\n',
)]
KILLS = ["upload.expired-window-bundle"]
