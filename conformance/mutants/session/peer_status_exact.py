"""Each verb's success is the one status the table writes: a 201 for a claim, or a 200 for a create, is a refusal."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "            return self.exchange(method, url, authorization, body, key, budget, holder, need_object)\n",
    "            answer = self.exchange(method, url, authorization, body, key, budget, holder, need_object)\n"
    '            if answer.status != (201 if verb == "acquire" else 200):\n'
    "                raise Refusal(CONTROL_PLANE_HTTP % answer.status, answer.status)\n"
    "            return answer\n",
)]
KILLS = ["peer.statuses"]
