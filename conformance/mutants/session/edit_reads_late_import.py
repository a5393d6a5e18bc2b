"""answer_probe() names decimal, which only worker_imports() binds: the probe child never runs worker_imports(), so the name is unbound there and every probe fails with NameError."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        keys["truncated"] = False\n',
    '        keys["truncated"] = not decimal\n',
)]
KILLS = ["node.edit-surface"]
