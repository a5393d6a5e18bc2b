"""method is compared ignoring case (HTTP methods look case-insensitive), so a capability with method "put" passes CAP-1."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'same(capability["method"], "PUT")',
    'str(capability["method"]).upper() == "PUT"',
)]
KILLS = ["cap.keys-constants"]
