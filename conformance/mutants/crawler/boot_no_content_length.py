"""The body-less :redeem POST is sent without Content-Length: 0 (http.client adds none for putrequest/endheaders), though BOOT-1 requires it."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            conn.putheader("Content-Length", "0")  # CRAWLER-BOOT-1: no body\n',
    '',
)]
KILLS = ["boot.request-shape"]
