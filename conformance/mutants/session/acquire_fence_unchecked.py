"""The acquisition's producer_fence is not compared with the lease's fence, so another attempt's acquisition is read."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if not ok or not same_number(doc.get("producer_fence"), lease.fence) or any(\n',
    '    if not ok or any(\n',
)]
KILLS = ["acquire.misbound"]
