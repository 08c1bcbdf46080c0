"""Real GitHub answers, recorded by PyGithub's test suite, used as the fake's response templates.

The files the tests use are kept in tests/data/github/ (see its README for where they come
from): each API file is a sequence of records of ten lines (scheme, method, host, port, path,
request headers, request body, status, response headers, response body) separated by a blank
line.
"""

from __future__ import annotations

import ast
import copy
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "github"
API_FIXTURES = FIXTURES / "api"
WEBHOOK_FIXTURES = FIXTURES / "webhooks"


@dataclass
class Exchange:
    method: str
    path: str
    status: int
    headers: dict[str, str]
    body: Any


def read_exchanges(path: Path) -> list[Exchange]:
    lines = path.read_text(encoding="utf-8").split("\n")
    exchanges = []
    index = 0
    while index + 9 < len(lines):
        if not lines[index].strip():
            index += 1
            continue
        record = lines[index : index + 10]
        body = record[9].strip()
        exchanges.append(
            Exchange(
                method=record[1],
                path=record[4],
                status=int(record[7]),
                headers={k.lower(): v for k, v in ast.literal_eval(record[8])},
                body=json.loads(body) if body else None,
            )
        )
        index += 10
    return exchanges


def _body(file: str, method: str, path_start: str) -> Any:
    for exchange in read_exchanges(API_FIXTURES / file):
        if exchange.method == method and exchange.path.startswith(path_start):
            return exchange.body
    raise LookupError(f"{file}: no {method} {path_start}")


@cache
def _templates() -> dict[str, Any]:
    issue = _body("Repository.testCreateIssue.txt", "POST", "/repos/")
    # Recorded in 2012, when every issue carried an empty pull_request object; today the key is
    # present only on pull requests, and clients (this bot included) rely on that.
    issue.pop("pull_request", None)
    return {
        "issue": issue,
        "comment": _body("Issue.testCreateComment.txt", "POST", "/repos/"),
        "reaction": _body("Issue.testCreateReaction.txt", "POST", "/repos/"),
        "label": _body("Repository.testCreateLabel.txt", "POST", "/repos/"),
        "permission": _body("Repository.testCollaboratorPermission.txt", "GET", "/repos/"),
        "no_push_access": _body("Repository.testCollaboratorPermissionNoPushAccess.txt", "GET", "/repos/"),
        "user": _body("RateLimiting.testRateLimiting.txt", "GET", "/users/"),
        "rate_limit": _body("RateLimiting.testRateLimiting.txt", "GET", "/rate_limit"),
        "repository": _body("Workflow.testCreateDispatchWithBranch.txt", "GET", "/repos/wrecker/PyGithub"),
        "workflow": _body(
            "Workflow.testCreateDispatchWithBranch.txt", "GET", "/repos/wrecker/PyGithub/actions/"
        ),
        "branch": _body(
            "Workflow.testCreateDispatchWithBranch.txt", "GET", "/repos/wrecker/PyGithub/branches/"
        ),
        # One issue as the search API lists it (with its `score`); a pull request in the recording.
        "search_item": _search_item(),
    }


def _search_item() -> Any:
    item = _body("Search.testSearchIssues.txt", "GET", "/search/issues")["items"][0]
    item.pop("pull_request", None)
    return item


def template(name: str) -> Any:
    """A fresh copy of the recorded JSON body called `name`."""
    return copy.deepcopy(_templates()[name])
