"""/compare/: a cell is red only when its change is past the noise, by the same rule as the
"regressed" filter, so that what is red is what the filter finds (#17 item 6)."""
from __future__ import annotations

import pytest

from tests.dashboard.page_history import ingest_build, ref_for_day
from tests.dashboard.test_compare import rows_of
from tests.documents import make_result

pytestmark = pytest.mark.django_db


def test_red_cells_and_the_regressed_filter_agree(client):
    ingest_build(1, [make_result("mlp_loop", "static", speedup=2.0, speedup_noise=0.10),
                     make_result("resnet_train", "static", speedup=1.0, speedup_noise=0.01)])
    ingest_build(2, [make_result("mlp_loop", "static", speedup=1.7, speedup_noise=0.10),  # -15%, within 10% + 10%
                     make_result("resnet_train", "static", speedup=0.8, speedup_noise=0.01)])  # -20%, past 2%
    url = f"/compare/?base={ref_for_day(1)}&head={ref_for_day(2)}"
    rows = rows_of(client.get(url).content.decode())
    assert "-15.0%" in rows["mlp_loop"] and "worse" not in rows["mlp_loop"]
    assert "-20.0%" in rows["resnet_train"] and "worse" in rows["resnet_train"]

    regressed = rows_of(client.get(url + "&filter=regressed").content.decode())
    red = {name for name, row in rows.items() if "worse" in row}
    assert set(regressed) == red == {"resnet_train"}
