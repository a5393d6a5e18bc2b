"""The failure bundle is sent as Content-Type application/json (it is plain JSON, not a result) instead of the capability's signed header value."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            put_object(self.config, self.capability, body, len(body))  # CRAWLER-REPORT-2: the same seven headers\n',
    '            headers = [(name, "application/json" if name == "Content-Type" else value)\n'
    '                       for name, value in self.capability.headers]\n'
    '            put_object(self.config, self.capability._replace(headers=headers), body, len(body))\n',
)]
KILLS = ["report.bundle"]
