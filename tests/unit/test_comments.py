"""Comments in-process: the area's own rules (the generic suites cover the rest)."""

from __future__ import annotations

import re

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_core import Actor, Forbidden, NotFound, Platform, Role, SequentialIds, ValidationError
from compliance_core.areas import AREAS
from compliance_core.areas.comments import (
    AREA,
    MAX_CONTENT,
    CommentEdit,
    CommentFilter,
    NewComment,
    to_html,
)
from compliance_core.areas.frameworks.controls import NewControl
from compliance_core.areas.people import NewPerson, PersonPatch
from compliance_core.areas.policies import NewPolicy, PublishPolicy
from compliance_core.areas.risks import NewRisk
from compliance_core.areas.tasks import NewTask
from compliance_core.areas.vendors import NewVendor
from compliance_core.kernel.audit import AuditFilter
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.subjects import Commentable, commentables
from compliance_markdown import MarkdownItHtml
from compliance_store.memory import MemoryStore


@pytest.fixture
def risk(platform, owner):
    return platform.risks.create(owner, NewRisk(title="Backups are not restored in tests"))


@pytest.fixture
def person_as(platform, boot, owner):
    """A new person of the organization with ``role``, and an actor that is that person."""

    def make(role: str = "employee", name: str = "Ada Lovelace"):
        email = f"{name.split()[0].lower()}.{role}@acme.example"
        person = platform.people.create(owner, NewPerson(name=name, email=email, role=role))
        return person, platform.actor(boot.organization.id, role, person_id=person.id)

    return make


def _on(entity, content: str = "Looks right.", **extra) -> NewComment:
    kind = type(entity).__name__.lower()
    return NewComment(content=content, entity_type=kind, entity_id=entity.id, **extra)


def _messages(platform):
    with platform.uow.read() as session:
        return [m for m in session[OUTBOX].pending(1000) if m.type.startswith("comment.")]


# -- posting ---------------------------------------------------------------------------------


def test_a_comment_is_written_by_the_callers_person_and_recorded(platform, risk, person_as) -> None:
    ada, as_ada = person_as("admin")
    comment = platform.comments.create(as_ada, _on(risk, "Restore test is **overdue**."))
    assert (comment.entity_type, comment.entity_id) == ("risk", risk.id)
    assert (comment.author_id, comment.author_name) == (ada.id, "Ada Lovelace")
    assert comment.content == "Restore test is **overdue**."  # stored as written
    [message] = _messages(platform)
    assert message.type == "comment.created"
    assert message.payload["data"]["authorId"] == ada.id
    assert message.payload["data"]["contentHtml"] == "<p>Restore test is <strong>overdue</strong>.</p>"
    assert "postedBy" not in message.payload["data"]
    entries = platform.audit_log.list(platform.actor(risk.organization_id), AuditFilter(entity_id=comment.id)).items
    assert [(e.action, e.actor_person_id) for e in entries] == [("comment.created", ada.id)]


def test_every_kind_an_area_declares_takes_comments(platform, owner) -> None:
    vendor = platform.vendors.create(owner, NewVendor(name="Cloud Co"))
    policy = platform.policies.create(owner, NewPolicy(name="Access", content="Reviewed quarterly."))
    control = platform.controls.create(owner, NewControl(name="Access review", code="AC-1"))
    for entity in (vendor, policy, control):
        comment = platform.comments.create(owner, _on(entity))
        assert comment.entity_id == entity.id
    kinds = {subject.kind for subject in platform.comments.subjects}
    assert {"risk", "vendor", "policy", "control"} <= kinds


def test_an_unknown_kind_is_refused_naming_entity_type_and_the_kinds(platform, owner, risk) -> None:
    with pytest.raises(ValidationError) as refused:
        platform.comments.create(owner, NewComment(content="x", entity_type="spaceship", entity_id=risk.id))
    assert refused.value.details["field"] == "entityType"
    assert refused.value.details["value"] == "spaceship"
    for kind in ("control", "policy", "risk", "vendor"):
        assert kind in refused.value.details["reason"]


