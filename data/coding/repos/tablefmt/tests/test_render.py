from tablefmt import column_widths, render


def test_render_shows_every_cell():
    text = render([["pen", 2], ["notebook", 12]], ["item", "qty"])
    assert all(cell in text for cell in ("item", "qty", "pen", "2", "notebook", "12"))
    assert text.endswith("\n")


def test_column_widths():
    assert column_widths([["a", 100]], ["name", "n"]) == [4, 3]
