"""The manifest GET is made once, as the upstream did: an expired-looking refusal ends the run even when the envelope was already replaced."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            data = self.with_refresh(\n"
    "                lambda env: get_document(env.get(\"manifest_get\"), \"reading the manifest\", MAX_DOCUMENT_BYTES),\n"
    "                \"reading the manifest\")\n",
    "            data = get_document(envelope.get(\"manifest_get\"), \"reading the manifest\", MAX_DOCUMENT_BYTES)\n",
)]
KILLS = ["fault.manifest.expired-rotated"]
