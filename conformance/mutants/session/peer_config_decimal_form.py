"""Configuration decimals must be digits with an optional fraction: spaces, an exponent or _ are refused."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    try:\n"
    "        value = float(text)\n"
    "    except ValueError:\n"
    '        raise ConfigError("%s is not a number" % name) from None\n',
    '    if not re.fullmatch(r"[0-9]+(?:\\.[0-9]+)?", text):\n'
    '        raise ConfigError("%s is not a number" % name)\n'
    "    value = float(text)\n",
)]
KILLS = ["peer.config-numbers"]
