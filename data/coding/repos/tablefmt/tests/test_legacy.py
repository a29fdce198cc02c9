import pytest

from tablefmt import tabulate_rows


def test_tabulate_rows_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert "cell" in tabulate_rows([["cell"]], ["h"])
