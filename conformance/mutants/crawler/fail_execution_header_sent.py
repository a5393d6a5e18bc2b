"""The :fail report carries X-Mostlyright-Cloud-Run-Execution like :redeem (the same broker, the same headers), though FAIL-1 forbids it."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            conn.putheader("Content-Type", "application/json")  # CRAWLER-FAIL-1: and no execution header\n',
    '            conn.putheader("Content-Type", "application/json")\n'
    '            conn.putheader("X-Mostlyright-Cloud-Run-Execution", config.execution)  # as on :redeem\n',
)]
KILLS = ["fail.shape"]
