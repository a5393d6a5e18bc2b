"""The scratch directory is never removed: files and the directory stay in TMPDIR after exit."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            shutil.rmtree(self.scratch, ignore_errors=True)  # STEP-STREAM-3: nothing left behind\n",
    "            pass\n",
)]
KILLS = ["stream.scratch-success", "stream.scratch-failure", "stream.scratch-used"]
