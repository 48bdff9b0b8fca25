"""compliance_http: the /v1 HTTP API over ``compliance_core``.

``compliance_http.app.create_app(platform)`` builds the Falcon WSGI app;
``compliance_http.client.HTTPTransport`` lets ``compliance_core.Client`` call a server (or the
app itself, without a socket). Nothing is imported here, so ``python -m compliance_http.openapi``
and the CLI load only what they use.
"""
