"""Imports setproctitle (when installed) to name the capability process in ps: a third-party module in a node that must run on a bare Python."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    PROCESS.open_wake()\n"
    "    install_handlers(on_signal)\n",
    "    PROCESS.open_wake()\n"
    "    install_handlers(on_signal)\n"
    "    try:\n"
    "        import setproctitle  # a readable name in ps, where the module is installed\n"
    "        setproctitle.setproctitle(PROGRAM)\n"
    "    except ImportError:\n"
    "        pass\n",
)]
KILLS = ["node.stdlib"]
