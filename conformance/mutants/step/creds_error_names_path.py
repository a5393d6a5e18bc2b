"""Start-up errors name the credentials file by its path instead of by its variable."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        creds = Credentials(config.credentials_path, config.credentials_variable)\n",
    "        creds = Credentials(config.credentials_path, config.credentials_path)\n",
)]
KILLS = ["creds.startup-missing", "creds.startup-not-json"]
