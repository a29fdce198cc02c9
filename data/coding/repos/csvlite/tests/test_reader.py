import pytest

from csvlite import read_records, split_line


def test_split_honours_quotes():
    assert split_line('a,"b,c",d') == ["a", "b,c", "d"]
    assert split_line('"say ""hi"""') == ['say "hi"']


def test_read_records():
    text = "name,color\npen,blue\n\nink,black\n"
    assert read_records(text) == [
        {"name": "pen", "color": "blue"},
        {"name": "ink", "color": "black"},
    ]
    assert read_records("a;b\nx;y\n", ";") == [{"a": "x", "b": "y"}]


def test_row_with_too_many_fields():
    with pytest.raises(ValueError):
        read_records("a,b\n1,2,3\n")
