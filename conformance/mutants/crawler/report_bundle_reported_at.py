"""The failure bundle carries one more field, the time it was reported, so it is no longer the canonical six-key bundle."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '                            "adapter_version": request["adapter_version"], "failure_code": code})\n',
    '                            "adapter_version": request["adapter_version"], "failure_code": code,\n'
    '                            "reported_at": datetime.datetime.now(datetime.timezone.utc).isoformat()})\n',
)]
KILLS = ["report.bundle", "report.no-detail"]
