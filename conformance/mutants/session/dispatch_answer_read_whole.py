"""The exchange's answer is read whole (response.read()) and judged on its size afterwards."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            buffer, count = read_body(response, MAX_SESSION_DISPATCH_RESPONSE_BYTES, budget)\n',
    '            buffer = bytearray(response.read())\n'
    '            count = len(buffer)\n',
), (
    '            if declared is not None and declared > MAX_SESSION_DISPATCH_RESPONSE_BYTES:\n'
    '                raise SessionError(too_large_code, "answer announced too large")  # SESSION-DISPATCH-4: unread\n',
    '',
)]
KILLS = ["dispatch.bounded-answer"]
