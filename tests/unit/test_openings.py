"""Postings into openings (farm.openings): names, titles, the clustering and its explanations."""

import pytest

from farm.openings.cluster import LSH_FROM, Clusterer, PostingSeen
from farm.openings.names import CompanyNames, company_key
from farm.openings.titles import similarity, title_key


@pytest.mark.parametrize(
    "name, key",
    [
        ("字节跳动", "字节跳动"),
        ("北京字节跳动科技有限公司", "字节跳动"),
        ("字节跳动(北京)科技有限公司", "字节跳动"),
        ("上海智云网络科技有限公司", "智云"),
        ("智云集团", "智云"),
        ("深圳市腾讯计算机系统有限公司", "腾讯计算机系统"),
        ("", ""),
    ],
)
def test_company_keys_leave_places_legal_forms_and_business_words_off(name, key):
    assert company_key(name) == key


def test_titles_lose_their_decorations():
    assert title_key("【急招】Python开发工程师（双休）+五险一金") == "python开发工程师"
    assert title_key("python开发工程师-包吃住") == title_key("Python 开发工程师")
    assert similarity(title_key("高级Python开发工程师"), "python开发工程师") == pytest.approx(10 / 12)


def test_pairs_come_from_a_users_file_and_a_bad_line_is_named(tmp_path):
    good = tmp_path / "pairs.csv"
    good.write_text("# brand,legal name\n抖音,北京字节跳动科技有限公司\n", encoding="utf-8")
    assert CompanyNames.from_file(good).key("抖音") == "字节跳动"
    bad = tmp_path / "bad.csv"
    bad.write_text("抖音\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.csv:1: expected 'brand,legal name', got '抖音'"):
        CompanyNames.from_file(bad)


def boss(job_id, title="Python开发工程师", company="字节跳动", low=20000, high=30000, city="北京"):
    return PostingSeen("boss", job_id, title, company, city, low, high)


def qcwy(job_id, title="【急招】Python开发工程师（双休）", company="北京字节跳动科技有限公司", low=25000, high=35000):
    return PostingSeen("qcwy", job_id, title, company, "北京", low, high)


def test_one_job_on_three_sites_is_one_opening_and_each_join_says_why():
    clusters = Clusterer()
    first = clusters.add(boss("b1"))
    second = clusters.add(qcwy("q1"))
    third = clusters.add(
        PostingSeen("zhilian", "z1", "Python开发工程师+五险一金", "字节跳动(北京)有限公司", "北京", None, None)
    )
    assert (first.joined, first.opening, second.opening, third.opening) == (False, 1, 1, 1)
    assert second.text() == (
        "joined opening 1: company equal ('字节跳动' ~ '字节跳动'), title 1.00 alike "
        "('python开发工程师' ~ 'python开发工程师'), salary 25000-35000 overlaps 20000-30000"
    )
    assert len(clusters.openings) == 1 and clusters.openings[0].postings == [
        ("boss", "b1"),
        ("qcwy", "q1"),
        ("zhilian", "z1"),
    ]


def test_another_city_company_title_salary_or_a_second_posting_of_a_site_opens_its_own():
    clusters = Clusterer()
    clusters.add(boss("b1"))
    others = [
        boss("b2"),  # the same site again
        qcwy("q1", low=40000, high=50000),  # salaries apart
        qcwy("q2", title="Java开发工程师"),
        qcwy("q3", company="上海智云网络科技有限公司"),
        PostingSeen("zhilian", "z1", "Python开发工程师", "字节跳动", "上海", 20000, 30000),
    ]
    assert [clusters.add(posting).opening for posting in others] == [2, 3, 4, 5, 6]


def test_a_brand_meets_its_legal_name_through_a_pair_or_as_its_start():
    paired = Clusterer(CompanyNames({"抖音": "北京字节跳动科技有限公司"}))
    paired.add(qcwy("q1"))
    assert paired.add(boss("b1", company="抖音")).company == "paired"
    prefix = Clusterer()
    prefix.add(boss("b1", company="腾讯"))
    why = prefix.add(qcwy("q1", company="深圳市腾讯计算机系统有限公司"))
    assert (why.opening, why.company) == (1, "prefix")


def test_the_same_postings_in_the_same_order_give_the_same_openings_past_the_lsh_threshold():
    postings = [boss(f"b{i}", title=f"工程师{i:03d}号") for i in range(LSH_FROM + 20)]
    postings += [qcwy(f"q{i}", title=f"工程师{i:03d}号") for i in range(LSH_FROM + 20)]
    runs = []
    for _ in range(2):
        clusters = Clusterer()
        clusters.add_all(postings)
        runs.append({key: why.opening for key, why in clusters.why.items()})
    assert runs[0] == runs[1]
    assert all(runs[0][("qcwy", f"q{i}")] == runs[0][("boss", f"b{i}")] for i in range(LSH_FROM + 20))


def test_a_district_or_a_degree_apart_opens_its_own_and_one_left_out_agrees_with_any():
    clusters = Clusterer()
    clusters.add(PostingSeen("boss", "b1", "Python开发工程师", "字节跳动", "北京", 20000, 30000, "朝阳区·望京", "本科"))
    apart = [
        PostingSeen("qcwy", "q1", "Python开发工程师", "字节跳动", "北京", 20000, 30000, "海淀区", "本科"),
        PostingSeen("qcwy", "q2", "Python开发工程师", "字节跳动", "北京", 20000, 30000, "朝阳区", "硕士及以上"),
    ]
    assert [clusters.add(posting).opening for posting in apart] == [2, 3]
    left_out = PostingSeen("zhilian", "z1", "Python开发工程师", "字节跳动", "北京", 20000, 30000, None, "学历不限")
    assert clusters.add(left_out).opening == 1
    why = clusters.add(
        PostingSeen("qcwy", "q3", "Python开发工程师", "字节跳动", "北京", 20000, 30000, "朝阳区", "本科")
    )
    assert why.opening == 1 and why.text().endswith(", district 朝阳区")
