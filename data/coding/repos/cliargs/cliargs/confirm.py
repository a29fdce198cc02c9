"""Answers to yes/no questions."""


def parse_yes_no(answer):
    """Interpret a y/n answer (case-insensitive): ``"y"`` is True and ``"n"`` is False."""
    word = answer.strip().lower()
    if word == "y":
        return True
    if word == "n":
        return False
    raise ValueError(f"not a yes/no answer: {answer!r}")
