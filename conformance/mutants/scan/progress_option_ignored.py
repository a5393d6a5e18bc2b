"""--no-progress is parsed and ignored: the journal is kept and progress is sent to a server that has no route for it."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('node_path=os.path.abspath(__file__), progress=not args.no_progress,',
     'node_path=os.path.abspath(__file__), progress=True,'),
]
KILLS = ["progress.optional"]
