"""An answer of exactly MAX_BOOTSTRAP_RESPONSE_BYTES is refused (>= for >): the bound is taken as exclusive (BOOT-3)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            if count > MAX_BOOTSTRAP_RESPONSE_BYTES:  # CRAWLER-BOOT-3: else the cut answer is parsed: the wrong code\n',
    '            if count >= MAX_BOOTSTRAP_RESPONSE_BYTES:\n',
)]
KILLS = ["boot.oversize"]
