"""Each verb's success is the one status the table writes: a 201 for a claim, or a 200 for a create, is a refusal."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "                if response.status not in SUCCESS_STATUSES:  # SESSION-CALLBACK-5 (D42): a 3xx included, never followed\n",
    '                if response.status != (201 if verb == "acquire" else 200):\n',
)]
KILLS = ["peer.statuses"]
