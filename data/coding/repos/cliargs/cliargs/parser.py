"""A tiny command-line option parser."""


def parse_args(argv, spec):
    """Parse ``--name value`` (or ``--name=value``) options and ``--flag`` switches.

    ``spec`` maps option names to a type (``int``, ``float``, ``str``), or to ``bool`` for a
    switch that takes no value. Other arguments are collected under ``"args"``. Unknown
    options raise ValueError; when an option is given twice, the last value wins.
    """
    result = {name: (False if kind is bool else None) for name, kind in spec.items()}
    positional = []
    pending = list(argv)
    while pending:
        arg = pending.pop(0)
        if not arg.startswith("--"):
            positional.append(arg)
            continue
        name, _, inline = arg[2:].partition("=")
        if name not in spec:
            raise ValueError(f"unknown option: --{name}")
        kind = spec[name]
        if kind is bool:
            result[name] = True
            continue
        if inline:
            raw = inline
        elif pending:
            raw = pending.pop(0)
        else:
            raise ValueError(f"option --{name} needs a value")
        result[name] = kind(raw)
    result["args"] = positional
    return result
