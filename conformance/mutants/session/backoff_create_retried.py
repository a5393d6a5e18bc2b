"""An acquisition create that fails transiently is sent again after a backoff, like an acquisition read."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            doc = self.callbacks.call("acquire", canonical_bytes(body), key, cap=ceiling, need_object=True).doc\n',
    '            try:\n'
    '                doc = self.callbacks.call("acquire", canonical_bytes(body), key, cap=ceiling,\n'
    '                                          need_object=True).doc\n'
    '            except Refusal as first:\n'
    '                if not first.transient:\n'
    '                    raise\n'
    '                self.acquisition_wait(backoff_delay(1, ACQUISITION_POLL_S), ceiling)\n'
    '                doc = self.callbacks.call("acquire", canonical_bytes(body), key, cap=ceiling,\n'
    '                                          need_object=True).doc\n',
)]
KILLS = ["backoff.never-retried"]
