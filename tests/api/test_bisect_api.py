"""``POST /api/v1/regressions/<id>/bisect/`` (issue #31): a write token starts one, bad input is a
4xx naming the field and writes nothing, GET reads its progress, DELETE cancels it; the regression
shows its culprit."""
from __future__ import annotations

import pytest

from dashboard.regressions.models import Bisection
from tests.fixtures.api import fields
from tests.bisect.planted import SHAS, measure, no_broker, plant

pytestmark = pytest.mark.django_db
BISECT = "/api/v1/regressions/{}/bisect/"


def test_a_write_token_starts_it_and_the_api_reads_its_progress_and_result(writer, api, monkeypatch):
    no_broker(monkeypatch)
    regression = plant()
    assert api.post(BISECT.format(regression.id), {}, format="json").status_code in (401, 403)  # a write needs a token
    response = writer.post(BISECT.format(regression.id), {"attempts": 2, "max_runs": 30}, format="json")
    assert response.status_code == 201, response.json()
    data = response.json()
    assert data["status"] == "running" and data["requested_by"] == "api:ci" and data["limits"]["max_runs"] == 30
    assert [b["role"] for b in data["builds"]] == ["measuring", "", "", "", "", "measuring"]
    assert data["open_runs"] == 4 and data["remaining"] == 4

    assert writer.post(BISECT.format(regression.id), {}, format="json").status_code == 409
    measure(Bisection.objects.get(pk=data["id"]), rounds=4)
    data = api.get(BISECT.format(regression.id)).json()
    assert data["status"] == "done" and data["culprit_build"] == "333333333333"
    assert [b["role"] for b in data["builds"]] == ["good end", "last good", "first bad", "", "", "bad end"]
    assert [(s["index"], s["decision"]) for s in data["steps"]] == [(2, "bad"), (1, "good")]
    assert data["result"]["commits"] == f"{SHAS[1]}...{SHAS[2]}" and data["runs"] == 8 and data["lost_runs"] == 0
    found = api.get(f"/api/v1/regressions/{regression.id}/").json()
    assert found["culprit_build"] == "333333333333" and found["culprit_range"] == f"{SHAS[1]}...{SHAS[2]}"


@pytest.mark.parametrize(("body", "field"), [
    ({"attempts": 0}, "attempts"), ({"kind": "mirror"}, "kind"), ({"max_runs": "many"}, "max_runs"),
    ({"attempts": 4, "max_attempts": 2}, "max_attempts"), ({"kind": "overrides"}, "kind"),
])
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(writer, monkeypatch, body, field):
    no_broker(monkeypatch)
    regression = plant()
    response = writer.post(BISECT.format(regression.id), body, format="json")
    assert response.status_code == 400 and fields(response) == [field]
    assert not Bisection.objects.exists()


def test_adjacent_builds_unknown_regressions_and_cancel(writer, monkeypatch):
    no_broker(monkeypatch)
    regression = plant(known={0, 5})
    response = writer.post(BISECT.format(regression.id), {}, format="json")
    assert response.status_code == 400 and fields(response) == ["last_good_build"]
    assert "adjacent already" in response.json()["detail"]
    assert fields(writer.post(BISECT.format(999999), {}, format="json")) == ["regression_id"]
    assert writer.get(BISECT.format(regression.id)).status_code == 404
    assert writer.delete(BISECT.format(regression.id)).status_code == 409

    from dashboard.dispatch.models import BuildEnvironment
    from tests.bisect.planted import nightly

    BuildEnvironment.objects.create(build=nightly(2), machine_class="cpu", hostname="box", python="/envs/2/bin/python",
                                    source="worker", reported_at=regression.created_at)
    assert writer.post(BISECT.format(regression.id), {}, format="json").status_code == 201
    cancelled = writer.delete(BISECT.format(regression.id))
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled" and cancelled.json()["open_runs"] == 0
