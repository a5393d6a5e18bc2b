"""A PUT answered with a body is taken for a failure, as if the store only ever answered an empty 200 (GCS's JSON API sends the object's resource)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            if count > MAX_UPLOAD_RESPONSE_BYTES:\n',
    '            if count:  # a stored object answers with nothing\n',
)]
KILLS = ["peer.store-answer"]
