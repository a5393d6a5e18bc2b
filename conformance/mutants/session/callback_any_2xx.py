"""Any 2xx answer is taken as the verb's success, 202 and 204 included, not only the table's 200 or 201."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if response.status not in SUCCESS_STATUSES:  # SESSION-CALLBACK-5 (D42): a 3xx included, never followed\n',
    '                if not 200 <= response.status < 300:\n',
)]
KILLS = ["callback.refusals"]
