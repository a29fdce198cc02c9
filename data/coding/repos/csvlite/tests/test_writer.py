from csvlite import read_records, write_records


def test_written_records_read_back():
    records = [{"name": "pen", "color": "blue"}, {"name": "ink", "color": "dark red"}]
    assert read_records(write_records(records, ["name", "color"])) == records
