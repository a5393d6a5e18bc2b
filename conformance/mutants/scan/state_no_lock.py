"""The lock file is created but never flocked, so a second worker on the same trees runs beside the first."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n    except BlockingIOError:',
    '        pass\n    except BlockingIOError:',
)]
KILLS = ["state.one-worker"]
