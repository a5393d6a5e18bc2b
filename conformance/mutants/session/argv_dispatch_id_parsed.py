"""The dispatch id is accepted when uuid.UUID() parses it (any case, braces, urn:uuid:, any version)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    return is_canonical_uuid(value) and value[14] == "4" and value[19] in "89ab"\n',
    '    try:\n'
    '        uuid.UUID(value)\n'
    '        return True\n'
    '    except (ValueError, TypeError):\n'
    '        return False\n',
)]
KILLS = ["argv.dispatch-values"]
