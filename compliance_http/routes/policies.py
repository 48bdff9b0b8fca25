"""/v1/policies: policies, their versions, approval, sign-off and PDF downloads (the reference's
paths where it has the operation)."""

from __future__ import annotations

from .rows import group

_ONE = "/v1/policies/{policy_id}"

ROUTES = group(
    "Policies",
    ("GET", "/v1/policies", "policies.list", "List policies (staff: the policies in force)"),
    ("POST", "/v1/policies", "policies.create", "Add a policy (a draft)", 201),
    ("GET", "/v1/policies/download-all", "policies.download_all", "Every policy in force as one PDF"),
    ("GET", _ONE, "policies.get", "Read one policy"),
    ("PATCH", _ONE, "policies.update", "Change some of a policy's fields (the working copy)"),
    ("POST", _ONE + "/versions/publish", "policies.publish", "Publish the working copy as a new version"),
    ("GET", _ONE + "/versions", "policies.list_versions", "List a policy's published versions, newest first"),
    ("POST", _ONE + "/submit-for-approval", "policies.submit_for_approval", "Ask an approver to approve"),
    ("POST", _ONE + "/approve", "policies.approve", "Approve and publish the working copy"),
    ("POST", _ONE + "/reject", "policies.reject", "Send the working copy back with a comment"),
    ("POST", _ONE + "/archive", "policies.archive", "Archive a policy (out of force)"),
    ("POST", _ONE + "/restore", "policies.restore", "Bring an archived policy back"),
    ("POST", _ONE + "/acknowledge", "policies.acknowledge", "Sign the version in force as the key's person"),
    ("GET", _ONE + "/sign-off", "policies.sign_off", "Who must sign the version in force, and who has"),
    ("GET", _ONE + "/pdf", "policies.download", "The version in force as a PDF"),
    (
        "GET",
        "/v1/policy-acknowledgements",
        "policies.list_acknowledgements",
        "List acknowledgements (staff: their own)",
    ),
)
