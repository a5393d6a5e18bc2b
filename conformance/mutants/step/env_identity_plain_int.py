"""Identity variables are parsed with int(), so '-41' (or '+41', ' 4_1') is accepted as an execution id."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if not _DECIMAL_RE.match(text):  # STEP-MANIFEST-4 (D12): no sign, no other digits\n"
    "        return None\n"
    "    return int(text) or None\n",
    "    try:\n"
    "        return int(text)\n"
    "    except ValueError:\n"
    "        return None\n",
)]
KILLS = ["manifest.env-identity-digits"]
