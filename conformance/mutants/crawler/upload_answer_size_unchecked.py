"""The store's answer is read up to the bound but its size is never checked, so an answer past MAX_UPLOAD_RESPONSE_BYTES without a Content-Length counts as stored."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            wipe(answer)  # not a secret, but registered like every answer buffer\n'
    '            if count > MAX_UPLOAD_RESPONSE_BYTES:\n'
    '                raise PutFailed(True, "answer too large")\n',
    '            wipe(answer)\n',
)]
KILLS = ["upload.answer-bound"]
