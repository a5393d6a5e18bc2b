"""Control-plane answers are parsed with the node's own strict parser: an integer past 2^53 in a member nobody uses fails the claim."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "                doc = parse_answer(view[:count])\n"
    "        except JsonError:\n"
    "            raise Refusal(CONTROL_PLANE_RESPONSE_INVALID, response.status) from None\n",
    "                doc = parse_lenient(view[:count], floats=True)\n"
    "        except JsonError:\n"
    "            raise Refusal(CONTROL_PLANE_RESPONSE_INVALID, response.status) from None\n",
)]
KILLS = ["peer.claim-members"]
