from textkit import title_case


def test_title_case_of_one_word():
    assert title_case("pYTHON") == "Python"
    assert title_case("") == ""
