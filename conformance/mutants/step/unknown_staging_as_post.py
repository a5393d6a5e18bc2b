"""Any staging mode other than local_path is taken for presigned_post instead of being refused."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    # STEP-CREDS-5: no staging, nowhere to write: permanent\n    if not isinstance(staging, dict) or staging.get(\"mode\") not in STAGING_MODES:\n",
    "    if not isinstance(staging, dict):\n",
), (
    "    if staging[\"mode\"] == \"presigned_post\":\n",
    "    if staging.get(\"mode\") != \"local_path\":\n",
)]
KILLS = ["creds.startup-unknown-staging"]
