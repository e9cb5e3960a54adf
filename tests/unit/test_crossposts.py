"""The sandbox's cross-posts: one opening on two or three sites, each site showing it its own way, with the
truth kept; and farm.openings measured on them (bench.openings_data)."""

from collections import defaultdict

from bench.openings_bench import score
from bench.openings_data import KEYWORDS, sandbox_postings
from farm.openings.cluster import Clusterer
from farm.openings.names import company_key
from farm.openings.titles import title_key
from farm.sandbox import crossposts
from farm.sandbox.cities import city_named
from farm.sandbox.data import World
from farm.sandbox.market import Market

SITES = ("boss", "qcwy", "zhilian")


def listed(world, keyword, city="北京"):
    """(site, position, slot, posting) of the keyword's first 200 positions on each site."""
    found = []
    for site in SITES:
        for position, slot in enumerate(world.slots(site, city_named(city), keyword, 200)):
            found.append((site, position, slot, world.posting(site, city_named(city), keyword, slot)))
    return found


def test_a_cross_post_is_one_job_on_its_sites_each_showing_it_its_own_way():
    world = World(seed=3, postings=(200, 200))
    by_position = defaultdict(dict)
    for site, position, slot, posting in listed(world, "python"):
        if crossposts.is_cross(slot):
            by_position[position][site] = posting
    assert 0.2 < len(by_position) / 200 < 0.4  # about crossposts.SHARE of the positions
    sizes = [len(sites) for sites in by_position.values()]
    assert {2, 3} <= set(sizes) and sizes.count(1) < len(sizes) / 10  # 1: a generic posting took its place
    decorated = 0
    for sites in by_position.values():
        postings = list(sites.values())
        assert len({p.id for p in postings}) == len(postings)
        assert len({p.company.number for p in postings}) == 1
        assert len({(p.salary_min, p.salary_max, p.district, p.degree) for p in postings}) == 1
        assert len({title_key(p.title) for p in postings}) == 1
        decorated += len({p.title for p in postings}) > 1
    assert decorated > len(by_position) / 4


def test_the_truth_names_a_cross_posts_position_and_a_single_sites_posting_by_its_id():
    world = World(seed=3, postings=(60, 60))
    truth = defaultdict(set)
    for site, _position, slot, posting in listed(world, "java"):
        truth[crossposts.opening_of(site, "北京", "java", slot)].add(site)
        if not crossposts.is_cross(slot):
            assert crossposts.opening_of(site, "北京", "java", slot) == (site, posting.id)
    assert any(len(sites) == 3 for sites in truth.values())
    assert all(len(sites) == 1 for key, sites in truth.items() if key[0] != "cross")


def test_a_sixth_of_the_companies_brand_unlike_their_legal_name():
    world = World(seed=3)
    companies = [world.company("boss", index) for index in range(600)]
    unlike = sum(company_key(c.short_name) != company_key(c.full_name) for c in companies)
    assert 60 < unlike < 140
    assert world.company("boss", 7).full_name == world.company("zhilian", 7).full_name  # the sites share them


def test_openings_on_the_sandboxs_cross_posts_reach_the_aims():
    postings, truth, names = sandbox_postings(keywords=KEYWORDS[::10])  # 20 of the bench's 200
    clusters = Clusterer(names)
    clusters.add_all(postings)
    result = score(clusters, postings, truth)
    assert result["true pairs"] > 100
    assert result["precision"] >= 0.97 and result["recall"] >= 0.90, result


def test_the_markets_day_retires_a_keywords_first_positions_and_adds_new_ones_after_its_last():
    plain, changed = World(seed=3, postings=(50, 50)), World(seed=3, postings=(50, 50))
    changed.market = Market(retire={"python": 4}, hire={"python": 3})
    for site in SITES:
        before = plain.slots(site, city_named("北京"), "python")
        after = changed.slots(site, city_named("北京"), "python")
        assert after[:46] == before[4:] and len(after) == 49
        assert not {slot[0] for slot in after[46:]} & {slot[0] for slot in before}
        assert changed.slots(site, city_named("北京"), "java") == plain.slots(site, city_named("北京"), "java")