def test_a_record_that_is_not_the_organizations_is_refused_naming_entity_id(platform, owner, other_org, risk) -> None:
    theirs = platform.risks.create(other_org, NewRisk(title="Theirs"))
    for entity_id in ("rsk_missing", theirs.id):
        with pytest.raises(ValidationError) as refused:
            platform.comments.create(owner, NewComment(content="x", entity_type="risk", entity_id=entity_id))
        assert refused.value.details == {
            "field": "entityId",
            "value": entity_id,
            "reason": "is not a risk of this organization",
        }
    assert platform.comments.list(owner).total == 0


def test_a_comment_longer_than_the_limit_is_refused_naming_content(platform, owner, risk) -> None:
    assert platform.comments.create(owner, _on(risk, "x" * MAX_CONTENT)).content == "x" * MAX_CONTENT
    with pytest.raises(ValidationError) as refused:
        _on(risk, "x" * (MAX_CONTENT + 1))
    assert refused.value.details["field"] == "content"
    assert "2000" in refused.value.details["reason"]
    with pytest.raises(ValidationError) as empty:
        _on(risk, "   ")
    assert empty.value.details["field"] == "content"


def test_user_id_may_only_name_the_callers_own_person(platform, risk, person_as, owner) -> None:
    ada, as_ada = person_as("employee")
    grace, _ = person_as("employee", "Grace Hopper")
    assert platform.comments.create(as_ada, _on(risk, user_id=ada.id)).author_id == ada.id
    with pytest.raises(ValidationError) as refused:
        platform.comments.create(as_ada, _on(risk, user_id=grace.id))
    assert refused.value.details["field"] == "userId"
    with pytest.raises(ValidationError) as unbound:  # a key of no person speaks for nobody
        platform.comments.create(owner, _on(risk, user_id=grace.id))
    assert unbound.value.details["field"] == "userId"
    assert "bind" in unbound.value.details["reason"]


# -- mentions --------------------------------------------------------------------------------


def test_mentions_of_active_people_are_recorded_once_in_order(platform, owner, other_org, risk, person_as) -> None:
    ada, _ = person_as("employee")
    grace, _ = person_as("auditor", "Grace Hopper")
    gone, _ = person_as("employee", "Gone Person")
    platform.people.update(owner, gone.id, PersonPatch(is_active=False))
    stranger = platform.people.create(other_org, NewPerson(name="Stranger", email="s@globex.example"))
    text = (
        f"@[Grace]({grace.id}) and @[Ada]({ada.id}), again @[Ada]({ada.id}); "
        f"not @[Gone]({gone.id}), @[Stranger]({stranger.id}), @[Nobody](mem_nobody) or @ada"
    )
    comment = platform.comments.create(owner, _on(risk, text))
    assert comment.mentioned_person_ids == (grace.id, ada.id)
    [message] = _messages(platform)
    assert message.payload["data"]["mentionedPersonIds"] == [grace.id, ada.id]
    html = platform.renderer.native(comment)["contentHtml"]
    assert f'<span class="mention" data-person-id="{ada.id}">@Ada</span>' in html
    assert "mem_nobody" not in html and "@Nobody" in html


def test_an_edit_reads_the_mentions_again_and_keeps_the_old_ones_in_previous(platform, risk, person_as) -> None:
    ada, as_ada = person_as("employee")
    grace, _ = person_as("employee", "Grace Hopper")
    comment = platform.comments.create(as_ada, _on(risk, "Draft"))
    edited = platform.comments.update(as_ada, comment.id, CommentEdit(content=f"Over to @[Grace]({grace.id})"))
    assert edited.mentioned_person_ids == (grace.id,)
    assert edited.updated_at >= comment.updated_at
    updated = [m for m in _messages(platform) if m.type == "comment.updated"]
    assert updated[0].payload["previous"] == {
        "content": "Draft",
        "mentionedPersonIds": [],
        "contentHtml": "<p>Draft</p>",
    }


# -- rendering -------------------------------------------------------------------------------

MARKDOWN = MarkdownItHtml()


def render(text: str, mentioned: tuple[str, ...] = ()) -> str:
    """The comment as the platform renders it, through the installed Markdown adapter."""
    return to_html(text, mentioned, MARKDOWN)


def test_html_in_a_comment_is_shown_as_text_never_as_markup() -> None:
    rendered = render('<script>alert("x")</script> <img src=x onerror=alert(1)> **ok**')
    assert "<script" not in rendered and "<img" not in rendered
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in rendered
    assert "<strong>ok</strong>" in rendered


