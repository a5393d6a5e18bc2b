"""An undelivered bundle whose window ran out is reported as CAPABILITY_EXPIRED, the result PUT's code, instead of the bundle's own code."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            return Outcome(STOPPED if stopped else FAILED, code)  # (a stop: 143, D13)\n',
    '            return Outcome(STOPPED if stopped else FAILED, CRAWLER_UPLOAD_CAPABILITY_EXPIRED)\n',
)]
KILLS = ["upload.expired-window-bundle"]
