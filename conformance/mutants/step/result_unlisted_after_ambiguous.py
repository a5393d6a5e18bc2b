"""A result.json whose write ended without an answer is dropped from the marker ("listed only once accepted"), though the store may hold it."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        action = RESULT_ON_FAILURE[(self.result_state, status)]\n",
    "        action = RESULT_ON_FAILURE[(self.result_state, status)]\n"
    "        if self.result_state == RESULT_UNKNOWN:\n"
    "            self.forget(RESULT_FILENAME)\n",
)]
KILLS = ["result.ambiguous-listed"]