@pytest.mark.parametrize(
    "link",
    [
        "[click](javascript:alert(1))",
        "[click](data:text/html;base64,PHNjcmlwdD4=)",
        "[click](vbscript:msgbox)",
        '[click](https://a.example/" onmouseover="alert(1))',
    ],
)
def test_only_web_and_mail_links_become_links_and_no_attribute_is_broken_out_of(link: str) -> None:
    rendered = render(link)
    assert "javascript:" not in rendered.split("href=")[-1] or "<a" not in rendered
    assert 'href="javascript' not in rendered and 'href="data' not in rendered and 'href="vbscript' not in rendered
    assert '" onmouseover' not in rendered


_TAGS = re.compile(
    r'</?(p|h[1-6]|ul|ol|li|blockquote|pre|code|strong|em)>|<br />|<hr />|<span class="mention" data-person-id="[a-z0-9_]+">'
    r'|</span>|<a href="(https?://|mailto:)[^"<>]*" rel="nofollow noopener noreferrer">|</a>|<ol start="[0-9]+">',
    re.IGNORECASE,
)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("<>\"'&*_`[]()@#>-+.: \njavascript/mem_1"), max_size=300))
def test_any_text_renders_to_the_allowed_tags_only(text: str) -> None:
    rendered = render(text, ("mem_1",))
    assert "<" not in _TAGS.sub("", rendered), rendered
    assert '"' not in _TAGS.sub("", rendered).replace("&quot;", ""), rendered


def test_the_markdown_a_comment_uses_is_rendered() -> None:
    text = "# Plan\n\nFirst line\nsecond line\n\n- one\n- `two`\n\n> quoted\n\n```\n<b>code</b>\n```"
    assert render(text) == (
        "<h1>Plan</h1>\n"
        "<p>First line<br />\nsecond line</p>\n"
        "<ul>\n<li>one</li>\n<li><code>two</code></li>\n</ul>\n"
        "<blockquote>\n<p>quoted</p>\n</blockquote>\n"
        "<pre><code>&lt;b&gt;code&lt;/b&gt;\n</code></pre>"
    )
    assert render("see [the docs](https://example.com/a?b=1&c=2) and *this* or _that_") == (
        '<p>see <a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener noreferrer">the docs</a>'
        " and <em>this</em> or <em>that</em></p>"
    )
    assert render("snake_case_name") == "<p>snake_case_name</p>"  # CommonMark: no emphasis inside words
    assert render("![tracker](https://example.com/t.png)") == (
        '<p>!<a href="https://example.com/t.png" rel="nofollow noopener noreferrer">tracker</a></p>'
    )


def test_a_mention_cannot_be_forged_and_names_only_recorded_people() -> None:
    forged = "\ue0000\ue001 and @[Ada](mem_1) and @[Eve](mem_9)"
    assert render(forged, ("mem_1",)) == (
        '<p>0 and <span class="mention" data-person-id="mem_1">@Ada</span> and @Eve</p>'
    )


def test_without_a_markdown_adapter_the_text_is_shown_as_written() -> None:
    assert to_html("**bold** <i>\n\nnext", ("mem_1",)) == "<p>**bold** &lt;i&gt;</p>\n<p>next</p>"


# -- editing and deleting --------------------------------------------------------------------


def test_only_the_author_edits_a_comment(platform, risk, person_as, owner) -> None:
    _, as_ada = person_as("employee")
    _, as_admin = person_as("admin", "Alan Admin")
    comment = platform.comments.create(as_ada, _on(risk, "Mine"))
    for stranger in (as_admin, owner):
        with pytest.raises(Forbidden) as refused:
            platform.comments.update(stranger, comment.id, CommentEdit(content="Theirs"))
        assert refused.value.details["field"] == "authorId"
    assert platform.comments.update(as_ada, comment.id, CommentEdit(content="Mine, edited")).content == "Mine, edited"


def test_the_same_text_changes_nothing_and_records_nothing(platform, risk, owner) -> None:
    comment = platform.comments.create(owner, _on(risk, "Same"))
    assert platform.comments.update(owner, comment.id, CommentEdit(content="Same")) == comment
    assert [m.type for m in _messages(platform)] == ["comment.created"]


