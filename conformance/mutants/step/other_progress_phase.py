"""The reference node reports its work under another phase name than the upstream's."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "WORK_PHASE = \"copying inputs\"",
    "WORK_PHASE = \"working\"",
)]
KILLS = ["work.progress-phase"]
