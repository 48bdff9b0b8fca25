"""What every area stands on: errors, time and ids as ports, validation, pagination, permissions,
typed events, the unit of work, idempotency, rate-limit arithmetic, the declarations an area
makes (``registry``) and the records helper. Nothing here knows any area."""
