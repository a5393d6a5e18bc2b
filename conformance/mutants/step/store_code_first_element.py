"""The store's code is read only when it is the error document's first element: a document with a namespace or a Message first is classified without its code (a 400 RequestTimeout becomes permanent)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "_STORE_CODE_RE = re.compile(r\"<Code>([^<]{1,64})</Code>\")\n",
    "_STORE_CODE_RE = re.compile(r\"<Error><Code>([^<]{1,64})</Code>\")\n",
)]
KILLS = ["peer.error-bodies"]
