"""One module per research question: its experiment grid, its tables and its figures."""
