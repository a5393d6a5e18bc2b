"""A failed result PUT is also reported in a failure bundle through the same capability, so the broker hears why (D12 forbids it: create-only)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            # CRAWLER-UPLOAD-4 (D12): no retry, no bundle: create-only refuses a second PUT if the first was stored\n'
    '            return Outcome(FAILED, CRAWLER_UPLOAD_FAILED)\n',
    '            body = failure_bundle(self.request, self.request_digest, CRAWLER_UPLOAD_FAILED)\n'
    '            try:\n'
    '                put_object(self.config, self.capability, body, len(body))  # tell the broker why\n'
    '            except Exception:\n'
    '                pass\n'
    '            return Outcome(FAILED, CRAWLER_UPLOAD_FAILED)\n',
)]
KILLS = ["upload.refused", "upload.create-only"]
