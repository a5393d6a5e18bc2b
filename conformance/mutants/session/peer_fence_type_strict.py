"""producer_fence is compared by its JSON encoding: 7.0 is not the lease's fence 7."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if not ok or not same_number(doc.get("producer_fence"), lease.fence) or any(\n',
    '    if not ok or not same(doc.get("producer_fence"), lease.fence) or any(\n',
)]
KILLS = ["peer.acquisition-numbers"]
