"""An envelope that names no manifest is run with an empty manifest ({}), instead of being refused."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            # STEP-MANIFEST-1: nothing to read is permanent\n            raise Permanent(\"the envelope names neither manifest_get nor manifest_path\")\n",
    "            data = b\"{}\"\n",
)]
KILLS = ["manifest.no-source"]
