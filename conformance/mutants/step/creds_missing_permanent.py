"""A credentials file that does not exist is called permanent (a first version thinks missing configuration cannot fix itself)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        raise Transient(\"the credentials file %s does not exist\" % variable) from None\n",
    "        raise Permanent(\"the credentials file %s does not exist\" % variable) from None\n",
)]
KILLS = ["creds.startup-missing", "creds.file-vanishes"]
