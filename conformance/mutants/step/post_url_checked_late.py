"""staging.post.url is not validated at start-up; a missing URL is only discovered at the first upload."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if not isinstance(post.get(\"url\"), str):  # STEP-CREDS-7: refused now, not at the first upload\n"
    "            raise Permanent(\"staging.post.url is missing or not a string\")\n"
    "        try:\n"
    "            split_url(post[\"url\"])\n"
    "        except ValueError as exc:\n"
    "            raise Permanent(\"staging.post.url is not a usable URL (%s)\" % exc)\n",
    "",
)]
KILLS = ["creds.startup-missing-post-url"]
