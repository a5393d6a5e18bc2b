"""A refusal's body is parsed strictly: a member with an integer past 2^53 hides its code."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    try:\n"
    "        with memoryview(buffer) as view:\n"
    "            doc = parse_answer(view[:count])  # D41: members nobody defined, floats among them, are no error\n"
    "    except JsonError:\n"
    "        return fallback\n",
    "    try:\n"
    "        with memoryview(buffer) as view:\n"
    "            doc = parse_lenient(view[:count], floats=True)\n"
    "    except JsonError:\n"
    "        return fallback\n",
)]
KILLS = ["peer.refusal-members"]
