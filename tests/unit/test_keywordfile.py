"""Reading keyword CSV files: what is accepted, and every refusal with its line number."""

from pathlib import Path

import pytest

from farm.keywordfile import MAX_LINE_BYTES, KeywordFileError, read_keywords

DEMO_KEYWORDS = Path(__file__).resolve().parents[2] / "farm" / "demo" / "keywords.csv"


def write(tmp_path, content, name="keywords.csv"):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def refusal(path):
    with pytest.raises(KeywordFileError) as info:
        list(read_keywords(path))
    return info.value


def test_reads_keywords_with_their_line_numbers(tmp_path):
    path = write(tmp_path, "source,city,job\nboss,北京,python\nqcwy,上海,前端\n")
    assert list(read_keywords(path)) == [
        (2, "boss", "北京", "python"),
        (3, "qcwy", "上海", "前端"),
    ]


def test_bom_blanks_crlf_quotes_and_blank_lines_are_fine(tmp_path):
    content = (
        "\ufeff source , city,job \r\n"
        "  boss ,  北京 , python  \r\n"
        "\r\n"
        '"zhilian","杭州","java, senior"\r\n'
        "   \r\n"
        "qcwy,101010100,go"  # no final newline
    )
    path = write(tmp_path, content)
    assert list(read_keywords(path)) == [
        (2, "boss", "北京", "python"),
        (4, "zhilian", "杭州", "java, senior"),
        (6, "qcwy", "101010100", "go"),
    ]


def test_header_only_file_has_no_keywords(tmp_path):
    assert list(read_keywords(write(tmp_path, "source,city,job\n"))) == []


def test_streams_without_reading_ahead(tmp_path):
    lines = ["source,city,job"] + [f"boss,北京,job{i}" for i in range(1000)] + ["lagou,北京,x"]
    path = write(tmp_path, "\n".join(lines) + "\n")
    rows = read_keywords(path)
    assert next(rows) == (2, "boss", "北京", "job0")  # a bad line far below does not stop the start
    with pytest.raises(KeywordFileError) as info:
        list(rows)
    assert info.value.line == 1002


def test_error_names_file_line_and_problem(tmp_path):
    path = write(tmp_path, "source,city,job\nboss,北京,python\n" + "x,y,z\n" * 4 + "lagou,北京,java\n")
    error = refusal(path)
    assert error.path == str(path)
    assert error.line == 3
    assert str(error) == (
        f"{path} line 3: unknown source 'x' (expected one of: boss, qcwy, zhilian)"
    )


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("lagou,北京,python", "unknown source 'lagou' (expected one of: boss, qcwy, zhilian)"),
        ("boss,,python", "empty city"),
        ("boss,  ,python", "empty city"),
        ("boss,北京,", "empty job"),
        ("boss,北京," + "j" * 129, "job is 129 characters long (at most 128)"),
        ("boss," + "城" * 65 + ",python", "city is 65 characters long (at most 64)"),
        ("boss,北京", "expected 3 fields (source,city,job), found 2"),
        ("boss,北京,python,extra", "expected 3 fields (source,city,job), found 4"),
        ("boss", "expected 3 fields (source,city,job), found 1"),
        ('boss,"北京"x,python', "not valid CSV"),
        ("boss,北\r京,python", "a carriage return inside the line"),
    ],
)
def test_bad_keyword_line(tmp_path, bad_line, message):
    path = write(tmp_path, f"source,city,job\nboss,上海,go\n\n{bad_line}\nqcwy,北京,go\n")
    error = refusal(path)
    assert error.line == 4
    assert error.message.startswith(message)


def test_open_quote_is_reported_at_its_line(tmp_path):
    path = write(tmp_path, 'source,city,job\nboss,上海,go\nboss,"北京,python\nqcwy,深圳,java\n')
    error = refusal(path)
    assert error.line == 3
    assert error.message == "a quote is left open (the file ends inside a quoted field)"


def test_quoted_field_over_two_lines_is_refused(tmp_path):
    path = write(tmp_path, 'source,city,job\nboss,"北\n京",python\nqcwy,深圳,java\n')
    error = refusal(path)
    assert error.line == 2
    assert "spans several lines" in error.message


def test_gbk_file_is_refused_at_the_first_non_utf8_line(tmp_path):
    content = "source,city,job\nboss,shanghai,go\nboss,北京,python\n".encode("gbk")
    error = refusal(write(tmp_path, content))
    assert error.line == 3
    assert error.message.startswith("not UTF-8 text (byte 0xb1 at byte 6)")


def test_binary_file_is_refused(tmp_path):
    error = refusal(write(tmp_path, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00"))
    assert error.line == 1
    assert "not UTF-8" in error.message or "binary" in error.message


def test_nul_byte_is_refused(tmp_path):
    error = refusal(write(tmp_path, b"source,city,job\nboss,\x00,python\n"))
    assert error.line == 2
    assert "NUL" in error.message


def test_overlong_line_is_refused_without_reading_it_whole(tmp_path):
    content = b"source,city,job\n" + b"a" * (MAX_LINE_BYTES * 4) + b"\n"
    error = refusal(write(tmp_path, content))
    assert error.line == 2
    assert f"longer than {MAX_LINE_BYTES} bytes" in error.message


@pytest.mark.parametrize("content", ["", "\ufeff", "\n\n  \n"])
def test_empty_file_is_refused(tmp_path, content):
    error = refusal(write(tmp_path, content))
    assert error.line == 1
    assert error.message == "the file is empty (expected the header source,city,job)"


@pytest.mark.parametrize(
    "header",
    ["boss,北京,python", "source,city", "source,city,job,extra", "city,source,job", "source;city;job"],
)
def test_missing_or_wrong_header_is_refused(tmp_path, header):
    error = refusal(write(tmp_path, f"{header}\nboss,北京,python\n"))
    assert error.line == 1
    assert error.message.startswith("expected the header 'source,city,job', found ")


def test_header_after_blank_lines_is_reported_at_its_line(tmp_path):
    error = refusal(write(tmp_path, "\n\nsrc,city,job\nboss,北京,python\n"))
    assert error.line == 3


def test_demo_keywords_file_is_valid_and_complete():
    rows = list(read_keywords(DEMO_KEYWORDS))
    keywords = {(s, c, j) for _, s, c, j in rows}
    assert len(rows) == len(keywords) == 36
    assert keywords == {
        (s, c, j)
        for s in ("boss", "qcwy", "zhilian")
        for c in ("北京", "上海", "深圳", "杭州")
        for j in ("python", "java", "前端")
    }
