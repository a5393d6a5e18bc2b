"""The PUT is started with http.client's defaults (no skip_accept_encoding), so it carries the Accept-Encoding: identity header http.client adds to every request."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            conn.putrequest("PUT", request_target, skip_accept_encoding=True)  # CRAWLER-UPLOAD-1: Host first\n',
    '            conn.putrequest("PUT", request_target)\n',
)]
KILLS = ["upload.wire", "report.bundle"]
