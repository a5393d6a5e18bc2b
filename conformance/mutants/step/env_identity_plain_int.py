"""Identity variables are parsed with int(), so '-41' (or '+41', ' 4_1') is accepted as an execution id."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if not (text.isascii() and text.isdigit()):  # STEP-MANIFEST-4 (D12): ASCII digits only, no sign\n"
    "        return None\n"
    "    return int(text) or None\n",
    "    try:\n"
    "        return int(text)\n"
    "    except ValueError:\n"
    "        return None\n",
)]
KILLS = ["manifest.env-identity-digits"]
