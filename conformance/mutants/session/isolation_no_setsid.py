"""The capability process stays in the monitor's session and process group (no setsid): a kill of its group reaches the monitor."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        os.setsid()  # SESSION-ISOLATION-1: its session and process group are its own pid, before any request\n',
    '        pass  # SESSION-ISOLATION-1: its session and process group are its own pid, before any request\n',
)]
KILLS = ["isolation.processes"]
