"""The result PUT's body is the child's JSON parsed and dumped again with json.dumps' defaults (ensure_ascii), not the spooled bytes."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            put_object(self.config, self.capability, self.result_spool.fileno(), size,\n'
    '                       on_body_sent=body_sent)  # CRAWLER-UPLOAD-2: from the spool, exact Content-Length\n',
    '            document = json.loads(read_spool(self.result_spool.fileno(), size))\n'
    '            body = json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8")\n'
    '            put_object(self.config, self.capability, body, len(body), on_body_sent=body_sent)\n',
)]
KILLS = ["upload.body"]
