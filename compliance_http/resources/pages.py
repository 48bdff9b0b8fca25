"""What a person opens in a browser: ``/`` and ``/v1`` say what this server is and link its
reference; ``/docs`` is that reference, Swagger UI over ``/v1/openapi.json``.

Every asset of ``/docs`` comes from this server (the swagger-ui-bundle package ships Swagger UI's
files), never from a CDN: the reference works offline and behind a firewall, and its
Content-Security-Policy allows nothing but this origin. Its "Try it out" calls this same server,
whatever host and port it was reached on (the document's ``servers`` names the default
development address). Like health, these pages are public: they show nothing of any organization.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

import falcon
import orjson
import swagger_ui_bundle  # type: ignore[import-untyped]

from ..routes import OPENAPI
from ..wire import JSON

__all__ = ["DOCS_PATH", "LINKS", "add_pages"]

DOCS_PATH = "/docs"
LINKS = {"docs": DOCS_PATH, "openapi": OPENAPI.route.path if OPENAPI.route else "", "health": "/v1/health"}
"""Where the pages point: the interactive reference, the OpenAPI document and health."""

_ASSETS = {
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "favicon-32x32.png": "image/png",
    "favicon-16x16.png": "image/png",
}
"""The files of Swagger UI's distribution that /docs uses (the package's other files, such as its
demo index.html pointing at a public pet store, are not served)."""

_DOCS_SCRIPT = """\
"use strict";
// The document's servers name the default development address; "Try it out" calls this server.
fetch(%(openapi)s, {headers: {Accept: "application/json"}})
  .then(function (response) {
    if (!response.ok) { throw new Error("GET " + response.url + " answered " + response.status); }
    return response.json();
  })
  .then(function (spec) {
    spec.servers = [{url: window.location.origin, description: "this server"}];
    window.ui = SwaggerUIBundle({
      spec: spec,
      dom_id: "#swagger-ui",
      deepLinking: true,
      validatorUrl: null,
      persistAuthorization: false,
    });
  })
  .catch(function (error) {
    document.getElementById("swagger-ui").textContent = "Could not load the API reference: " + error.message;
    console.error(error);
  });
"""

_DOCS_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""Only this origin (Swagger UI sets inline styles on its elements, and draws some icons as data:
URLs)."""

_HOME_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'"

_CACHE = "public, max-age=86400"


def add_pages(app: falcon.App[Any, Any], version: Callable[[], str]) -> None:
    """Route ``/``, ``/v1``, ``/docs`` and Swagger UI's files on ``app``.

    :param version: gives the platform's version, shown on the pages (asked on the first request:
        reading the package metadata takes milliseconds, which every app built would pay)
    """
    home = Home(version)
    app.add_route("/", home)
    app.add_route("/v1", home)
    app.add_route(DOCS_PATH, Docs())
    app.add_route(f"{DOCS_PATH}/{{name}}", DocsAssets(Path(swagger_ui_bundle.swagger_ui_path)))


class Home:
    """A short page (or, to a client that prefers JSON, the same links as JSON)."""

    def __init__(self, version: Callable[[], str]) -> None:
        self._version = version
        self._bodies: tuple[bytes, bytes] | None = None

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        if self._bodies is None:
            version = self._version()
            self._bodies = (
                orjson.dumps({"name": "Compliance API", "version": version, "links": LINKS}),
                _home_page(version).encode(),
            )
        as_json, as_html = self._bodies
        resp.vary = ("Accept",)
        if req.client_prefers([falcon.MEDIA_HTML, JSON]) == JSON:
            resp.content_type = JSON
            resp.data = as_json
        else:
            resp.content_type = falcon.MEDIA_HTML
            resp.set_header("Content-Security-Policy", _HOME_POLICY)
            resp.data = as_html

    on_head = on_get


class Docs:
    """The Swagger UI page (``/docs``) and its start-up script (``/docs/docs.js``)."""

    def __init__(self) -> None:
        self._html = _docs_page().encode()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_HTML
        resp.set_header("Content-Security-Policy", _DOCS_POLICY)
        resp.data = self._html

    on_head = on_get


class DocsAssets:
    """Swagger UI's files from the installed package, and the page's own script."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._script = (_DOCS_SCRIPT % {"openapi": orjson.dumps(LINKS["openapi"]).decode()}).encode()

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        resp.cache_control = (_CACHE,)
        if name == "docs.js":
            resp.content_type = "text/javascript; charset=utf-8"
            resp.data = self._script
            return
        content_type = _ASSETS.get(name)
        if content_type is None:
            raise falcon.HTTPNotFound(description=f"the API reference has no file {name!r}")
        path = self._directory / name
        resp.content_type = content_type
        resp.set_stream(path.open("rb"), path.stat().st_size)

    on_head = on_get


def _home_page(version: str) -> str:
    links = LINKS
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Compliance API</title>
<link rel="icon" type="image/png" href="{DOCS_PATH}/favicon-32x32.png">
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; color: #222; }}
code {{ background: #f3f3f3; padding: 0 .25rem; }}
</style>
</head>
<body>
<h1>Compliance API</h1>
<p>Version {html.escape(version)}. Every request under <code>/v1</code> carries an
<code>X-API-Key</code> header (<code>compliance serve</code> prints the first one on a new database).</p>
<ul>
<li><a href="{links["docs"]}">API reference</a>: every operation, tried from the browser</li>
<li><a href="{links["openapi"]}">OpenAPI document</a> (<code>{links["openapi"]}</code>)</li>
<li><a href="{links["health"]}">Health</a> (<code>{links["health"]}</code>)</li>
</ul>
</body>
</html>
"""


def _docs_page() -> str:
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Compliance API reference</title>
<link rel="stylesheet" href="{DOCS_PATH}/swagger-ui.css">
<link rel="icon" type="image/png" href="{DOCS_PATH}/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="{DOCS_PATH}/favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{DOCS_PATH}/swagger-ui-bundle.js"></script>
<script src="{DOCS_PATH}/docs.js"></script>
</body>
</html>
"""
