"""A credentials file that is not JSON is called permanent, although it is usually a half-written rotation."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        raise Transient(\"the credentials file %s is not UTF-8 JSON\" % variable) from None\n",
    "        raise Permanent(\"the credentials file %s is not UTF-8 JSON\" % variable) from None\n",
)]
KILLS = ["creds.startup-not-json"]
