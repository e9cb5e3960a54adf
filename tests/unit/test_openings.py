"""Postings into openings (farm.openings): names, titles, the clustering and its explanations."""

import pytest

from farm.openings.cluster import LSH_FROM, SAME_TITLE, Clusterer, PostingSeen
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
        "('python开发工程师' ~ 'python开发工程师'), salary 25000-35000 ~ 20000-30000; evidence +2.5: company "
        "equal +0.5, title equal +1.5, place unknown +0, pay agree +0, degree unknown +0, experience unknown +0"
    )
    assert len(clusters.openings) == 1 and clusters.openings[1].postings == [
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


def posting(source, job_id, title="Python开发工程师", company="字节跳动", pay=(20000, 30000), area=None, degree=None,
            experience=None, city="北京"):  # fmt: skip
    return PostingSeen(source, job_id, title, company, city, *pay, area, degree, experience)


def test_a_district_degree_experience_or_pay_apart_counts_against_a_join_and_none_vetoes_it():
    clusters = Clusterer()
    clusters.add(posting("boss", "b1", area="朝阳区·望京", degree="本科", experience="3-5年"))
    apart = [
        posting("qcwy", "q1", area="海淀区", degree="本科", pay=(26000, 40000)),  # district apart, pay not the same
        posting("qcwy", "q2", area="朝阳区", degree="硕士及以上", pay=(21000, 30000)),  # degree apart
        posting("qcwy", "q3", area="朝阳", experience="1-3年经验", pay=(21000, 30000)),  # experience apart
        posting("qcwy", "q4", area="朝阳区", pay=(40000, 50000)),  # pay apart
    ]
    assert [clusters.add(p).opening for p in apart] == [2, 3, 4, 5]
    left_out = posting("zhilian", "z1", degree="学历不限", experience="经验不限")
    assert clusters.add(left_out).opening == 1
    # another district, but the same pay, degree and experience: one site's map, not another job
    why = clusters.add(posting("qcwy", "q5", area="西城区·德胜门", degree="统招本科", experience="3-5年经验"))
    assert why.opening == 1 and ("place", "differ", -4.0) in why.evidence and why.score > 0
    assert "evidence +" in why.text() and "place differ -4" in why.text()


def test_the_four_kinds_of_misses_join():
    """A title decorated on one site in a form not listed, a legal name after a province, full-width forms,
    and a district on one site that is a business area, another district or none on the other."""
    cases = [
        (posting("boss", "b1", title="运维开发实习生"), posting("qcwy", "q1", title="运维开发实习生＋带薪年假+餐补")),
        (posting("boss", "b1", title="运维开发实习生"), posting("qcwy", "q1", title="热招：运维开发实习生—驻场")),
        (posting("boss", "b1", company="云图"), posting("qcwy", "q1", company="湖南云图信息技术有限公司")),
        (
            posting("qcwy", "q1", company="ＡＢＣ科技（上海）有限公司", title="Ｐｙｔｈｏｎ开发工程师"),
            posting("zhilian", "z1", company="ABC科技(上海)有限公司", title="Python开发工程师"),
        ),
        (posting("boss", "b1", area="丰台区"), posting("qcwy", "q1", area="西城区·德胜门")),
        (posting("boss", "b1", area="西城区"), posting("qcwy", "q1", area="德胜门")),
        (posting("boss", "b1", area="北京-海淀区"), posting("qcwy", "q1", area="海淀区中关村")),
    ]
    for first, second in cases:
        clusters = Clusterer()
        clusters.add(first)
        assert clusters.add(second).opening == 1, (first, second)


def test_near_misses_stay_apart():
    """One company's two jobs of one title in two districts, at other pay and experience; two companies that
    share a brand key, in other districts and at other pay."""
    jobs = Clusterer()
    jobs.add(posting("boss", "b1", area="朝阳区·望京", pay=(15000, 20000), experience="1-3年"))
    other = posting("qcwy", "q1", area="海淀区", pay=(21000, 29000), experience="3-5年经验")
    assert jobs.add(other).opening == 2
    brands = Clusterer()
    brands.add(posting("boss", "b1", company="云图", area="丰台区", pay=(10000, 15000), degree="大专"))
    twin = posting("qcwy", "q1", company="北京云图科技有限公司", area="大兴区", pay=(25000, 35000), degree="硕士")
    assert brands.add(twin).opening == 2


@pytest.mark.parametrize(
    "title, key",
    [
        ("运维开发实习生+五险一金", "运维开发实习生"),
        ("C++开发工程师+六险一金", "cpp开发工程师"),
        ("急聘：Java开发（可远程+年底双薪）", "java开发"),
        ("名企直招初级产品经理", "初级产品经理"),
        ("新媒体运营 驻场", "新媒体运营"),
        ("招聘专员", "招聘专员"),
        ("UI/UX设计师", "uiux设计师"),
    ],
)
def test_title_decorations_go_by_their_form(title, key):
    assert title_key(title) == key


def test_one_title_posted_many_times_at_one_company_scores_a_few_openings_each():
    clusters = Clusterer()
    clusters.add_all(posting("boss", f"b{i}") for i in range(2000))
    scored = []
    for i in range(50):
        scored.append(sum(1 for _ in clusters._candidates("北京", "字节跳动", "python开发工程师", "equal", "qcwy")))
        clusters.add(posting("qcwy", f"q{i}", pay=(1000, 2000)))
    assert max(scored) <= SAME_TITLE and len(clusters.opened) == 2050
