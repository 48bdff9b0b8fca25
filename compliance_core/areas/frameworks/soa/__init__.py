"""The statement of applicability: per enabled framework, numbered versions of which requirements
apply and why, approved by a named owner or admin, frozen on approval, exported for auditors."""
