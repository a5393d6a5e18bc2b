"""The crawl request's adapter_id is not compared with public.https (only the version is), so another adapter's request is fetched as if it were this one (D5)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'if not (same(value["schema_version"], REQUEST_SCHEMA) and same(value["adapter_id"], ADAPTER_ID)\n',
    'if not (same(value["schema_version"], REQUEST_SCHEMA)\n',
)]
KILLS = ["boot.strict-request"]
