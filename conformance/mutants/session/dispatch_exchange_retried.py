"""A transport failure of the exchange is retried once, as a generic HTTP client would."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        status, buffer, count = post_entry(dispatch.exchange_url, token, length, body,\n'
    '                                           SESSION_DISPATCH_EXCHANGE_FAILED, SESSION_DISPATCH_RESPONSE_INVALID)\n',
    '        try:\n'
    '            status, buffer, count = post_entry(dispatch.exchange_url, token, length, body,\n'
    '                                               SESSION_DISPATCH_EXCHANGE_FAILED, SESSION_DISPATCH_RESPONSE_INVALID)\n'
    '        except SessionError:\n'
    '            status, buffer, count = post_entry(dispatch.exchange_url, token, length, body,\n'
    '                                               SESSION_DISPATCH_EXCHANGE_FAILED, SESSION_DISPATCH_RESPONSE_INVALID)\n'
    '        if status in (301, 302, 303, 307, 308):\n'
    '            status, buffer, count = post_entry(dispatch.exchange_url, token, length, body,\n'
    '                                               SESSION_DISPATCH_EXCHANGE_FAILED, SESSION_DISPATCH_RESPONSE_INVALID)\n',
)]
KILLS = ["dispatch.exchange-request"]
