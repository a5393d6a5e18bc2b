"""A refusal's body is parsed strictly: a member with an integer past 2^53 hides its code."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "            doc = parse_answer(view[:count])  # D41: members nobody defined, floats among them, are no error\n",
    "            doc = parse_lenient(view[:count], floats=True)\n",
)]
KILLS = ["peer.refusal-members"]
