"""The envelope's inputs is not checked at start-up: a string is taken as a list of characters, each refused only when reached, after the manifest was read."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if inputs and not isinstance(inputs, list):\n"
    "        raise Permanent(\"the credentials envelope's inputs is not a list\")\n",
    "",
)]
KILLS = ["creds.malformed-inputs"]
