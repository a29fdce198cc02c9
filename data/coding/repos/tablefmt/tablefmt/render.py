"""Rendering rows as text."""


def column_widths(rows, headers):
    """The width of each column: its widest cell, the header included."""
    table = [list(headers)] + [[str(cell) for cell in row] for row in rows]
    return [max(len(row[i]) for row in table) for i in range(len(headers))]


def render(rows, headers):
    """A table with columns two spaces apart, each as wide as its widest cell."""
    table = [list(headers)] + [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
        for row in table
    ]
    return "\n".join(lines) + "\n"
