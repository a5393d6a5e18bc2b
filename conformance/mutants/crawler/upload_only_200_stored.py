"""Only 200 OK counts as stored: a 201 Created from the store is taken for a failure."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            if response.status not in (200, 201):  # CRAWLER-UPLOAD-3: a 3xx is never followed\n',
    '            if response.status != 200:\n',
)]
KILLS = ["upload.status-201"]
