"""A developer whose receiver runs on their own machine learns from the refusal itself which
setting allows it, and following that setting works."""

from __future__ import annotations

import pytest

from compliance_core import Platform, ValidationError
from compliance_core.areas.webhooks import NewWebhook, WebhookPolicy

SETTING = "COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1"
IN_PROCESS = "WebhookPolicy(allow_private=True)"


def refusal(platform: Platform, url: str) -> str:
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    with pytest.raises(ValidationError) as raised:
        platform.webhooks.create(owner, NewWebhook(url=url, events=["*"]))
    assert (raised.value.details["field"], raised.value.details["value"]) == ("url", url)
    return str(raised.value.details["reason"])


@pytest.mark.parametrize(
    "url, reason",
    [
        ("http://127.0.0.1:8000/compliance", "must be an https URL"),
        ("http://93.184.215.14/hook", "must be an https URL"),
        ("https://127.0.0.1/hook", "not a public address"),
        ("https://192.168.1.20/hook", "not a public address"),
        ("https://[::1]/hook", "not a public address"),
    ],
)
def test_a_refusal_the_setting_would_lift_names_the_setting(url: str, reason: str) -> None:
    with Platform.open("memory://") as platform:
        said = refusal(platform, url)
    assert reason in said
    assert SETTING in said and "compliance serve" in said and IN_PROCESS in said
    with Platform.open("memory://", settings={"webhooks": WebhookPolicy(allow_private=True)}) as platform:
        owner = platform.actor(platform.bootstrap("Acme").organization.id)
        assert platform.webhooks.create(owner, NewWebhook(url=url, events=["*"])).webhook.url == url


@pytest.mark.parametrize("url", ["https://169.254.169.254/latest", "https://[fd00:ec2::254]/"])
def test_a_refusal_no_setting_lifts_does_not_name_one(url: str) -> None:
    for settings in ({}, {"webhooks": WebhookPolicy(allow_private=True)}):
        with Platform.open("memory://", settings=settings) as platform:
            said = refusal(platform, url)
        assert "metadata" in said and SETTING not in said
