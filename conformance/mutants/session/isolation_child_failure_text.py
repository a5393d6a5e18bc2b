"""The probe child's failure line carries the exception's text beside the code, as a log line would."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        write_all(2, canonical_bytes({"code": code, "status": STATUS_FAILED}) + b"\\n")\n',
    '        write_all(2, canonical_bytes({"code": code, "detail": str(exc)[:100], "status": STATUS_FAILED}) + b"\\n")\n',
)]
KILLS = ["isolation.child-protocol"]
