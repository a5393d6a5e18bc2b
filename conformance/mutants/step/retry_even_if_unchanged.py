"""After an expired-looking refusal the request is retried once whether or not the envelope changed."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            if fresh == used:  # STEP-CREDS-4: by value; every re-read builds a new object\n"
    "                raise\n",
    "",
)]
KILLS = ["creds.no-retry-unchanged", "creds.same-bytes-no-retry"]
