"""With XDG_STATE_HOME unset the state tree falls back to ~/.config, not ~/.local/state."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    state = os.path.join(base("XDG_STATE_HOME", ".local/state"), "truf", "remote-worker")',
    '    state = os.path.join(base("XDG_STATE_HOME", ".config"), "truf", "remote-worker")',
)]
KILLS = ["config.trees"]
