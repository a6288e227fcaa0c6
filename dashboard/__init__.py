"""The dashboard: a read-only web app over the index (`indexer`), FastAPI with server-rendered
Jinja2 templates, SVG charts drawn on the server and one small script that refreshes pages.

- `dashboard.app.create_app(index, metrics=None)`: the pages and their ``/api`` JSON.
- `dashboard.server.Dashboard(index, client, host, port)`: the app and the indexer in
  background threads (``.start()``, ``.url``, ``.stop()``, ``.serve()``).
- `dashboard.queries`: what each page shows (pydantic models); `dashboard.svg`: the charts;
  `dashboard.metrics.MetricWorker`: a run's metric per round, computed lazily and cached.

Stands on `indexer` and `chain` (and `noderuntime.runs` for the run metric).
"""

from __future__ import annotations

__all__: list[str] = []
