"""Reading delimited text into records."""


def split_line(line, delimiter=","):
    """Split one line on the delimiter; double quotes protect delimiters ("" is a quote)."""
    fields, current, quoted = [], [], False
    index = 0
    while index < len(line):
        char = line[index]
        if char == '"':
            if quoted and line[index + 1 : index + 2] == '"':
                current.append('"')
                index += 1
            else:
                quoted = not quoted
        elif char == delimiter and not quoted:
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    fields.append("".join(current))
    return fields


def read_records(text, delimiter=","):
    """Read delimited text with a header line into a list of dicts (all values are strings)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = split_line(lines[0], delimiter)
    records = []
    for number, line in enumerate(lines[1:], start=2):
        values = split_line(line, delimiter)
        if len(values) != len(header):
            raise ValueError(f"line {number} has {len(values)} fields, expected {len(header)}")
        records.append(dict(zip(header, values)))
    return records
