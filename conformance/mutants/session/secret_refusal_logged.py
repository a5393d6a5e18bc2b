"""A refused capability call is logged on stderr with the refusal's body, its detail included."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                data = read_some(response, MAX_ERROR_BODY_BYTES)\n',
    '                data = read_some(response, MAX_ERROR_BODY_BYTES)\n'
    '                say("control plane refused %s: %s" % (method, bytes(data).decode("ascii", "replace")))\n',
)]
KILLS = ["secret.not-repeated"]
