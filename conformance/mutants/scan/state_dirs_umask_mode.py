"""The trees' directories are made with the default mode (the umask's 0755) and never narrowed, as os.makedirs(path) would leave them."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    "            os.mkdir(directory, 0o700)\n"
    "        except FileExistsError:",
    "            os.mkdir(directory)\n"
    "        except FileExistsError:",
), (
    "    if stat.S_IMODE(info.st_mode) != 0o700:  # a umask can only remove bits; put exactly 0700 back\n"
    "        os.chmod(path, 0o700)\n",
    "    pass\n",
)]
KILLS = ["state.private-trees"]
