"""Title decorations learnt from the postings (farm.openings.decorations): an affix one job's title carries
on one site and not on another, in a form the cleaner does not take off, is learnt from a small corpus and
then joins the pair; a word that tells two jobs apart is not learnt."""

from farm.openings.cluster import Clusterer, PostingSeen
from farm.openings.decorations import FEWEST, decorations_of
from farm.openings.names import CompanyNames
from farm.openings.titles import Decorations, title_key

ROLES = ("Python开发工程师", "数据分析师", "测试工程师", "产品经理", "运维开发工程师")


def one_job(number: int, boss_title: str, qcwy_title: str, low: int = 20000) -> list[PostingSeen]:
    company = f"公司{number}"
    return [
        PostingSeen("boss", f"b{number}{boss_title}", boss_title, company, "北京", low, low + 10000, "朝阳区", "本科"),
        PostingSeen("qcwy", f"q{number}{qcwy_title}", qcwy_title, company, "北京", low, low + 10000, "朝阳区", "本科"),
    ]


def corpus(companies: int) -> list[PostingSeen]:
    """Each company's one job decorated on 51job (a tail ``-可转正``, a lead ``大厂直推 ``), and a senior job
    beside its plain one on two sites at other pay, place and degree."""
    made = []
    for number in range(companies):
        role = ROLES[number % len(ROLES)]
        made += one_job(number, role, f"{role}-可转正" if number % 2 else f"大厂直推 {role}")
        other = ROLES[(number + 1) % len(ROLES)]
        made.append(PostingSeen("boss", f"b{number}s", f"高级{other}", f"公司{number}", "北京", 40000, 60000, "海淀区",
                                "硕士"))  # fmt: skip
        made.append(PostingSeen("qcwy", f"q{number}p", other, f"公司{number}", "北京", 15000, 20000, "朝阳区", "大专"))
    return made


def test_a_decoration_the_forms_miss_is_learnt_and_joins_the_pair_and_a_word_of_another_job_is_not():
    assert title_key("Python开发工程师-可转正") == "python开发工程师可转正"  # no form rule takes it off
    assert title_key("大厂直推 Python开发工程师") == "大厂直推python开发工程师"
    learnt = decorations_of(corpus(2 * FEWEST), CompanyNames())
    assert learnt == Decorations(frozenset({"大厂直推"}), frozenset({"可转正"}))
    assert learnt.key("【急招】Java开发工程师-可转正") == "java开发工程师"

    pair = one_job(99, "Java开发工程师", "Java开发工程师-可转正") + one_job(
        98, "Java开发工程师", "大厂直推 Java开发工程师"
    )
    plain, taught = Clusterer(), Clusterer(decorations=learnt)
    plain.add_all(pair)
    taught.add_all(pair)
    assert len({plain.opening_of(p.source, p.job_id) for p in pair}) == 4  # alike below the threshold: apart
    assert len({taught.opening_of(p.source, p.job_id) for p in pair}) == 2
    assert taught.why[("qcwy", "q99Java开发工程师-可转正")].title_keys == ("java开发工程师", "java开发工程师")


def test_an_affix_seen_at_fewer_companies_than_fewest_is_not_learnt():
    assert decorations_of(corpus(2 * FEWEST - 2), CompanyNames()) == Decorations()
