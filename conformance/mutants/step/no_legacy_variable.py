"""Only LSPO_CREDENTIALS_FILE is read; images that set the legacy LSPO_CREDENTIALS fall through to the default path."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    elif legacy:  # STEP-CREDS-1: then the legacy name\n"
    "        path, variable = legacy, \"named by \" + LEGACY_CREDENTIALS_ENV\n",
    "",
)]
KILLS = ["creds.legacy-variable"]
