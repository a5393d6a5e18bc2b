"""A claim answer's session_state must be text or null and claimed a boolean or null: claimed 1 is an unusable answer."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                state, claimed = doc.get("session_state"), bool(doc.get("claimed"))\n',
    '                state, claimed = doc.get("session_state"), doc.get("claimed")\n'
    "                if (state is not None and not isinstance(state, str)) or (\n"
    "                        claimed is not None and not isinstance(claimed, bool)):\n"
    "                    raise Refusal(CONTROL_PLANE_RESPONSE_INVALID, answer.status)\n",
)]
KILLS = ["peer.claim-forms"]
