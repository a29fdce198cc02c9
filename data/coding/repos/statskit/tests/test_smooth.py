from statskit import moving_average


def test_complete_windows():
    assert moving_average([1, 2, 3, 4], 2)[-3:] == [1.5, 2.5, 3.5]
    assert moving_average([1, 2], 1) == [1.0, 2.0]
