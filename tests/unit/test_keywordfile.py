"""Reading keyword CSV files: what is accepted, and every refusal with its line number."""

from pathlib import Path

import pytest

from farm.cli.keywordfile import MAX_LINE_BYTES, MOST_PROBLEMS, KeywordFileError, read_keywords
from farm.sites.cities import accepted_cities

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
        "qcwy,010000,go"  # no final newline
    )
    path = write(tmp_path, content)
    assert list(read_keywords(path)) == [
        (2, "boss", "北京", "python"),
        (4, "zhilian", "杭州", "java, senior"),
        (6, "qcwy", "010000", "go"),
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
    path = write(tmp_path, "source,city,job\nboss,北京,python\nx,y,z\nqcwy,上海,go\n")
    error = refusal(path)
    assert error.path == str(path)
    assert error.line == 3
    assert str(error) == (f"{path} line 3: unknown source 'x' (expected one of: boss, qcwy, zhilian)")


def test_every_bad_line_is_named_at_once(tmp_path):
    content = "source,city,job\nboss,北京,python\nx,y,z\nboss,拉萨,go\nqcwy,上海,go\nboss,北京\n".encode()
    path = write(tmp_path, content + "zhilian,北京,go\n".encode("gbk") + b"qcwy,\xe5\x8c\x97\xe4\xba\xac,\n")
    error = refusal(path)
    assert (error.line, len(error.more)) == (3, 4)
    assert str(error).splitlines() == [
        f"{path}: 5 bad lines, the file refused whole:",
        "  line 3: unknown source 'x' (expected one of: boss, qcwy, zhilian)",
        f"  line 4: unknown city '拉萨' for boss: use {accepted_cities('boss')}",
        "  line 6: expected 3 fields (source,city,job), found 2",
        "  line 7: not UTF-8 text (byte 0xb1 at byte 9); save the file as UTF-8",
        "  line 8: empty job",
    ]


def test_a_file_of_many_bad_lines_is_refused_at_the_twentieth(tmp_path):
    path = write(tmp_path, "source,city,job\n" + "lagou,北京,go\n" * 1000)
    error = refusal(path)
    assert len(error.more) == MOST_PROBLEMS - 1 and error.more[-1][0] == MOST_PROBLEMS + 1
    assert error.more[-1][1].endswith(f"(the first {MOST_PROBLEMS} bad lines: read no further)")


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
    content = "source,city,job\nboss,101020100,go\nboss,北京,python\n".encode("gbk")
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


BOSS_CITIES = "全国, 北京, 上海, 广州, 深圳, 杭州, 成都, 武汉, 南京, 天津, 重庆, 西安, 苏州, 佛山"


@pytest.mark.parametrize(
    "bad_line, message",
    [
        (
            "boss,拉萨,python",
            f"unknown city '拉萨' for boss: use one of {BOSS_CITIES} or a boss city code (9 digits, e.g. 101010100)",
        ),
        ("boss,Beijing,python", "unknown city 'Beijing' for boss: use one of "),
        ("qcwy,101010100,python", "unknown city '101010100' for qcwy: use one of 全国, 北京, "),  # a boss code
        ("zhilian,010000x,python", "unknown city '010000x' for zhilian: use one of "),
        ("zhilian,北 京,python", "unknown city '北 京' for zhilian: "),
    ],
)
def test_a_city_its_spider_does_not_know_is_refused(tmp_path, bad_line, message):
    error = refusal(write(tmp_path, f"source,city,job\nboss,上海,go\n{bad_line}\n"))
    assert error.line == 3
    assert error.message.startswith(message)


@pytest.mark.parametrize(
    "source, city",
    [
        ("boss", "北京"),
        ("boss", "101230200"),
        ("qcwy", "广东省"),
        ("qcwy", "070300"),
        ("zhilian", "佛山"),
        ("zhilian", "2013"),
        ("zhilian", "530"),
    ],
)
def test_a_city_name_of_the_map_or_a_site_code_is_accepted(tmp_path, source, city):
    assert list(read_keywords(write(tmp_path, f"source,city,job\n{source},{city},go\n"))) == [(2, source, city, "go")]


@pytest.mark.parametrize(
    "field, value, problem",
    [
        ("job", "py\tthon", "has a control character, U+0009, at character 3"),  # tab
        ("job", "java\x1b[31m", "has a control character, U+001B, at character 5"),  # ESC
        ("job", "java\x7f", "has a control character, U+007F, at character 5"),  # DEL
        ("job", "java\x85dev", "has a control character, U+0085, at character 5"),  # C1 (NEL)
        ("job", "java\x9b31m", "has a control character, U+009B, at character 5"),  # C1 (CSI)
        (
            "job",
            "\u202etsetnoc",
            "has a format character (invisible, or reordering the text), U+202E RIGHT-TO-LEFT OVERRIDE, at character 1",
        ),
        ("job", "java\u2066x\u2069", "U+2066 LEFT-TO-RIGHT ISOLATE, at character 5"),
        ("job", "ja\u200bva", "U+200B ZERO WIDTH SPACE, at character 3"),
        ("job", "java\u200d", "U+200D ZERO WIDTH JOINER, at character 5"),
        ("job", "ja\u00adva", "U+00AD SOFT HYPHEN, at character 3"),
        ("job", "ja\u2060va", "U+2060 WORD JOINER, at character 3"),
        ("job", "ja\u3164va", "has an invisible filler, U+3164 HANGUL FILLER, at character 3"),
        ("job", "ja\u2028va", "has a line separator, U+2028 LINE SEPARATOR, at character 3"),
        ("city", "北\u200c京", "U+200C ZERO WIDTH NON-JOINER, at character 2"),
        ("city", "北京\ufeff", "U+FEFF ZERO WIDTH NO-BREAK SPACE, at character 3"),
        ("city", "北\u202a京", "U+202A LEFT-TO-RIGHT EMBEDDING, at character 2"),
        ("city", "北\x01京", "has a control character, U+0001, at character 2"),
    ],
)
def test_a_control_or_invisible_character_is_refused_naming_it(tmp_path, field, value, problem):
    city, job = (value, "go") if field == "city" else ("北京", value)
    error = refusal(write(tmp_path, f'source,city,job\nboss,上海,go\nboss,"{city}","{job}"\n'))
    assert error.line == 3
    assert error.message.startswith(f"{field} {value!r} has ")  # shown escaped: \t, \x1b, \u202e
    assert error.message.endswith(f"{problem}: remove it")


def test_a_newline_inside_a_field_is_refused(tmp_path):
    error = refusal(write(tmp_path, 'source,city,job\nboss,北京,"py\nthon"\n'))
    assert error.line == 2
    assert "spans several lines" in error.message


def test_surrounding_blanks_are_not_characters_of_the_keyword(tmp_path):
    path = write(tmp_path, "source,city,job\nboss,\t北京 ,\u3000python\t\n")
    assert list(read_keywords(path)) == [(2, "boss", "北京", "python")]