def test_a_context_url_left_out_of_an_edit_is_kept(platform, risk, owner) -> None:
    comment = platform.comments.create(owner, _on(risk, "Hi", context_url="https://app.example/risks/1"))
    edited = platform.comments.update(owner, comment.id, CommentEdit(content="Hello"))
    assert edited.context_url == "https://app.example/risks/1"


def test_the_author_or_an_owner_or_admin_deletes_a_comment(platform, risk, person_as, boot) -> None:
    _, as_ada = person_as("employee")
    _, as_grace = person_as("employee", "Grace Hopper")
    _, as_auditor = person_as("auditor", "Audrey Auditor")
    _, as_admin = person_as("admin", "Alan Admin")
    first, second = (platform.comments.create(as_ada, _on(risk, text)) for text in ("one", "two"))
    for stranger in (as_grace, as_auditor):
        with pytest.raises(Forbidden):
            platform.comments.delete(stranger, first.id)
    platform.comments.delete(as_ada, first.id)
    platform.comments.delete(as_admin, second.id)
    assert platform.comments.list(platform.actor(boot.organization.id)).total == 0
    deleted = [m for m in _messages(platform) if m.type == "comment.deleted"]
    assert [m.payload["data"]["content"] for m in deleted] == ["one", "two"]
    with pytest.raises(NotFound):
        platform.comments.delete(as_ada, first.id)


def test_a_comment_of_a_key_without_a_person_is_that_keys(platform, boot, risk) -> None:
    first = Actor(organization_id=boot.organization.id, role=Role.ADMIN, key_id="key_first")
    second = Actor(organization_id=boot.organization.id, role=Role.ADMIN, key_id="key_second")
    comment = platform.comments.create(first, _on(risk, "From the integration"))
    assert comment.author_id is None and comment.posted_by == "key_first"
    with pytest.raises(Forbidden):
        platform.comments.update(second, comment.id, CommentEdit(content="Not mine"))
    assert platform.comments.update(first, comment.id, CommentEdit(content="Mine")).content == "Mine"
    platform.comments.delete(second, comment.id)  # an Admin deletes any


def test_another_organizations_comment_is_not_found(platform, owner, other_org, risk) -> None:
    comment = platform.comments.create(owner, _on(risk))
    with pytest.raises(NotFound):
        platform.comments.update(other_org, comment.id, CommentEdit(content="x"))
    with pytest.raises(NotFound):
        platform.comments.delete(other_org, comment.id)
    assert platform.comments.list(other_org).total == 0


# -- who reads what --------------------------------------------------------------------------


def test_a_thread_lists_newest_first(platform, owner, risk, clock) -> None:
    other = platform.risks.create(owner, NewRisk(title="Other"))
    made = []
    for text in ("first", "second", "third"):
        made.append(platform.comments.create(owner, _on(risk, text)).id)
        clock.advance(seconds=1)
    platform.comments.create(owner, _on(other, "elsewhere"))
    thread = platform.comments.list(owner, CommentFilter(entity_type="risk", entity_id=risk.id))
    assert [c.id for c in thread.items] == made[::-1]
    assert platform.comments.list(owner).total == 4


def test_staff_comment_only_on_what_they_see(platform, owner, person_as) -> None:
    _, as_ada = person_as("employee")
    _, as_carl = person_as("contractor", "Carl Contractor")
    draft = platform.policies.create(owner, NewPolicy(name="Draft", content="Not yet."))
    published = platform.policies.create(owner, NewPolicy(name="Live", content="In force."))
    platform.policies.publish(owner, published.id, PublishPolicy())
    with pytest.raises(ValidationError) as hidden:
        platform.comments.create(as_ada, _on(draft))
    assert hidden.value.details["field"] == "entityId"
    assert platform.comments.create(as_ada, _on(published)).entity_id == published.id
    control = platform.controls.create(owner, NewControl(name="Access review"))
    with pytest.raises(Forbidden) as refused:  # contractors do not read controls
        platform.comments.create(as_carl, _on(control))
    assert refused.value.details == {"action": "control:read", "role": "contractor"}


