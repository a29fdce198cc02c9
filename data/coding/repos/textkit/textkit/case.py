"""Letter case of titles."""


def title_case(text):
    """Capitalize every word of a title (the rest of each word in lower case)."""
    return " ".join(word.capitalize() for word in text.split())
