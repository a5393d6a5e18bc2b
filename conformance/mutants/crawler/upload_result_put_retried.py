"""A failed result PUT is tried once more (a transient store error is common), instead of ending UPLOAD_FAILED at once (D12)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        try:\n'
    '            put_object(self.config, self.capability, self.result_spool.fileno(), size,\n'
    '                       on_body_sent=body_sent)  # CRAWLER-UPLOAD-2: from the spool, exact Content-Length\n',
    '        try:\n'
    '            try:\n'
    '                put_object(self.config, self.capability, self.result_spool.fileno(), size,\n'
    '                           on_body_sent=body_sent)\n'
    '            except PutFailed:\n'
    '                if STOP.requested:\n'
    '                    raise\n'
    '                put_object(self.config, self.capability, self.result_spool.fileno(), size,\n'
    '                           on_body_sent=body_sent)  # one retry\n',
)]
KILLS = ["upload.refused", "upload.create-only", "upload.redirect", "upload.deadline"]
