"""The depth pre-scan's string pattern needs a closing quote, as a first version writes it: on a
document of unclosed quotes every quote rescans to the end, and a hostile child result holds the
node for hours."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    """_JSON_TOKEN_RE = re.compile(r'"[^"\\\\]*(?:\\\\.[^"\\\\]*)*(?:"|\\\\?\\Z)|[\\[\\]{}]', re.DOTALL)""",
    """_JSON_TOKEN_RE = re.compile(r'"[^"\\\\]*(?:\\\\.[^"\\\\]*)*"|[\\[\\]{}]', re.DOTALL)""",
)]
KILLS = ["report.hostile-json"]
