"""A probe that fails ends the session with its code, as an unhandled error in a worker loop would."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        except ProbeFailure as failure:\n'
    '            probe.fail(failure.code, failure.retry_after_s)\n',
    '        except ProbeFailure as failure:\n'
    '            raise SessionOver(failure=failure.code) from None\n',
)]
KILLS = ["probe.failure-continues"]
