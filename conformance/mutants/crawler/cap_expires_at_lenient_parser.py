"""expires_at is parsed with a lenient ISO-8601 parser (the step node's utc_timestamp block: offsets, lowercase z, a space for T), not the canonical-timestamp form."""
NODE = "nodes/crawler_job.py"
# The crawler does not embed the utc_timestamp block, so the mutant brings a copy of it.
REPLACE = [(
    'def check_capability(capability, request, request_digest, config, now):\n',
    '_UTC_TIMESTAMP_RE = re.compile(\n'
    '    r"(\\d{4})-(\\d{2})-(\\d{2})"\n'
    '    r"(?:[Tt ](\\d{2}):(\\d{2})(?::(\\d{2})(?:[.,](\\d{1,9}))?)?)?"\n'
    '    r"(?:([Zz])|([+-])(\\d{2}):?(\\d{2}))?\\Z"\n'
    ')\n'
    '\n'
    '\n'
    'def parse_utc_timestamp(text):\n'
    '    """ISO-8601 text to epoch seconds, or None when it is not a usable time.\n'
    '\n'
    '    A trailing Z and an explicit offset are honoured; a time without a zone is\n'
    "    taken as UTC.  The same grammar on every Python version (3.9's\n"
    '    datetime.fromisoformat accepts neither Z nor most fraction widths).\n'
    '    """\n'
    '    if not isinstance(text, str):\n'
    '        return None\n'
    '    match = _UTC_TIMESTAMP_RE.match(text.strip())\n'
    '    if match is None:\n'
    '        return None\n'
    '    year, month, day, hour, minute, second, fraction, _z, sign, off_h, off_m = match.groups()\n'
    '    try:\n'
    '        moment = datetime.datetime(\n'
    '            int(year), int(month), int(day), int(hour or 0), int(minute or 0),\n'
    '            int(second or 0), int((fraction or "0")[:6].ljust(6, "0")),\n'
    '            tzinfo=datetime.timezone.utc,\n'
    '        )\n'
    '        if sign:\n'
    '            offset = datetime.timedelta(hours=int(off_h), minutes=int(off_m))\n'
    '            moment = moment - offset if sign == "+" else moment + offset\n'
    '    except (ValueError, OverflowError):\n'
    '        return None\n'
    '    return moment.timestamp()\n'
    '\n'
    '\n'
    'def check_capability(capability, request, request_digest, config, now):\n',
), (
    '    expires_at = parse_timestamp(capability["expires_at"])\n',
    '    expires_at = parse_utc_timestamp(capability["expires_at"])\n',
)]
KILLS = ["cap.forms"]
