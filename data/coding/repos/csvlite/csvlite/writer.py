"""Writing records as delimited text."""


def write_records(records, fields, delimiter=","):
    """Write records (dicts) under a header line; values are written as they are."""
    lines = [delimiter.join(fields)]
    for record in records:
        lines.append(delimiter.join(str(record.get(name, "")) for name in fields))
    return "\n".join(lines) + "\n"
