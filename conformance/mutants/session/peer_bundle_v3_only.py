"""Only the first crawler result schema is read as a bundle: a v1 result is invalid."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    require(isinstance(result, dict) and result.get("schema_version") in CRAWLER_RESULT_SCHEMAS)\n',
    '    require(isinstance(result, dict) and result.get("schema_version") == CRAWLER_RESULT_SCHEMAS[0])\n',
)]
KILLS = ["peer.bundle-forms"]
