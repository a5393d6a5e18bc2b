"""The exchange URL from argv is used as given: only the audience is compared with the origin."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if dispatch.exchange_url != config.origin + EXCHANGE_PATH % dispatch.dispatch_id:\n'
    '        raise SessionError(SESSION_DISPATCH_URL_UNRECOGNIZED, "the exchange URL is not this origin\'s")\n',
    '',
)]
KILLS = ["dispatch.names-this-plane"]
