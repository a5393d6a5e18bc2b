"""A refusal's code is taken as the body says it, whatever its form (a lower-case word included)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    return code if is_code(code) else fallback  # SESSION-SECRET-3: the code only, never the detail\n',
    '    return code.upper() if isinstance(code, str) and code else fallback\n',
)]
KILLS = ["dispatch.refusal"]
