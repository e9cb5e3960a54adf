"""What the report says of the openings: new and gone per day, and how long they stay open, per city and
keyword (pure functions over farm.openings.life's lives, tested without a database)."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from statistics import median

from farm.openings.life import Life


@dataclass(frozen=True)
class OpeningLife:
    """An opening's life beside the keyword that found its first posting."""

    opening: int
    city: str  # the keyword's city
    job: str  # the keyword's job
    life: Life


def days_open(life: Life) -> int:
    """The days from first seen to last seen, both counted: a posting seen on one day only was open one."""
    return (life.last_seen - life.first_seen).days + 1


def open_by_keyword(openings: list[OpeningLife], day: date) -> list[dict]:
    """Per (city, job): the openings gone by ``day`` with the median of their days open, those still open
    (an open one's days so far are not how long it stays open, so they are counted apart), and those
    that came back after they went (reposted)."""
    gone, still, back = defaultdict(list), defaultdict(int), defaultdict(int)
    for opening in openings:
        life = opening.life
        if life.first_seen > day:
            continue
        key = (opening.city, opening.job)
        back[key] += any(when <= day for when in life.back)
        if life.gone is not None and life.gone <= day:
            gone[key].append(days_open(life))
        else:
            still[key] += 1
    return [
        {
            "city": city,
            "job": job,
            "gone": len(gone[(city, job)]),
            "median_days_open": median(gone[(city, job)]) if gone[(city, job)] else None,
            "open": still[(city, job)],
            "reposted": back[(city, job)],
        }
        for city, job in sorted(gone.keys() | still.keys())
    ]
