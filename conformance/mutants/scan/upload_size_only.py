"""Before the upload only the ready file's size is compared with the state's bundle record, not its digest: a bundle changed in place after adoption is uploaded."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                if size != bundle.get("bytes") or digest != bundle.get("payload_sha256"):',
    '                if size != bundle.get("bytes"):',
)]
KILLS = ["upload.adopted-bytes"]
