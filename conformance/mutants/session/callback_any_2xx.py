"""Any 2xx answer is taken as the verb's success, whatever status the table gives it."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if response.status != expected:  # SESSION-CALLBACK-5: a 3xx included, never followed\n',
    '                if not 200 <= response.status < 300:\n',
)]
KILLS = ["callback.refusals"]
