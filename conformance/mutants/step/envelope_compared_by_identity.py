"""The re-read envelope is compared with `is` instead of `==`, so every re-read looks like a rotation."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            if fresh == used:  # STEP-CREDS-4: by value; every re-read builds a new object\n",
    "            if fresh is used:\n",
)]
KILLS = ["creds.same-bytes-no-retry", "creds.no-retry-unchanged"]
