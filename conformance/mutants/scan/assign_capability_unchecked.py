"""The assignment's source, platform and planning kind are not compared with the worker's capabilities, so an assignment this build cannot run is started anyway."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    need([source, platform, assignment["planning_kind"]] in [list(c) for c in capabilities], "capability")',
    '    pass',
)]
KILLS = ["assign.incompatible"]
