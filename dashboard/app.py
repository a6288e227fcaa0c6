"""The dashboard's web app: server-rendered pages (Jinja2) and the same data as JSON under
``/api``, read from the index.

    app = create_app(index, metrics=MetricWorker(index, client))

Pages (stable links): ``/`` (jobs, runs, disputes, forced errors, models, accounts),
``/jobs/N``, ``/runs/N``, ``/disputes/N`` (a run claim's: ``/disputes/claim-N``),
``/models/NAME`` (a name or the ``0x`` id), ``/accounts/ADDR``; each has its ``/api/...`` twin
(the pydantic models of `dashboard.queries`; wei as decimal strings). Every address on a page
carries its roles there (`dashboard.roles`; all of an account's: ``/api/accounts/ADDR/roles``);
``/search?q=...`` (the header's box) redirects to the page of a job id, address, model or run
(`dashboard.search`), or answers 404 with one sentence. Pages refresh their content every few
seconds with a small script (``/static/live.js``), so they follow the indexer as it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from sqlalchemy.orm import Session

from dashboard import queries, roles, search, svg, views
from dashboard.metrics import MetricWorker
from indexer.store import Index
from veritrain.units import utc_time, vtt_number

__all__ = ["create_app"]

HERE = Path(__file__).parent
T = TypeVar("T")


def tokens(wei: int | None) -> str:
    """Wei as VTT, exactly (integer arithmetic, every one of the 18 decimals that is not a
    trailing zero, grouped: ``"1,234.5"``, ``"0.000000000000000001"``); None as ``"-"``."""
    if wei is None:
        return "-"
    return vtt_number(int(wei), 18)


def utc(timestamp: int | None) -> str:
    """A Unix time (s) as ``"YYYY-MM-DD HH:MM:SS UTC"``; None or 0 (no such time) as ``"-"``."""
    if not timestamp:
        return "-"
    return f"{utc_time(int(timestamp))} UTC"


def create_app(index: Index, *, metrics: MetricWorker | None = None) -> FastAPI:
    """The FastAPI app reading ``index``.

    Args:
        index: the open index (the indexer may write it meanwhile).
        metrics: computes run metrics on demand (None: only cached ones are shown).
    """
    app = FastAPI(
        title="veritrain dashboard", docs_url="/api/docs", openapi_url="/api/openapi.json"
    )
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["tokens"] = tokens
    templates.env.filters["utc"] = utc
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    def read(fn: Callable[[Session], T | None], what: str) -> T:
        with index.reader() as s:
            value = fn(s)
        if value is None:
            raise HTTPException(status_code=404, detail=f"no {what} in the index")
        return value

    def row_id(n: int, what: str) -> int:
        """`n` if an index row can have it (SQLite integers are 64-bit), else a 404."""
        if not 0 <= n <= queries.MAX_ROW_ID:
            raise HTTPException(status_code=404, detail=f"no {what} {n} in the index")
        return n

    def labels(fn: Callable[[Session], list[roles.Role]], scope: str) -> dict[str, list[str]]:
        """Address -> its role labels on the page of ``scope`` (the ``addr`` macro's ``roles``)."""
        with index.reader() as s:
            return roles.by_address(fn(s), scope)

    def page(request: Request, template: str, **context: Any) -> HTMLResponse:
        with index.reader() as s:
            status = queries.status(s)
        return templates.TemplateResponse(
            request, template, {"status": status, "tokens": tokens, **context}
        )

    # ------------------------------------------------------------------------ JSON

    @app.get("/api/status")
    def api_status() -> views.Status:
        return read(queries.status, "status")

    @app.get("/api/overview")
    def api_overview() -> views.Overview:
        return read(queries.overview, "overview")

    @app.get("/api/jobs/{job_id}")
    def api_job(job_id: int) -> views.JobView:
        row_id(job_id, "job")
        return read(lambda s: queries.job(s, job_id), f"job {job_id}")

    @app.get("/api/runs/{run_id}")
    def api_run(run_id: int) -> views.RunView:
        row_id(run_id, "run")
        if metrics is not None:
            metrics.request(run_id)
        return read(lambda s: queries.run(s, run_id), f"run {run_id}")

    @app.get("/api/disputes/{key}")
    def api_dispute(key: str) -> views.DisputeView:
        return read(lambda s: queries.dispute(s, key), f"dispute {key}")

    @app.get("/api/models/{ref}")
    def api_model(ref: str) -> views.ModelView:
        return read(lambda s: queries.model(s, ref), f"model {ref}")

    @app.get("/api/accounts/{address}")
    def api_account(address: str) -> views.AccountView:
        return read(lambda s: queries.account(s, address), f"account {address}")

    @app.get("/api/accounts/{address}/roles")
    def api_account_roles(address: str) -> list[roles.Role]:
        a = read(lambda s: queries.account(s, address), f"account {address}")
        with index.reader() as s:
            return roles.account_roles(s, a.address)

    # ------------------------------------------------------------------------ pages

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> HTMLResponse:
        return page(request, "home.html", o=read(queries.overview, "overview"))

    @app.get("/jobs/{job_id}", response_class=HTMLResponse)
    def job_page(request: Request, job_id: int) -> HTMLResponse:
        row_id(job_id, "job")
        j = read(lambda s: queries.job(s, job_id), f"job {job_id}")
        who = labels(lambda s: roles.job_roles(s, job_id), f"job {job_id}")
        return page(request, "job.html", j=j, roles=who)

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run_page(request: Request, run_id: int) -> HTMLResponse:
        row_id(run_id, "run")
        if metrics is not None:
            metrics.request(run_id)
        r = read(lambda s: queries.run(s, run_id), f"run {run_id}")
        plot = svg.line_plot(
            [(rv.round, rv.metric) for rv in r.round_views if rv.phase == "Final"],
            y_label=r.metric_name or "metric",
        )
        who = labels(lambda s: roles.run_roles(s, run_id), f"run {run_id}")
        return page(request, "run.html", r=r, plot=plot, roles=who)

    @app.get("/disputes/{key}", response_class=HTMLResponse)
    def dispute_page(request: Request, key: str) -> HTMLResponse:
        d = read(lambda s: queries.dispute(s, key), f"dispute {key}")
        who = labels(lambda s: roles.dispute_roles(s, d.kind, d.dispute_id), f"dispute {d.key}")
        return page(request, "dispute.html", d=d, roles=who)

    @app.get("/models/{ref}", response_class=HTMLResponse)
    def model_page(request: Request, ref: str) -> HTMLResponse:
        m = read(lambda s: queries.model(s, ref), f"model {ref}")
        chart = svg.ownership_bars([(h.account, h.shares, h.bps) for h in m.holders])
        who = labels(lambda s: roles.model_roles(s, m.model_id), f"model {m.name or m.model_id}")
        return page(request, "model.html", m=m, chart=chart, roles=who)

    @app.get("/accounts/{address}", response_class=HTMLResponse)
    def account_page(request: Request, address: str) -> HTMLResponse:
        a = read(lambda s: queries.account(s, address), f"account {address}")
        with index.reader() as s:
            held = roles.account_roles(s, a.address)
        return page(request, "account.html", a=a, held=held)

    @app.get("/search", response_class=HTMLResponse)
    def search_page(q: str = "") -> RedirectResponse:
        with index.reader() as s:
            try:
                target = search.find(s, q)
            except search.NotFound as e:
                raise HTTPException(status_code=404, detail=str(e)) from None
        return RedirectResponse(target, status_code=303)

    @app.exception_handler(HTTPException)
    def not_found(request: Request, exc: HTTPException) -> Response:
        from fastapi.responses import JSONResponse

        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)
        return templates.TemplateResponse(
            request,
            "error.html",
            {"status": None, "message": str(exc.detail)},
            status_code=exc.status_code,
        )

    return app
