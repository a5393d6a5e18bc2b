"""The envelope's schema_version is never looked at, so a version-2 envelope is used as if it were version 1."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if not is_int(version) or version != 1:  # STEP-CREDS-5: True is not 1\n"
    "        raise Permanent(\"the credentials envelope's schema_version is not 1\")\n",
    "",
)]
KILLS = ["creds.startup-version-2", "creds.startup-version-bool"]