def test_staff_read_the_thread_of_what_they_see_and_otherwise_their_own(platform, owner, person_as) -> None:
    ada, as_ada = person_as("employee")
    _, as_grace = person_as("employee", "Grace Hopper")
    draft = platform.policies.create(owner, NewPolicy(name="Draft", content="Not yet."))
    published = platform.policies.create(owner, NewPolicy(name="Live", content="In force."))
    platform.policies.publish(owner, published.id, PublishPolicy())
    platform.comments.create(owner, _on(draft, "secret plans"))
    platform.comments.create(owner, _on(published, "owner on live"))
    mine = platform.comments.create(as_ada, _on(published, "ada on live"))
    platform.comments.create(as_grace, _on(published, "grace on live"))
    assert [c.content for c in platform.comments.list(as_ada).items] == ["ada on live"]
    thread = platform.comments.list(as_ada, CommentFilter(entity_type="policy", entity_id=published.id))
    assert {c.content for c in thread.items} == {"owner on live", "ada on live", "grace on live"}
    hidden = platform.comments.list(as_ada, CommentFilter(entity_type="policy", entity_id=draft.id))
    assert hidden.items == ()
    assert platform.comments.list(as_ada, CommentFilter(author_id=ada.id)).items == (mine,)
    with pytest.raises(ValidationError) as refused:
        platform.comments.list(as_ada, CommentFilter(author_id="mem_someone"))
    assert refused.value.details["field"] == "authorId"
    assert platform.comments.list(owner).total == 4  # owners, admins and auditors read every comment
    auditor = platform.actor(owner.organization_id, "auditor")
    assert platform.comments.list(auditor).total == 4


def test_staff_comment_on_the_tasks_assigned_to_them(platform, owner, person_as) -> None:
    ada, as_ada = person_as("employee")
    grace, _ = person_as("employee", "Grace Hopper")
    hers = platform.tasks.create(owner, NewTask(title="Collect backups evidence", assignee_id=ada.id))
    theirs = platform.tasks.create(owner, NewTask(title="Rotate keys", assignee_id=grace.id))
    assert platform.comments.create(as_ada, _on(hers, "Uploaded the logs.")).entity_type == "task"
    with pytest.raises(ValidationError) as refused:
        platform.comments.create(as_ada, _on(theirs))
    assert refused.value.details["field"] == "entityId"
    assert platform.comments.create(owner, _on(theirs)).entity_id == theirs.id


def test_a_list_naming_an_unknown_kind_is_refused(platform, owner) -> None:
    with pytest.raises(ValidationError) as refused:
        platform.comments.list(owner, CommentFilter(entity_type="spaceship"))
    assert refused.value.details["field"] == "entityType"


# -- the port --------------------------------------------------------------------------------


def test_a_platform_without_an_area_has_no_such_kind(owner) -> None:
    areas = tuple(area for area in AREAS if area.name != "vendors")
    platform = Platform(MemoryStore(), ids=SequentialIds(), areas=areas)
    boot = platform.bootstrap("Lean")
    actor = platform.actor(boot.organization.id)
    assert "vendor" not in {subject.kind for subject in platform.comments.subjects}
    with pytest.raises(ValidationError) as refused:
        platform.comments.create(actor, NewComment(content="x", entity_type="vendor", entity_id="vnd_1"))
    assert refused.value.details["field"] == "entityType"


def test_two_areas_may_not_claim_one_kind() -> None:
    risks = next(area for area in AREAS if area.name == "risks")
    [port] = [port for port in risks.ports if isinstance(port, Commentable)]
    with pytest.raises(ValueError, match="risk"):
        commentables((port, attrs.evolve(port)))


def test_the_area_declares_its_tag_and_its_operations() -> None:
    assert AREA.tag == "Comments"
    routes = {(op.route.method, op.route.path) for op in AREA.operations if op.route is not None}
    assert routes == {
        ("GET", "/v1/comments"),
        ("POST", "/v1/comments"),
        ("PUT", "/v1/comments/{comment_id}"),
        ("DELETE", "/v1/comments/{comment_id}"),
    }
    assert {op.method for op in AREA.operations if op.authored} == {"update", "delete"}


def test_a_fenced_block_with_an_info_string_renders_without_a_class() -> None:
    """Found by the property above: ```` ```1 ```` rendered ``<code class="language-1">``."""
    assert render("```python\nprint('<hi>')\n```") == "<pre><code>print('&lt;hi&gt;')\n</code></pre>"
