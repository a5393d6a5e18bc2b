"""Makes a new request id on every start, so a claim whose answer was lost in a crash is claimed again."""
NODE = "conformance/tests/data/toy_worker.py"
REPLACE = [('request_id = state.get("request_id") or uuid.uuid4().hex', "request_id = uuid.uuid4().hex")]
KILLS = ["state.crash-resume"]
