"""`make dashboard`: the dashboards drawn from the live local Prometheus as a static page,
as headless Chromium shows it (its screenshot kept in .run/logs/dashboard.png)."""

from __future__ import annotations

import re
import shutil

import pytest
from matplotlib import image

from helpers import ROOT
from kafka_patterns.monitoring import dashboard
from platform_cli import screenshot


@pytest.fixture(scope="module")
def page(cluster, tmp_path_factory):
    if cluster.prometheus_url is None:
        pytest.skip("the inventory has no monitoring host: no Prometheus to draw from")
    out = tmp_path_factory.mktemp("dashboard")
    index, failed = dashboard.render(cluster.prometheus_url, out, "15m")
    assert failed == 0, f"{failed} panel queries failed: see {index}"
    return index


def test_the_page_shows_every_panel_as_an_image_it_has(page):
    html = page.read_text()
    images = re.findall(r'<img[^>]+src="([^"]+)"', html)
    panels = sum(len(b.panels) for b in dashboard.load_dashboards())
    assert len(images) == panels, f"{len(images)} images on the page, the dashboards have {panels} panels"
    missing = [src for src in images if not (page.parent / src).is_file()]
    assert not missing, f"the page shows images that were not written: {missing}"


def test_chromium_draws_the_page(page):
    shot = screenshot.take(page, page.parent / "screenshot.png", width=1400, height=3000)
    pixels = image.imread(shot)
    assert pixels.shape[:2] == (3000, 1400), pixels.shape
    # A page that drew (charts, titles) has many colours; a blank or an error page has few.
    colours = len({tuple(p) for p in (pixels[::7, ::7, :3] * 255).astype(int).reshape(-1, 3)})
    shutil.copy(shot, ROOT / ".run" / "logs" / "dashboard.png")
    assert colours > 50, f"the screenshot has only {colours} colours: {shot}"
