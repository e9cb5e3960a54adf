"""A wall a site answers with, as a spider describes it for the browser (LeaseSpider.browser_wall)."""

from dataclasses import dataclass

# Where a page shows a slider or a puzzle: farm does not solve them (docs/walls.md).
SLIDER_MARKERS = ("verify-slider", "nc_1_n1z", "nc_1_wrapper", "geetest_box", "waf-nc-title", "滑块")


@dataclass(frozen=True)
class Wall:
    """``name``: the wall (its stat and log name); ``url``: the page a browser opens to pass it, as the site's
    own client would; ``cookies``: the cookies whose arrival means the browser has passed it; ``data``: URL
    parts of the data farm fetches itself, which the browser does not load (the page behind the wall asks
    for them as soon as it is passed: a page farm would then fetch twice)."""

    name: str
    url: str
    cookies: tuple[str, ...]
    data: tuple[str, ...] = ()
    sliders: tuple[str, ...] = SLIDER_MARKERS
