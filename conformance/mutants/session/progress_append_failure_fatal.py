"""A refused or unanswered append ends the session with its code, like any other failed callback."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        except (SessionError, StopRequested):\n'
    '            pass  # SESSION-PROGRESS-5: dropped, not retried; the caller looks at the stop and the deadline\n',
    '        except StopRequested:\n'
    '            pass\n',
)]
KILLS = ["progress.append-failures"]
