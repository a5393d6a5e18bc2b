"""row_count, column_names, row_digest and parsed_schema_digest are checked for form only, never against the content (the upstream's trust in the child)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    require(same(content_summary(content, query["data_format"]),\n'
    '                 [rows, columns, receipt["row_digest"], receipt["parsed_schema_digest"]]))\n',
    '',
)]
KILLS = ["result.content"]
