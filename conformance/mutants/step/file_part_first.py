"""The multipart body puts the file part first and the policy fields after it (S3 ignores fields after the file)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    head = bytearray()\n"
    "    for name, value in multipart_parts(post, key):\n"
    "        head += ('--%s",
    "    head = bytearray()\n"
    "    fields = bytearray()\n"
    "    for name, value in multipart_parts(post, key):\n"
    "        fields += ('--%s",
), (
    "        head += str(value).encode(\"utf-8\") + b\"\\r\\n\"\n",
    "        fields += str(value).encode(\"utf-8\") + b\"\\r\\n\"\n",
), (
    "    tail = (\"\\r\\n--%s--\\r\\n\" % boundary).encode(\"ascii\")\n",
    "    tail = b\"\\r\\n\" + bytes(fields) + (\"--%s--\\r\\n\" % boundary).encode(\"ascii\")\n",
)]
KILLS = ["output.multipart"]
