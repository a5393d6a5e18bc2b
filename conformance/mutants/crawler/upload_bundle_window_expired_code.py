"""An undelivered bundle whose window ran out is reported as CAPABILITY_EXPIRED, the result PUT's code, instead of the bundle's own code."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            return settle(code, STATUS_FAILED, EXIT_CANCELLED if stopped else EXIT_FAILED)  # (a stop: 143, D13)\n',
    '            return settle(CRAWLER_UPLOAD_CAPABILITY_EXPIRED, STATUS_FAILED, EXIT_CANCELLED if stopped else EXIT_FAILED)\n',
)]
KILLS = ["upload.expired-window-bundle"]
