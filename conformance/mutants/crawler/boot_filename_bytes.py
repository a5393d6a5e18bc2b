"""The filename's length is measured in UTF-8 bytes (as a file system would), not in characters, so a 255-character non-ASCII name is refused (BOOT-5)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'if not isinstance(filename, str) or not 1 <= len(filename) <= 255 or',
    'if not isinstance(filename, str) or not 1 <= len(filename.encode("utf-8")) <= 255 or',
)]
KILLS = ["boot.strict-request"]
