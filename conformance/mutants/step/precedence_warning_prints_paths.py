"""The warning about disagreeing credentials variables quotes both paths, to be helpful."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        say(\"%s and %s name different files; using %s\" % (  # STEP-CREDS-2: variables, never values\n"
    "            CREDENTIALS_ENV, LEGACY_CREDENTIALS_ENV, CREDENTIALS_ENV))\n",
    "        say(\"%s (%s) and %s (%s) name different files; using %s\" % (\n"
    "            CREDENTIALS_ENV, primary, LEGACY_CREDENTIALS_ENV, legacy, CREDENTIALS_ENV))\n",
)]
KILLS = ["creds.precedence"]
