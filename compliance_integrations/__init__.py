"""The built-in integration providers: adapters to services outside the platform (an HTTPS
endpoint, a source host, a cloud account) implementing core's ``Provider`` port
(``compliance_core.areas.integrations.providers``).

Core never imports this package: it finds each provider through the ``compliance.providers``
entry points, so an embedding application can install more, or replace these, without a change
to core.
"""
