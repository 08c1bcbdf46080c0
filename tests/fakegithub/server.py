"""A stateful imitation of the GitHub REST endpoints the bot uses, on 127.0.0.1, for tests.

Issues (listing with filters, pagination and Link headers), comments, labels, reactions,
collaborator permission, /user, /rate_limit; rate-limit headers on every answer; and faults to
inject: 5xx, secondary rate limit with Retry-After, primary rate limit with X-RateLimit-Reset,
404s on an issue created moments ago, and connections dropped before or after the request
was applied. Response bodies start from the real recorded answers (see recorded.py).

GitHub's limits are enforced as GitHub does, with its 422 answer and `errors` list: issue
titles of at most 256 characters, issue bodies and comments of at most 65,536, no empty
comment. Closing an issue records who closed it (`closed_by`, read by GET of the issue).

The issue search (`GET /search/issues`) matches every quoted phrase and word of `q` in an
issue's title or body, honours `repo:`, `is:issue`, `is:pr` and `state:`, and ranks by how often
the terms occur; it has GitHub's limits of its own: `search_limit` requests a minute per token
(answered with the search resource's `X-RateLimit-*` headers, then 403 until the minute ends,
on the fake's clock) and queries of at most `max_query` characters (422 beyond).

So are its permissions, by each account's level in `permissions` (read, triage, write,
maintain, admin): labels given to a new issue are silently dropped without push access (as
GitHub documents), setting labels needs triage and creating one push (else 403), a locked
issue (`lock_issue`) takes comments only from accounts with push access, and reading a
collaborator's permission needs push access (the recorded 403).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from fakegithub.recorded import template

ACTIONS_TOKEN = "actions-token"
"""A token that behaves like a GitHub Actions GITHUB_TOKEN: /user is refused."""

MAX_TITLE = 256
MAX_BODY = 65536
DOCS = "https://docs.github.com/rest/issues"
LEVELS = ("none", "read", "triage", "write", "maintain", "admin")
NOT_ACCESSIBLE = {"message": "Resource not accessible by integration", "documentation_url": DOCS}
LOCKED = {
    "message": "Unable to create comment because issue is locked.",
    "documentation_url": "https://help.github.com/articles/locking-conversations/",
}


def invalid(resource: str, field: str, code: str, message: str, docs: str) -> tuple[int, dict[str, str], Any]:
    """GitHub's 422 answer, as real exchanges show it: one entry per broken rule in `errors`."""
    error = {"resource": resource, "code": code, "field": field, "message": message}
    return (
        422,
        {},
        {"message": "Validation Failed", "errors": [error], "documentation_url": docs, "status": "422"},
    )


def issue_limits(data: dict[str, Any], creating: bool) -> tuple[int, dict[str, str], Any] | None:
    docs = f"{DOCS}/issues#{'create' if creating else 'update'}-an-issue"
    if creating and not (data or {}).get("title"):
        return (
            422,
            {},
            {
                "message": "Validation Failed",
                "errors": [{"resource": "Issue", "field": "title", "code": "missing_field"}],
                "documentation_url": docs,
                "status": "422",
            },
        )
    title, body = (data or {}).get("title"), (data or {}).get("body")
    if title is not None and len(title) > MAX_TITLE:
        return invalid(
            "Issue", "title", "custom", f"title is too long (maximum is {MAX_TITLE} characters)", docs
        )
    if body is not None and len(body) > MAX_BODY:
        return invalid(
            "Issue", "body", "custom", f"body is too long (maximum is {MAX_BODY} characters)", docs
        )
    return None


def comment_limits(data: dict[str, Any]) -> tuple[int, dict[str, str], Any] | None:
    docs = f"{DOCS}/comments#create-an-issue-comment"
    body = (data or {}).get("body") or ""
    if not body.strip():
        return invalid("IssueComment", "body", "missing_field", "Body cannot be blank", docs)
    if len(body) > MAX_BODY:
        return invalid(
            "IssueComment",
            "data",
            "unprocessable",
            f"Body is too long (maximum is {MAX_BODY} characters)",
            docs,
        )
    return None


@dataclass
class Fault:
    method: str
    path: str  # regular expression, searched in the request path
    kind: str  # error, secondary, primary, drop, drop_after, slow (answered after `seconds`)
    times: int = 1
    status: int = 502
    retry_after: int | str = 7  # seconds, or an HTTP date (`FakeGitHub.http_date`)
    reset_in: int = 30
    seconds: float = 0.5  # slow: how long the answer takes (the request is applied after it)


