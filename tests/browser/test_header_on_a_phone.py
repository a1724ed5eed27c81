"""The site's header on a phone: the link to the other language sits beside the site's name,
and the main links get the rows below. In English the links fill a 390 px row, and the
language link once wrapped onto a third row of its own.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .test_copy_on_a_phone import PHONE_HEIGHT
from .test_copy_on_a_phone import PHONE_WIDTHS
from .visit import LOCALES
from .visit import Tab

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", PHONE_WIDTHS)
@pytest.mark.parametrize("language", LOCALES)
def test_the_other_language_is_on_the_row_of_the_sites_name(
        open_tab: Callable[..., Tab], language: str, width: int):
    tab = open_tab(language=language)
    tab.page.set_viewport_size({"width": width, "height": PHONE_HEIGHT})
    tab.open(f"/{language}/events")
    brand = tab.page.locator(".site-header .brand").bounding_box()
    switch = tab.page.locator(".language-switch a").bounding_box()
    links = tab.page.get_by_role("navigation", name=tab.text("Main")).bounding_box()
    assert brand and switch and links
    assert switch["y"] < brand["y"] + brand["height"] and brand["y"] < switch["y"] + switch[
        "height"], (brand, switch)  # the two boxes share a row
    assert links["y"] >= brand["y"] + brand["height"]  # the main links below them
    assert switch["x"] + switch["width"] <= width  # and nothing past the screen's edge
