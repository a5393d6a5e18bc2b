"""The :redeem call also sends its token in X-Serverless-Authorization (Cloud Run's alternative header), a second place for the token."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            conn.putrequest(\"POST\", session.target.request_target, skip_accept_encoding=True)\n"
    "            conn.putheader(\"Accept\", \"application/json\")  # CRAWLER-BOOT-1: asks for the JSON the parser expects\n"
    "            conn.putheader(\"Authorization\", authorization)  # CRAWLER-SECRET-2: the only place the token goes\n"
    "            # CRAWLER-BOOT-1: without it the broker cannot tell which execution spent the bootstrap\n"
    "            conn.putheader(\"X-Mostlyright-Cloud-Run-Execution\", config.execution)\n",
    "            conn.putrequest(\"POST\", session.target.request_target, skip_accept_encoding=True)\n"
    "            conn.putheader(\"Accept\", \"application/json\")  # CRAWLER-BOOT-1: asks for the JSON the parser expects\n"
    "            conn.putheader(\"Authorization\", authorization)\n"
    "            conn.putheader(\"X-Serverless-Authorization\", authorization)  # for Cloud Run's own check\n"
    "            # CRAWLER-BOOT-1: without it the broker cannot tell which execution spent the bootstrap\n"
    "            conn.putheader(\"X-Mostlyright-Cloud-Run-Execution\", config.execution)\n",
)]
KILLS = ["secret.confinement"]
