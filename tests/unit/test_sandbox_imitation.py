"""The sandbox is the machinery every site's imitation shares: it names none of farm's own sites, and each
site's words, ids, cross-posts, hostile fields, faults and city codes come from its package (its
sandbox.py's IMITATION, its record's cities), through the registry."""

import re
import urllib.parse
from pathlib import Path

import pytest

import farm.sandbox
from farm import sites
from farm.sandbox import crossposts, vocab
from farm.sandbox.cities import CITIES, city_for
from farm.sandbox.faults import all_kinds, default_kinds, shape_kinds
from farm.sandbox.imitation import DEFAULT, FaultKind, Imitation
from farm.sandbox.sites import imitation, imitation_of, served_sites

SANDBOX = Path(farm.sandbox.__file__).parent
OWN = tuple(path.rpartition(".")[2] for path in sites.FARM_PACKAGES)


def _words_naming(name: str) -> set[str]:
    """What names farm's site ``name`` in a text: its name, its title, its host's own label (zhipin)."""
    site = sites.get(name)
    host = urllib.parse.urlsplit(site.defaults["base_url"]).hostname.split(".")[-2]
    return {site.name, site.title, host}


def named_in(text: str) -> list[str]:
    """The words of farm's own sites that ``text`` holds (any case, inside other words too)."""
    lower = text.lower()
    return sorted(word for name in OWN for word in _words_naming(name) if word.lower() in lower)


def test_no_module_of_the_sandbox_names_a_site_of_farms_own():
    named = {path.name: found for path in sorted(SANDBOX.glob("*.py")) if (found := named_in(path.read_text()))}
    assert not named, f"site names in farm/sandbox/ (their part belongs in farm/sites/<site>/): {named}"


def test_the_check_finds_a_name_a_title_and_a_host_in_code_and_in_prose():
    assert named_in('KINDS = {"boss": "fetch"}') == ["boss"]
    assert named_in("the 智联招聘 page, BOSS直聘's code 37") == ["Boss直聘", "boss", "智联招聘"]
    assert named_in("https://we.51job.com/api") == ["51job"]
    assert named_in("every site alike") == []


def test_each_of_farms_sites_gives_its_own_words_ids_salt_hostile_fields_and_faults():
    made = [imitation(name) for name in OWN]
    assert all(made_one is not DEFAULT for made_one in made)
    assert len({one.id_salt for one in made}) == len(OWN) and all(one.id_salt & 1 for one in made)
    assert all(one.hostile is not None and one.faults for one in made)
    assert len({one.experience for one in made}) == len(OWN)  # each words the levels its own way
    assert all(kind.name.startswith(name) for name, one in zip(OWN, made) for kind in one.faults)


def test_a_record_takes_one_word_for_each_level_an_odd_salt_and_a_kind_of_search():
    with pytest.raises(ValueError, match="imitation sizes: one word for each of its 6 levels"):
        Imitation(sizes=("小",))
    with pytest.raises(ValueError, match="imitation industries: one word for each of its 12 levels"):
        Imitation(industries=vocab.SIZES)
    with pytest.raises(ValueError, match="imitation id_salt 0x10: an odd number"):
        Imitation(id_salt=16)
    with pytest.raises(ValueError, match="imitation search 'post': one of fetch, navigate"):
        Imitation(search="post")
    assert DEFAULT.experience == vocab.EXPERIENCE and DEFAULT.id_salt is None and DEFAULT.faults == ()


def test_a_module_without_a_record_is_shown_by_the_default():
    assert imitation_of(re) is DEFAULT


def test_the_fault_kinds_are_the_served_sites_own_and_a_shape_only_when_named():
    own = [kind for name in served_sites() for kind in imitation(name).faults]
    assert all_kinds()[: len(own)] == tuple(kind.name for kind in own)
    assert shape_kinds() == tuple(kind.name for kind in own if kind.shape)
    assert set(default_kinds()) == set(all_kinds()) - set(shape_kinds())
    assert imitation(OWN[0]).fault(own[0].name) is own[0] and imitation(OWN[0]).fault("http500") is None


def test_a_fault_kind_of_a_site_registered_later_is_asked_of_the_registry(monkeypatch):
    first = OWN[0]
    busy = FaultKind("late_busy", "a busy page", lambda query, h, *_: (200, "text/html", b"busy"), shape=True)
    module = sites.get(first).sandbox
    monkeypatch.setattr(
        f"{module}.IMITATION", Imitation(**{**imitation(first).__dict__, "faults": (*imitation(first).faults, busy)})
    )
    assert "late_busy" in all_kinds() and "late_busy" in shape_kinds() and "late_busy" not in default_kinds()


def test_the_spreads_are_every_cross_posting_site_then_each_pair():
    assert crossposts.spreads(("a", "b", "c")) == (
        frozenset("abc"),
        frozenset("ab"),
        frozenset("ac"),
        frozenset("bc"),
    )
    four = crossposts.spreads(("a", "b", "c", "d"))
    assert four[0] == frozenset("abcd") and len(four) == 7 and all(len(pair) == 2 for pair in four[1:])
    assert crossposts.spreads(("a",)) == crossposts.spreads(()) == ()


def test_a_site_shows_a_cross_post_by_its_plan_and_none_without_a_salt():
    salt, shown = crossposts.plan(OWN[0])
    assert salt == imitation(OWN[0]).id_salt and shown == (True, True, True, False)
    shared = 0x1234 << 64 | 7
    bits = iter([0, shared])  # the first: a cross-post of spread 0 (every site); then what the sites share
    drawn = crossposts.draw(lambda k: next(bits), crossposts.plan(OWN[2]))
    assert drawn == (0, shared % vocab.COMPANY_POOL, 0x1234)
    bits = iter([5 << 16, shared])  # spread 5: the last pair, without the first site
    assert crossposts.draw(lambda k: next(bits), crossposts.plan(OWN[0])) is None
    assert crossposts.draw(lambda k: pytest.fail("a site without a plan draws nothing"), None) is None


@pytest.mark.parametrize("name", OWN)
def test_a_sandbox_citys_code_is_its_sites_record_and_names_it_back(name):
    codes = sites.get(name).cities
    for city in CITIES:
        assert city.code(name) == codes[city.name]
        assert city_for(name, codes[city.name]) is city
    assert city_for(name, "") is None and city_for(name, "no-such-code") is None


def test_ids_take_each_sites_own_form():
    from farm.sandbox.data import World

    world, beijing = World(seed=1, postings=(30, 30)), CITIES[1]
    forms = {
        "boss": r"[0-9a-f]{11}0{15}[A-Z0-9]{4}",
        "qcwy": r"[1-9]\d{8}",
        "zhilian": r"CC\d{9}J\d{11}",
    }
    for name, form in forms.items():
        assert all(re.fullmatch(form, slot[0]) for slot in world.slots(name, beijing, "python")), name