@dataclass
class RepoState:
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)  # id -> comment (+ "_issue")
    reactions: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # comment id -> reactions
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)
    # What a deployment sets in Settings (read by `triagebot doctor`): names only for secrets.
    owner_type: str = "Organization"  # or "User": whose repository it is
    fork: bool = False
    private: bool = False
    workflows: dict[str, str] = field(default_factory=dict)  # file name -> state ("active", ...)
    secrets: set[str] = field(default_factory=set)
    variables: dict[str, str] = field(default_factory=dict)
    branches: dict[str, bool] = field(default_factory=lambda: {"main": False})  # name -> protected
    pages: str | None = None  # build_type: "workflow" (GitHub Actions), "legacy" (a branch), None: off
    pages_branch: str = "gh-pages"
    runners: list[tuple[str, str, list[str]]] = field(default_factory=list)  # name, status, labels


class FakeGitHub:
    def __init__(self, bot: str = "triagebot-bot", repo: str = "pytorch/pytorch") -> None:
        self.bot = bot
        self.tokens: dict[str, str] = {"bot-token": bot, ACTIONS_TOKEN: "github-actions[bot]"}
        # A classic token's scopes (its X-OAuth-Scopes header); a token not here sends none, as a
        # fine-grained one does.
        self.scopes: dict[str, str] = {"bot-token": "public_repo"}
        # Tokens that may read but not write (an Actions token without `issues: write`).
        self.read_only: set[str] = set()
        self.permissions: dict[str, str] = {bot: "write"}
        self.repos: dict[str, RepoState] = {repo: RepoState()}
        self.faults: list[Fault] = []
        self.max_per_page = 100
        self.lag_after_create = 0  # 404s served for an issue right after it is created
        self.clock: Callable[[], float] = lambda: 1_700_000_000.0
        self.search_limit = 30  # search requests a minute, per token
        self.max_query = 256  # characters of a search query
        self.searches: list[str] = []  # every query searched, in order
        self._search_window: dict[str, tuple[float, int]] = {}  # token -> (minute's start, used)
        self.requests: list[tuple[str, str]] = []
        self.writes: list[tuple[str, str]] = []  # mutations actually applied
        self._lagging: dict[tuple[str, int], int] = {}
        self._next_id = 1000
        self._remaining = 5000
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # ----- life cycle -----
    def start(self) -> str:
        fake = self

        class Handler(_Handler):
            github = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self.base_url

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # ----- helpers for tests -----
    def inject(self, method: str, path: str, kind: str, **options: Any) -> Fault:
        fault = Fault(method, path, kind, **options)
        self.faults.append(fault)
        return fault

    def user_json(self, login: str) -> dict[str, Any]:
        user = template("user")
        user.update(
            login=login,
            type="Bot" if login.endswith("[bot]") else "User",
            url=f"{self.base_url}/users/{login}",
        )
        return user

    def add_issue(
        self, repo: str, title: str, body: str, author: str, *, state: str = "open"
    ) -> dict[str, Any]:
        with self._lock:
            issue = self._create_issue(repo, {"title": title, "body": body}, author, state=state)
            if state == "closed":
                issue["closed_by"] = self.user_json(author)
            return issue

    def add_comment(
        self, repo: str, number: int, body: str, author: str, association: str = "NONE"
    ) -> dict[str, Any]:
        """A person comments; `association` is what GitHub says of them (`author_association`:
        OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...)."""
        with self._lock:
            return self._create_comment(repo, number, body, author, association)

    def edit_comment(self, repo: str, comment_id: int, body: str) -> dict[str, Any]:
        """A person edits their comment: new body, `updated_at` later than `created_at`."""
        with self._lock:
            comment = self.repos[repo].comments[comment_id]
            comment.update(body=body, updated_at=self.timestamp(60))
            return comment

    def delete_comment(self, repo: str, comment_id: int) -> None:
        """A person deletes their comment: gone from every listing, its reactions with it."""
        with self._lock:
            del self.repos[repo].comments[comment_id]
            self.repos[repo].reactions.pop(comment_id, None)

    def edit_issue(self, repo: str, number: int, author: str, **fields: Any) -> dict[str, Any]:
        """What a person does in the web page: edit, close or reopen an issue as `author`."""
        with self._lock:
            status, _, answer = self._patch_issue(repo, self.repos[repo], author, {}, fields, number)
        assert status == 200, answer
        return answer

    def lock_issue(self, repo: str, number: int, reason: str = "resolved") -> None:
        """A maintainer locks the conversation: only accounts with push access may comment."""
        with self._lock:
            self.repos[repo].issues[number].update(locked=True, active_lock_reason=reason)

    def may(self, login: str, level: str) -> bool:
        """Whether `login` has at least `level` on the repositories (see `permissions`)."""
        return LEVELS.index(self.permissions.get(login, "read")) >= LEVELS.index(level)

    def issues(self, repo: str = "pytorch/pytorch") -> list[dict[str, Any]]:
        return sorted(self.repos[repo].issues.values(), key=lambda i: i["number"])

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        return [c for c in self.repos[repo].comments.values() if c["_issue"] == number]

    def reactions(self, repo: str, comment_id: int) -> list[str]:
        return [r["content"] for r in self.repos[repo].reactions.get(comment_id, [])]

    # ----- state changes -----
    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _label(self, repo: str, name: str, color: str = "ededed") -> dict[str, Any]:
        state = self.repos[repo]
        if name not in state.labels:
            label = template("label")
            label.update(
                name=name, color=color, description=None, url=f"{self.base_url}/repos/{repo}/labels/{name}"
            )
            state.labels[name] = label
        return state.labels[name]

    def _create_issue(
        self, repo: str, data: dict[str, Any], author: str, *, state: str = "open"
    ) -> dict[str, Any]:
        issues = self.repos[repo].issues
        number = max(issues, default=0) + 1
        issue = template("issue")
        issue.update(
            number=number,
            id=self._id(),
            title=data["title"],
            body=data.get("body"),
            state=state,
            state_reason=None,
            labels=[self._label(repo, name) for name in data.get("labels", [])],
            user=self.user_json(author),
            url=f"{self.base_url}/repos/{repo}/issues/{number}",
            html_url=f"https://github.com/{repo}/issues/{number}",
            comments=0,
            locked=False,
            active_lock_reason=None,
        )
        issues[number] = issue
        if self.lag_after_create:
            self._lagging[(repo, number)] = self.lag_after_create
        return issue

    def http_date(self, later: float = 0) -> str:
        """The fake clock (plus `later` seconds) as an HTTP date, e.g. for `Retry-After`."""
        return format_datetime(datetime.fromtimestamp(self.clock() + later, UTC), usegmt=True)

    def timestamp(self, later: float = 0) -> str:
        """The fake clock (plus `later` seconds) as GitHub writes times."""
        return datetime.fromtimestamp(self.clock() + later, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _create_comment(
        self, repo: str, number: int, body: str, author: str, association: str = "NONE"
    ) -> dict[str, Any]:
        comment = template("comment")
        comment_id = self._id()
        comment.update(
            id=comment_id,
            body=body,
            author_association=association,
            created_at=self.timestamp(),
            updated_at=self.timestamp(),
            user=self.user_json(author),
            url=f"{self.base_url}/repos/{repo}/issues/comments/{comment_id}",
            html_url=f"https://github.com/{repo}/issues/{number}#issuecomment-{comment_id}",
            issue_url=f"{self.base_url}/repos/{repo}/issues/{number}",
        )
        comment["_issue"] = number
        self.repos[repo].comments[comment_id] = comment
        self.repos[repo].issues[number]["comments"] += 1
        return comment

    # ----- request handling -----
    def handle(
        self, method: str, target: str, token: str | None, body: Any
    ) -> tuple[int, dict[str, str], Any]:
        """Answer one request: (status, headers, JSON body); status 0 means drop the connection,
        -1 means apply the request and then drop the connection."""
        path = urlsplit(target).path
        with self._lock:
            self.requests.append((method, path))
            fault = next(
                (f for f in self.faults if f.times > 0 and f.method == method and re.search(f.path, path)),
                None,
            )
            if fault is not None:
                fault.times -= 1
                if fault.kind not in ("drop_after", "slow"):
                    return self._fault_answer(fault)
        if fault is not None and fault.kind == "slow":  # outside the lock: others go on meanwhile
            time.sleep(fault.seconds)
        with self._lock:
            login = self.tokens.get(token or "")
            if login is None:
                return 401, {}, {"message": "Bad credentials"}
            if method != "GET" and token in self.read_only:
                return 403, {}, dict(NOT_ACCESSIBLE)
            status, headers, answer = self._route(method, target, login, token, body)
            if method != "GET" and 200 <= status < 300:
                self.writes.append((method, path))
            if fault is not None and fault.kind == "drop_after":  # applied, but the answer is lost
                return -1, {}, None
            return status, headers, answer

    def _fault_answer(self, fault: Fault) -> tuple[int, dict[str, str], Any]:
        if fault.kind == "error":
            return fault.status, {}, {"message": "Server Error"}
        if fault.kind == "secondary":
            message = (
                "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
            )
            return 403, {"Retry-After": str(fault.retry_after)}, {"message": message}
        if fault.kind == "primary":
            reset = int(self.clock()) + fault.reset_in
            headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)}
            return 403, headers, {"message": "API rate limit exceeded for user ID 1."}
        if fault.kind == "drop":
            return 0, {}, None
        raise ValueError(f"unknown fault {fault.kind}")

    def _route(
        self, method: str, target: str, login: str, token: str | None, body: Any
    ) -> tuple[int, dict[str, str], Any]:
        split = urlsplit(target)
        path = unquote(split.path)
        query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        if path == "/user" and method == "GET":
            if token == ACTIONS_TOKEN:
                return 403, {}, {"message": "Resource not accessible by integration"}
            scopes = {"X-OAuth-Scopes": self.scopes[token]} if token in self.scopes else {}
            return 200, scopes, self.user_json(login)
        if path == "/rate_limit":
            return 200, {}, template("rate_limit")
        if path == "/search/issues" and method == "GET":
            return self._search(token or "", query)
        match = re.match(r"^/repos/([^/]+/[^/]+)(/.*)?$", path)
        if not match or match.group(1) not in self.repos:
            return 404, {}, {"message": "Not Found"}
        repo, rest = match.group(1), match.group(2) or ""
        state = self.repos[repo]
        number_match = re.match(r"^/issues/(\d+)", rest)
        if number_match:
            key = (repo, int(number_match.group(1)))
            if self._lagging.get(key, 0) > 0:
                self._lagging[key] -= 1
                return 404, {}, {"message": "Not Found"}
        routes: list[tuple[str, str, Callable[..., tuple[int, dict[str, str], Any]]]] = [
            ("GET", r"^$", self._get_repo),
            ("GET", r"^/actions/workflows$", self._list_workflows),
            ("GET", r"^/actions/secrets$", self._list_secrets),
            ("GET", r"^/actions/variables$", self._list_variables),
            ("GET", r"^/actions/runners$", self._list_runners),
            ("GET", r"^/branches/(.+)$", self._get_branch),
            ("GET", r"^/pages$", self._get_pages),
            ("GET", r"^/issues$", self._list_issues),
            ("POST", r"^/issues$", self._post_issue),
            ("GET", r"^/issues/(\d+)$", self._get_issue),
            ("PATCH", r"^/issues/(\d+)$", self._patch_issue),
            ("POST", r"^/issues/(\d+)/labels$", self._add_labels),
            ("GET", r"^/issues/(\d+)/comments$", self._list_comments),
            ("POST", r"^/issues/(\d+)/comments$", self._post_comment),
            ("GET", r"^/issues/comments/(\d+)$", self._get_comment),
            ("GET", r"^/issues/comments/(\d+)/reactions$", self._list_reactions),
            ("POST", r"^/issues/comments/(\d+)/reactions$", self._post_reaction),
            ("GET", r"^/labels$", self._list_labels),
            ("POST", r"^/labels$", self._post_label),
            ("GET", r"^/labels/(.+)$", self._get_label),
            ("GET", r"^/collaborators/([^/]+)/permission$", self._permission),
        ]
        for route_method, pattern, function in routes:
            found = re.match(pattern, rest)
            if found and route_method == method:
                return function(repo, state, login, query, body, *found.groups())
        return 404, {}, {"message": "Not Found"}

    # ----- the issue search -----
    def _search(self, token: str, query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        start, used = self._search_window.get(token, (self.clock(), 0))
        if self.clock() >= start + 60:
            start, used = self.clock(), 0
        reset = str(int(start + 60))
        limit = {"X-RateLimit-Limit": str(self.search_limit), "X-RateLimit-Reset": reset}
        limit["X-RateLimit-Resource"] = "search"
        if used >= self.search_limit:
            message = "API rate limit exceeded for user ID 1."
            docs = "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"
            return (
                403,
                {**limit, "X-RateLimit-Remaining": "0"},
                {"message": message, "documentation_url": docs},
            )
        self._search_window[token] = (start, used + 1)
        limit["X-RateLimit-Remaining"] = str(self.search_limit - used - 1)
        text = query.get("q", "")
        if len(text) > self.max_query:
            error = {
                "message": f"The search is longer than {self.max_query} characters.",
                "resource": "Search",
                "field": "q",
                "code": "invalid",
            }
            docs = "https://docs.github.com/v3/search/"
            return 422, limit, {"message": "Validation Failed", "errors": [error], "documentation_url": docs}
        self.searches.append(text)
        found = self._matching(text)
        status, headers, items = self._page(found, query, "/search/issues")
        return (
            status,
            {**headers, **limit},
            {"total_count": len(found), "incomplete_results": False, "items": items},
        )

    def _matching(self, text: str) -> list[dict[str, Any]]:
        """The issues `text` (a search query) finds, best first, as the search API lists them."""
        qualifiers = dict(re.findall(r"\b(repo|is|state):(\S+)", text))
        rest = re.sub(r"\b(?:repo|is|state):\S+", " ", text)
        terms = [a or b for a, b in re.findall(r'"([^"]*)"|(\S+)', rest) if (a or b).strip()]
        repos = [qualifiers["repo"]] if "repo" in qualifiers else list(self.repos)
        found = []
        for repo in repos:
            for issue in self.repos.get(repo, RepoState()).issues.values():
                kind = "pr" if issue.get("pull_request") else "issue"
                if (
                    qualifiers.get("is", kind) != kind
                    or qualifiers.get("state", issue["state"]) != issue["state"]
                ):
                    continue
                haystack = f"{issue['title']}\n{issue.get('body') or ''}".lower()
                if all(term.lower() in haystack for term in terms):
                    score = sum(haystack.count(term.lower()) for term in terms)
                    found.append((score, issue))
        found.sort(key=lambda pair: (-pair[0], -pair[1]["number"]))
        items = []
        for score, issue in found:
            item = template("search_item")
            item.update({key: issue[key] for key in item if key in issue and key != "score"})
            item.update(score=float(score), body=issue.get("body"))
            items.append(item)
        return items

    def _page(self, items: list[Any], query: dict[str, str], path: str) -> tuple[int, dict[str, str], Any]:
        per_page = min(int(query.get("per_page", 30)), 100, self.max_per_page)
        page = int(query.get("page", 1))
        last = max(1, -(-len(items) // per_page))
        headers = {}
        links = []
        for rel, number in (("next", page + 1), ("last", last)):
            if page < last:
                links.append(f'<{self.base_url}{path}?{urlencode({**query, "page": number})}>; rel="{rel}"')
        if links:
            headers["Link"] = ", ".join(links)
        return 200, headers, items[(page - 1) * per_page : page * per_page]

    @staticmethod
    def _public(item: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in item.items() if not k.startswith("_")}

    def _list_issues(self, repo, state, login, query, body):
        wanted_state = query.get("state", "open")
        issues = sorted(
            state.issues.values(), key=lambda i: i["number"], reverse=query.get("direction") != "asc"
        )
        if wanted_state != "all":
            issues = [i for i in issues if i["state"] == wanted_state]
        if "creator" in query:
            issues = [i for i in issues if i["user"]["login"].lower() == query["creator"].lower()]
        if "labels" in query:
            wanted = set(query["labels"].split(","))
            issues = [i for i in issues if wanted <= {label["name"] for label in i["labels"]}]
        # As recorded: a listing leaves out `closed_by`; only the issue itself carries it.
        listed = [{k: v for k, v in issue.items() if k != "closed_by"} for issue in issues]
        return self._page(listed, query, f"/repos/{repo}/issues")

    def _post_issue(self, repo, state, login, query, body):
        refused = issue_limits(body, creating=True)
        if refused:
            return refused
        if not self.may(login, "write"):  # "Labels are silently dropped otherwise."
            body = {key: value for key, value in body.items() if key != "labels"}
        issue = self._create_issue(repo, body, login)
        return 201, {"Location": issue["url"]}, issue

    def _issue(self, state, number):
        return state.issues.get(int(number))

    def _get_issue(self, repo, state, login, query, body, number):
        issue = self._issue(state, number)
        return (200, {}, issue) if issue else (404, {}, {"message": "Not Found"})

    def _patch_issue(self, repo, state, login, query, body, number):
        issue = self._issue(state, number)
        if issue is None:
            return 404, {}, {"message": "Not Found"}
        refused = issue_limits(body, creating=False)
        if refused:
            return refused
        if "state" in body and body["state"] != issue["state"]:
            closing = body["state"] == "closed"
            issue["closed_by"] = self.user_json(login) if closing else None
            issue["closed_at"] = "2026-04-10T00:00:00Z" if closing else None
        for key in ("title", "body", "state", "state_reason"):
            if key in body:
                issue[key] = body[key]
        if "labels" in body:
            issue["labels"] = [self._label(repo, name) for name in body["labels"]]
        return 200, {}, issue

    def _add_labels(self, repo, state, login, query, body, number):
        issue = self._issue(state, number)
        if issue is None:
            return 404, {}, {"message": "Not Found"}
        if not self.may(login, "triage"):
            return 403, {}, dict(NOT_ACCESSIBLE)
        names = body.get("labels", body) if isinstance(body, dict) else body
        for name in names:
            if name not in {label["name"] for label in issue["labels"]}:
                issue["labels"].append(self._label(repo, name))
        return 200, {}, issue["labels"]

    def _list_comments(self, repo, state, login, query, body, number):
        if self._issue(state, number) is None:
            return 404, {}, {"message": "Not Found"}
        comments = [self._public(c) for c in state.comments.values() if c["_issue"] == int(number)]
        return self._page(comments, query, f"/repos/{repo}/issues/{number}/comments")

    def _post_comment(self, repo, state, login, query, body, number):
        issue = self._issue(state, number)
        if issue is None:
            return 404, {}, {"message": "Not Found"}
        if issue.get("locked") and not self.may(login, "write"):
            return 403, {}, dict(LOCKED)
        refused = comment_limits(body)
        if refused:
            return refused
        comment = self._create_comment(repo, int(number), body["body"], login)
        return 201, {"Location": comment["url"]}, self._public(comment)

    def _get_comment(self, repo, state, login, query, body, comment_id):
        comment = state.comments.get(int(comment_id))
        return (200, {}, self._public(comment)) if comment else (404, {}, {"message": "Not Found"})

    def _list_reactions(self, repo, state, login, query, body, comment_id):
        if int(comment_id) not in state.comments:
            return 404, {}, {"message": "Not Found"}
        return self._page(
            state.reactions.get(int(comment_id), []),
            query,
            f"/repos/{repo}/issues/comments/{comment_id}/reactions",
        )

    def _post_reaction(self, repo, state, login, query, body, comment_id):
        if int(comment_id) not in state.comments:
            return 404, {}, {"message": "Not Found"}
        reactions = state.reactions.setdefault(int(comment_id), [])
        for reaction in reactions:
            if reaction["content"] == body["content"] and reaction["user"]["login"] == login:
                return 200, {}, reaction  # GitHub answers an existing reaction with 200
        reaction = template("reaction")
        reaction.update(
            id=self._id(), content=body["content"], user=self.user_json(login), created_at=self.timestamp()
        )
        reactions.append(reaction)
        return 201, {}, reaction

    def _list_labels(self, repo, state, login, query, body):
        return self._page(list(state.labels.values()), query, f"/repos/{repo}/labels")

    def _post_label(self, repo, state, login, query, body):
        if not self.may(login, "write"):
            return 403, {}, dict(NOT_ACCESSIBLE)
        if body["name"] in state.labels:
            return (
                422,
                {},
                {"message": "Validation Failed", "errors": [{"resource": "Label", "code": "already_exists"}]},
            )
        return 201, {}, self._label(repo, body["name"], body.get("color", "ededed"))

    def _get_label(self, repo, state, login, query, body, name):
        label = state.labels.get(name)
        return (200, {}, label) if label else (404, {}, {"message": "Not Found"})

    def _permission(self, repo, state, login, query, body, user):
        if not self.may(login, "write"):
            return 403, {}, template("no_push_access")
        answer = template("permission")
        level = self.permissions.get(user, "read")
        answer["permission"] = "write" if level == "maintain" else level
        answer["role_name"] = level
        answer["user"] = self.user_json(user)
        return 200, {}, answer

    # ----- what a deployment sets (read by `triagebot doctor`) -----
    def _get_repo(self, repo, state, login, query, body):
        answer = template("repository")
        owner = repo.split("/")[0]
        level = LEVELS.index(self.permissions.get(login, "read"))
        answer.update(
            full_name=repo,
            name=repo.split("/")[1],
            fork=state.fork,
            private=state.private,
            owner={**answer["owner"], "login": owner, "type": state.owner_type},
            permissions={name: level >= LEVELS.index(name) for name in ("admin", "maintain", "triage")}
            | {"push": level >= LEVELS.index("write"), "pull": True},
            url=f"{self.base_url}/repos/{repo}",
        )
        return 200, {}, answer

    def _list_workflows(self, repo, state, login, query, body):
        workflows = []
        for number, (name, workflow_state) in enumerate(sorted(state.workflows.items()), start=1):
            workflow = template("workflow")
            workflow.update(id=number, name=name, path=f".github/workflows/{name}", state=workflow_state)
            workflows.append(workflow)
        return 200, {}, {"total_count": len(workflows), "workflows": workflows}

    def _admin_only(self, login):
        """GitHub answers 403 to a token whose account is not an admin of the repository."""
        return None if self.may(login, "admin") else (403, {}, dict(NOT_ACCESSIBLE))

    def _list_secrets(self, repo, state, login, query, body):
        refused = self._admin_only(login)
        secrets = [{"name": name, "created_at": self.timestamp()} for name in sorted(state.secrets)]
        return refused or (200, {}, {"total_count": len(secrets), "secrets": secrets})

    def _list_variables(self, repo, state, login, query, body):
        refused = self._admin_only(login)
        variables = [{"name": name, "value": value} for name, value in sorted(state.variables.items())]
        return refused or (200, {}, {"total_count": len(variables), "variables": variables})

    def _list_runners(self, repo, state, login, query, body):
        refused = self._admin_only(login)
        runners = [
            {"id": number, "name": name, "os": "linux", "status": status, "busy": False,
             "labels": [{"id": index, "name": label, "type": "custom"} for index, label in enumerate(labels)]}
            for number, (name, status, labels) in enumerate(state.runners, start=1)
        ]  # fmt: skip
        return refused or (200, {}, {"total_count": len(runners), "runners": runners})

    def _get_branch(self, repo, state, login, query, body, name):
        if name not in state.branches:
            return 404, {}, {"message": "Branch not found"}
        answer = template("branch")
        answer.update(name=name, protected=state.branches[name])
        return 200, {}, answer

    def _get_pages(self, repo, state, login, query, body):
        if state.pages is None:
            return 404, {}, {"message": "Not Found"}
        owner, name = repo.split("/")
        source = {"branch": state.pages_branch, "path": "/"}
        answer = {
            "url": f"{self.base_url}/repos/{repo}/pages",
            "status": "built",
            "build_type": state.pages,
            "source": source,
            "html_url": f"https://{owner}.github.io/{name}/",
            "public": True,
        }
        return 200, {}, answer


class _Handler(BaseHTTPRequestHandler):
    github: FakeGitHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        authorization = self.headers.get("Authorization", "")
        token = authorization.split(" ", 1)[1] if " " in authorization else None
        status, headers, answer = self.github.handle(self.command, self.path, token, body)
        if status <= 0:  # drop the connection without an answer
            self.close_connection = True
            return
        payload = json.dumps(answer).encode()
        self.send_response(status)
        fake = self.github
        with fake._lock:
            fake._remaining = max(fake._remaining - 1, 1)
            remaining = fake._remaining
        rate = {
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": str(remaining),
            "X-RateLimit-Reset": str(int(fake.clock()) + 3600),
            "X-RateLimit-Used": str(5000 - remaining),
            "X-RateLimit-Resource": "core",
        }
        for key, value in {**rate, **headers}.items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve
