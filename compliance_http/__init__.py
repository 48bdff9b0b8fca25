"""compliance_http: the /v1 HTTP API over ``compliance_core``.

``create_app(platform)`` builds the Falcon WSGI app; ``HTTPTransport`` lets
``compliance_core.Client`` call a server (or the app itself, without a socket).
"""

from .app import create_app
from .client import HTTPTransport

__all__ = ["create_app", "HTTPTransport"]
