"""*My registrations* has no one big button to puzzle over: each registration's row offers
what a person does with it (view it, add it to their calendar), and the cancellation tool's
button is a quiet one (templates/registrations/_panel.html)."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup


@pytest.mark.parametrize("language", ["zh-TW", "en"])
def test_each_row_offers_its_own_actions_and_no_button_shouts(visitor, language):
    first = visitor.register("evt-webmcp-intro")
    second = visitor.register("evt-agent-testing")
    soup = BeautifulSoup(visitor.get(f"/{language}/registrations").data, "html.parser")
    rows = soup.select(".registration-list .registration-card")
    assert len(rows) == 2
    for row in rows:
        registration_id = str(row.select_one("input[name=registration_id]")["value"])  # type: ignore[index]
        event_id = {first["id"]: first["eventId"], second["id"]: second["eventId"]}[
            registration_id]
        links = {str(link["href"]) for link in row.select(".row-actions a")}
        assert links == {f"/{language}/registrations/{registration_id}",
                         f"/calendar/{event_id}.ics"}
    loud = [button.get_text(strip=True) for button in soup.select("main .button, main button")
            if "button--quiet" not in (button.get("class") or [])]
    assert loud == []
