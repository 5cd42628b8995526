#!/usr/bin/env python3
"""`forgeloop serve`, the remote connector (design §8.1), driven by a real MCP client this
project did not write: the official Python SDK's Streamable HTTP client with its OAuth client
provider, against the GitHub emulator. The person's part is played as the person would: the
pairing code is read off `serve`'s first line and typed into the authorization page, the brief
is confirmed in the control room (`forgeloop tui` in tmux).

Run from the repository root after `cargo build`:

    python3 tests/mcp/connector_test.py [--bin target/debug/forgeloop]

It installs what it needs itself, as tests/mcp/client_test.py does (the pinned SDK in a virtual
environment in target/mcp-venv), and exits 0 when every check passed.

What it checks:
  1. the SDK's discovery, dynamic registration, the pairing and consent pages, the token
     exchange, then a whole cycle: start_cycle → the person confirms in the control room →
     test_pr fails → a fix is pushed → test_pr passes → READY_TO_MERGE; and the cap, on a
     second cycle whose sixth test_pr is blocked without GitHub being asked until the person
     raises it on their terminal;
  2. the refusals: no token, an expired, revoked or wrong-audience token, a wrong pairing
     code and the growing wait before the next try, a foreign Origin, a wrong Host, oversized bodies,
     another grant's cycle, an unbound repository, a PR of another repository, arguments
     that try to pass commands or paths, a reused refresh token, the request budget, a
     non-loopback address without the person;
  3. a batch of requests without a valid grant, wrong pairing codes included, changes no
     file (home, serving.json included, and registry are byte-identical before and after).
"""

import argparse
import base64
import hashlib
import html
import json
import logging
import os
import pathlib
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

# The emulator world and the small helpers are client_test's: the same repository with a
# failing test, the same fix.
from client_test import (  # noqa: E402
    CALC_BUGGY, CALC_FIXED, HANG_GUARD, ControlRoom, Emulator, ensure_sdk, forgeloop_env, fresh_token, is_error,
    structured, wait_for,
)

CLIENT_NAME = "connector-test"
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never contacted: the test reads the redirect itself
TOOLS = ["cycle_status", "get_diff", "get_handoff", "get_review", "list_repositories", "start_cycle", "test_pr", "wait"]
FIRST_TRY = "echo $(($1 - $2)) # first try\n"
FIVE = {"goal": "make calc.sh add", "success": "sh test.sh passes", "scope": "calc.sh only",
        "constraints": "no new files", "validation": "the project's test.sh"}


# ---------------------------------------------------------------------------------------------
# HTTP as a browser and as a hostile caller: urllib, redirects not followed, errors returned.

class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def http(method, url, body=None, headers=None):
    """(status, headers, body) of one request; 4xx/5xx and 3xx are answers, not exceptions."""
    request = urllib.request.Request(url, data=body, method=method, headers=dict(headers or {}))
    try:
        with _OPENER.open(request, timeout=HANG_GUARD) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def form(fields):
    return urllib.parse.urlencode(fields).encode(), {"Content-Type": "application/x-www-form-urlencoded"}


def post_form(url, fields):
    body, headers = form(fields)
    return http("POST", url, body, headers)


def hidden_fields(page):
    text = page.decode()
    return {html.unescape(name): html.unescape(value)
            for name, value in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', text)}


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def mcp_post(mcp_url, message, token=None, headers=None):
    """One raw JSON-RPC POST to /mcp."""
    all_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        all_headers["Authorization"] = f"Bearer {token}"
    all_headers.update(headers or {})
    return http("POST", mcp_url, json.dumps(message).encode(), all_headers)


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


def assert_challenge(answer, server, why=None):
    status, headers, body = answer
    assert status == 401, (status, body)
    challenge = headers.get("WWW-Authenticate", "")
    assert f'resource_metadata="{server.url}/.well-known/oauth-protected-resource"' in challenge, challenge
    if why is not None:
        assert 'error="invalid_token"' in challenge and why in challenge, challenge


# ---------------------------------------------------------------------------------------------
# The world: `forgeloop serve`, the person's pairing, the control room.

class Serve:
    """`forgeloop serve --listen 127.0.0.1:0`; its first stdout line read as the person reads it."""

    def __init__(self, binary, env, cwd, log, listen="127.0.0.1:0"):
        self.env = env
        self.binary = binary
        self.cwd = cwd
        self.home = pathlib.Path(env["FORGELOOP_HOME"])
        self.log = open(log, "wb")
        self.proc = subprocess.Popen([binary, "serve", "--listen", listen], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=self.log, env=env, cwd=cwd)
        first = []
        reader = threading.Thread(target=lambda: first.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(HANG_GUARD)
        assert first and first[0], f"serve printed nothing: {pathlib.Path(log).read_text()}"
        line = json.loads(first[0])
        assert line["status"] == "SERVING", line
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", line["url"]), line
        assert line["mcp_url"] == line["url"] + "/mcp", line
        assert re.fullmatch(r"[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}", line["pairing_code"]), line
        self.url = line["url"]
        self.mcp_url = line["mcp_url"]
        self.first_code = line["pairing_code"]

    def serving(self):
        try:
            return json.loads((self.home / "connector" / "serving.json").read_text())
        except (OSError, ValueError):
            return None

    def code_other_than(self, used):
        """The pairing code in force once `serve` has replaced `used` (at once when a code is
        spent or void; an expired one at the next 5 s tick)."""
        return wait_for(lambda: (s := self.serving()) and s.get("pairing_code") not in (None, used)
                        and s["pairing_code"], f"a pairing code other than {used}")

    def cli(self, *args):
        # Never on a terminal: what asks the person must be refused here, not asked.
        done = subprocess.run([self.binary, *args], env=self.env, cwd=self.cwd, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=HANG_GUARD)
        return done.returncode, json.loads(done.stdout) if done.stdout.strip() else None

    def grants_file(self):
        return self.home / "connector" / "grants.json"

    def stop(self):
        self.proc.terminate()
        try:
            code = self.proc.wait(timeout=HANG_GUARD)
        finally:
            self.log.close()
        assert code == 0, f"serve exited {code} on SIGTERM"
        assert not (self.home / "connector" / "serving.json").exists(), "a stopped serve leaves no serving.json"


def browser_pairs(server, authorization_url, code):
    """The person in the browser: the pairing page, the code, the consent page, Allow. Returns
    the redirect's query (code, state), which a real browser would deliver to the client."""
    status, _, page = http("GET", authorization_url)
    assert status == 200, (status, page)
    assert b"pairing code" in page and CLIENT_NAME.encode() in page, page
    fields = hidden_fields(page)
    assert fields.get("code_challenge_method") == "S256" and fields.get("client_id"), fields
    fields["pairing_code"] = code.lower().replace("-", " ")  # typed loosely, as people do
    status, _, consent = post_form(f"{server.url}/authorize", fields)
    assert status == 200, (status, consent)
    for promise in (b"start cycles", b"acme/widget", b"will <strong>not</strong> be able to run commands"):
        assert promise in consent, (promise, consent)
    ticket = hidden_fields(consent)["ticket"]
    status, headers, body = post_form(f"{server.url}/authorize/consent", {"ticket": ticket, "decision": "allow"})
    assert status == 302, (status, body)
    location = headers["Location"]
    assert location.startswith(REDIRECT_URI + "?"), location
    query = urllib.parse.parse_qs(urllib.parse.urlparse(location).query)
    # The ticket is used once.
    again = post_form(f"{server.url}/authorize/consent", {"ticket": ticket, "decision": "allow"})
    assert again[0] == 400 and b"already answered" in again[2], again
    return query["code"][0], query["state"][0]


def register(server, name):
    status, _, body = http("POST", f"{server.url}/register", json.dumps(
        {"client_name": name, "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}).encode(),
        {"Content-Type": "application/json"})
    assert status == 201, (status, body)
    return json.loads(body)["client_id"]


def authorize(server, client_id, code, decision, state="s"):
    """The pages by hand, as a browser: returns (the redirect's query, the PKCE verifier)."""
    verifier, challenge = pkce()
    query = urllib.parse.urlencode({"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI,
                                    "code_challenge": challenge, "code_challenge_method": "S256", "state": state,
                                    "resource": server.mcp_url})
    status, _, page = http("GET", f"{server.url}/authorize?{query}")
    assert status == 200, (status, page)
    status, _, consent = post_form(f"{server.url}/authorize", dict(hidden_fields(page), pairing_code=code))
    assert status == 200, (status, consent)
    status, headers, _ = post_form(f"{server.url}/authorize/consent",
                                   {"ticket": hidden_fields(consent)["ticket"], "decision": decision})
    assert status == 302, status
    answer = urllib.parse.parse_qs(urllib.parse.urlparse(headers["Location"]).query)
    assert answer["state"] == [state], answer
    return answer, verifier


def redeem(server, client_id, code, verifier):
    return post_form(f"{server.url}/token", {
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI, "client_id": client_id,
        "code_verifier": verifier, "resource": server.mcp_url})


def second_grant(server):
    """A second client, authorized by hand the way the SDK does it. Returns (client id, tokens,
    the pairing code it spent)."""
    client_id = register(server, "second-client")
    code = server.serving()["pairing_code"]
    # Deny: the client hears access_denied, and the code is not spent (nothing was granted).
    denied, _ = authorize(server, client_id, code, "deny")
    assert denied["error"] == ["access_denied"] and "code" not in denied, denied
    # Allow, then a wrong verifier: refused, and the code is gone with it.
    allowed, verifier = authorize(server, client_id, code, "allow")
    status, _, body = redeem(server, client_id, allowed["code"][0], pkce()[0])
    assert status == 400 and json.loads(body)["error"] == "invalid_grant", body
    status, _, body = redeem(server, client_id, allowed["code"][0], verifier)
    assert status == 400 and json.loads(body)["error"] == "invalid_grant", body
    # The pairing code was spent on that grant: the next one is another.
    code = server.code_other_than(code)
    allowed, verifier = authorize(server, client_id, code, "allow")
    status, _, body = redeem(server, client_id, allowed["code"][0], verifier)
    assert status == 200, body
    tokens = json.loads(body)
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 900, tokens
    status, _, body = redeem(server, client_id, allowed["code"][0], verifier)
    assert status == 400, "a code is redeemed once"
    return client_id, tokens, code


def person_on_a_terminal(binary, env, cwd, *args):
    """The person's own command on a pseudo-terminal, answering its [y/N] with y: what no tool
    of the connector can do (confirm a brief, raise a cap)."""
    import pty
    import select
    master, slave = pty.openpty()
    proc = subprocess.Popen([binary, *args], stdin=slave, stdout=subprocess.PIPE, stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + HANG_GUARD
    while b"[y/N]" not in seen:
        assert time.monotonic() < deadline, f"{args} never asked: {seen!r}"
        if select.select([master], [], [], 0.1)[0]:
            seen += os.read(master, 4096)
    os.write(master, b"y\n")
    out, _ = proc.communicate(timeout=HANG_GUARD)
    os.close(master)
    assert proc.returncode == 0, (args, seen, out)
    return json.loads(out)


def person_confirms_in_the_control_room(binary, env, cwd, cycle, server):
    tui = ControlRoom(binary, env, cwd)
    try:
        tui.wait_for("CONFIRM BRIEF")
        # The cycle the client started, with its repository and who asked (the detail pane may
        # draw a frame after the list: wait for it rather than read the first screen).
        screen = tui.wait_for(f"asked by {CLIENT_NAME} through forgeloop serve")
        for seen in (cycle, "acme/widget", f"asked by {CLIENT_NAME} through forgeloop serve"):
            assert seen in screen, (seen, screen)
        tui.keys("c")
        dialog = tui.wait_for("Confirm the delegation brief")
        assert "make calc.sh add" in dialog, dialog
        assert "Confirming lets" in dialog and "coordinator" not in dialog, dialog
        tui.keys("y")
        tui.wait_for("AWAIT PR")
        # The Connector screen: serve runs, the next pairing code, the client and its calls.
        tui.keys("S")
        tui.wait_for(server.serving()["pairing_code"])
        screen = tui.wait_for("start_cycle ok")
        assert CLIENT_NAME in screen, screen
        # The request line of a tool call says less than the tool's own line: not shown.
        assert "tools/call" not in screen, screen
        tui.keys("q")
        tui.wait_for("EXIT=0")
    finally:
        tui.stop()


# ---------------------------------------------------------------------------------------------
# "A request without a valid grant changes no file."

def snapshot(*roots):
    files = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames:
                files[os.path.join(dirpath, name)] = "dir"
            for name in filenames:
                path = os.path.join(dirpath, name)
                files[path] = os.readlink(path) if os.path.islink(path) else pathlib.Path(path).read_bytes()
    return files


def requests_without_a_grant(server, bad_tokens):
    """register, the pages with a wrong code, a token request with a bad code, /mcp without or
    with a bad token: each answered with a refusal (or, for register, a client kept in memory)."""
    status, _, body = http("POST", f"{server.url}/register", json.dumps(
        {"client_name": "drive-by", "redirect_uris": [REDIRECT_URI]}).encode(), {"Content-Type": "application/json"})
    assert status == 201, body
    client_id = json.loads(body)["client_id"]
    status, _, _ = http("POST", f"{server.url}/register", json.dumps(
        {"client_name": "evil", "redirect_uris": ["http://evil.example/cb"]}).encode(),
        {"Content-Type": "application/json"})
    assert status == 400, status
    _, challenge = pkce()
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI,
             "code_challenge": challenge, "code_challenge_method": "S256", "state": "x"}
    status, _, page = http("GET", f"{server.url}/authorize?{urllib.parse.urlencode(query)}")
    assert status == 200, page
    status, _, page = http("GET", f"{server.url}/authorize?{urllib.parse.urlencode(dict(query, code_challenge_method='plain'))}")
    assert status == 400 and b"S256" in page, page
    status, _, page = post_form(f"{server.url}/authorize", dict(query, pairing_code="AAAA-AAAA"))
    assert status == 403 and b"Wrong pairing code" in page, (status, page)
    time.sleep(1.2)  # the wait a wrong code imposes on the next try
    status, _, page = post_form(f"{server.url}/authorize/consent", {"ticket": "forged", "decision": "allow"})
    assert status == 400, status
    status, _, body = post_form(f"{server.url}/token", {"grant_type": "authorization_code", "code": "forged",
                                                         "redirect_uri": REDIRECT_URI, "client_id": client_id,
                                                         "code_verifier": pkce()[0]})
    assert status == 400 and json.loads(body)["error"] == "invalid_grant", body
    status, _, body = post_form(f"{server.url}/token", {"grant_type": "refresh_token", "refresh_token": "forged",
                                                         "client_id": client_id})
    assert status == 400 and json.loads(body)["error"] == "invalid_grant", body
    assert_challenge(mcp_post(server.mcp_url, INITIALIZE), server)
    for token in bad_tokens:
        assert mcp_post(server.mcp_url, INITIALIZE, token)[0] == 401
    assert http("GET", f"{server.url}/.well-known/oauth-protected-resource")[0] == 200
    assert http("GET", f"{server.url}/nothing-here")[0] == 404


# ---------------------------------------------------------------------------------------------
# The SDK.

class Storage:
    """The SDK's token storage, in memory (the test reads the token from it for raw checks)."""

    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


def oauth_provider(server, storage, person, code, **more):
    """The official OAuth client provider, the person played by `person(server, authorization
    URL, pairing code)` (which returns the redirect's code and state); `more` goes to the
    provider (`client_metadata_url=`)."""
    import anyio
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    redirected = {}

    async def redirect_handler(authorization_url):
        parsed = urllib.parse.parse_qs(urllib.parse.urlparse(authorization_url).query)
        assert parsed["code_challenge_method"] == ["S256"], parsed
        assert parsed["resource"] == [server.mcp_url], parsed
        assert parsed["redirect_uri"] == [REDIRECT_URI], parsed
        redirected["answer"] = await anyio.to_thread.run_sync(person, server, authorization_url, code)

    async def callback_handler():
        code, state = redirected.pop("answer")
        return AuthorizationCodeResult(code=code, state=state)

    metadata = OAuthClientMetadata(client_name=CLIENT_NAME, redirect_uris=[REDIRECT_URI],
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                                   token_endpoint_auth_method="none")
    return OAuthClientProvider(server.mcp_url, metadata, storage, redirect_handler, callback_handler, **more)


async def call(session, tool, args):
    """A call that succeeds. The SDK has checked its structured content against the tool's
    output schema; and nothing said to the chat calls it anything but itself."""
    result = await session.call_tool(tool, args)
    assert not is_error(result), (tool, args, result)
    doc = structured(result)
    # (A handoff's first line is the reference tool's machine marker, an HTML comment.)
    assert "webgpt" not in re.sub(r"<!--.*?-->", "", json.dumps(doc)).lower(), (tool, doc)
    return doc


async def refused(session, tool, args, needle):
    """A call the tool refuses: a result with isError whose text names `needle`."""
    result = await session.call_tool(tool, args)
    assert is_error(result), (tool, args, result)
    text = result.content[0].text
    assert needle in text, (tool, args, text)
    return text


def push(emu, branch, calc, message):
    emu.admin("POST", "repos/acme/widget/commits", {"branch": branch, "files": {"calc.sh": calc}, "message": message})


async def whole_cycle(binary, env, work, server, emu):
    """The SDK end to end; returns what later checks need."""
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    # The SDK logs what it finds wrong with a server (a failed session termination, a bad
    # metadata document) as warnings: there must be none.
    warnings = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warnings.append(record.getMessage())
    logging.getLogger("mcp").addHandler(handler)
    storage = Storage()
    provider = oauth_provider(server, storage, browser_pairs, server.first_code)
    out = {"storage": storage}
    async with create_mcp_http_client(auth=provider) as client:
        async with streamable_http_client(server.mcp_url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                info = getattr(init, "server_info", None) or getattr(init, "serverInfo")
                assert info.name == "forgeloop", info
                listed = (await session.list_tools()).tools
                tools = sorted(t.name for t in listed)
                assert tools == TOOLS, tools
                schemas = {t.name: (getattr(t, "output_schema", None) or getattr(t, "outputSchema", None)) for t in listed}
                integrity = schemas["test_pr"]["properties"]["report"]["properties"]["integrity"]
                for word in ("own tests", "protect", "NEEDS_REVIEW", "assertions_removed"):
                    assert word in json.dumps(integrity), (word, integrity)
                assert "AWAITING_FIX" in schemas["cycle_status"]["properties"]["status"]["description"], schemas
                assert {"changed", "since"} <= set(schemas["wait"]["required"]), schemas["wait"]
                assert storage.tokens is not None and storage.tokens.refresh_token, "the SDK holds its tokens"

                repos = (await call(session, "list_repositories", {}))["repositories"]
                assert repos == [{"repository": "acme/widget", "profile": "project",
                                  "runs": {"setup": [], "commands": [["sh", "test.sh"]], "network": "off"}}], repos

                started = await call(session, "start_cycle", dict(FIVE, repository="acme/widget",
                                                                  question="Fix calc.sh and open a PR."))
                cycle = started["cycle"]
                assert started["status"] == "AWAITING_BRIEF_CONFIRMATION", started
                assert "control room" in started["waiting_for"], started
                assert "forgeloop tui" in started["waiting_for"] and "press c" in started["waiting_for"], started
                out["cycle"] = cycle
                status = await call(session, "cycle_status", {"cycle": cycle})
                assert status["status"] == "AWAITING_BRIEF_CONFIRMATION" and status["max_iterations"] == 5, status

                number = emu.pr("acme", "widget", "calc-fix", FIRST_TRY)
                pr = f"acme/widget#{number}"
                await refused(session, "test_pr", {"cycle": cycle, "pr": pr}, "the brief must be confirmed first")

                # The person confirms in the control room while the client waits.
                async with anyio.create_task_group() as group:
                    waited = []

                    async def waiter():
                        waited.append(await call(session, "wait", {"cycle": cycle, "timeout_seconds": 60}))
                    group.start_soon(waiter)
                    await anyio.to_thread.run_sync(person_confirms_in_the_control_room, binary, env, work, cycle, server)
                assert waited[0]["changed"] is True and waited[0]["status"] == "AWAITING_PR", waited
                assert waited[0]["since"] == "AWAITING_BRIEF_CONFIRMATION", waited
                assert waited[0]["waiting_for"].startswith("you: open a pull request"), waited
                unchanged = await call(session, "wait", {"cycle": cycle, "timeout_seconds": 1})
                assert unchanged["changed"] is False, unchanged

                failed = await call(session, "test_pr", {"cycle": cycle, "pr": pr})
                assert failed["profile"] == "project", failed
                assert failed["report"]["status"] == "TEST_FAILED", failed
                assert "expected 5, got -1" in failed["report"]["failure_output"], failed
                assert "not ok - expected 5, got -1" in failed["report"]["output_tail"], failed
                assert failed["cycle"]["waiting_for"].startswith("you: push a fix"), failed
                assert failed["cycle"]["status"] == "AWAITING_FIX" and failed["cycle"]["iteration"] == 1, failed
                assert "TEST_FAILED" in failed["handoff"], failed
                handoff = (await call(session, "get_handoff", {"cycle": cycle}))["handoff"]
                assert "expected 5, got -1" in handoff, handoff
                diff = await call(session, "get_diff", {"cycle": cycle})
                assert diff["kind"] == "whole_pr" and "+echo $(($1 - $2)) # first try" in diff["diff"], diff
                assert diff["files"] == [{"path": "calc.sh", "additions": 1, "deletions": 1}], diff
                again = await call(session, "test_pr", {"cycle": cycle, "pr": pr})
                assert "already_tested" in again and again["cycle"]["iteration"] == 1, again

                push(emu, "calc-fix", CALC_FIXED, "fix: add")
                passed = await call(session, "test_pr", {"cycle": cycle, "pr": pr})
                assert passed["report"]["status"] == "TEST_PASSED", passed
                # A pass carries its evidence: the tests' own words, redacted.
                assert passed["report"]["failure_output"] is None, passed
                assert "ok - 2+3=5" in passed["report"]["output_tail"], passed
                assert "integrity" in passed["report"], passed
                assert passed["cycle"]["status"] == "READY_TO_MERGE" and passed["cycle"]["iteration"] == 2, passed
                diff = await call(session, "get_diff", {"cycle": cycle})
                assert diff["kind"] == "since_last_run" and "+echo $(($1 + $2))" in diff["diff"], diff
                status = await call(session, "cycle_status", {"cycle": cycle})
                assert status["status"] == "READY_TO_MERGE" and status["pr"] == pr, status
                assert emu.admin("GET", f"repos/acme/widget/issues/{number}/comments") == [], "nothing is posted"
                assert not emu.admin("GET", f"repos/acme/widget/pulls/{number}").get("merged"), "nothing merges"

                # Arguments that try to pass commands, a profile, a cap or a path: refused before
                # the tool runs (rmcp answers a parameter that does not deserialize with a tool
                # error, as the MCP specification asks for input validation), nothing created.
                cycles_before = sorted((work / "home" / "cycles").glob("*.json"))
                for tool, args in [
                    ("test_pr", {"cycle": cycle, "pr": pr, "commands": [["sh", "-c", "id"]]}),
                    ("test_pr", {"cycle": cycle, "pr": pr, "profile": "smoke"}),
                    ("start_cycle", dict(FIVE, repository="acme/widget", question="q", commands=[["id"]])),
                    ("start_cycle", dict(FIVE, repository="acme/widget", question="q", max_iterations=99)),
                    ("cycle_status", {"cycle": cycle, "path": "/etc/passwd"}),
                ]:
                    await refused(session, tool, args, "unknown field")
                assert sorted((work / "home" / "cycles").glob("*.json")) == cycles_before
                for name in ("../x", f"../{cycle}", "/etc", cycle + "/../" + cycle):
                    await refused(session, "cycle_status", {"cycle": name}, "is not a cycle this client started")
                await refused(session, "start_cycle", dict(FIVE, repository="stranger/tool", question="q"),
                              "is not a repository this connector may use")
                await refused(session, "start_cycle", dict(FIVE, repository="../../etc", question="q"),
                              "is not a repository this connector may use")

                # A client may open a session per call: another session of the same grant.
                def another_session():
                    return streamable_http_client(server.mcp_url, http_client=client)
                out["cap"] = await the_cap(binary, env, work, session, emu, another_session)
                await network_needed(binary, env, work, session, emu)
                await a_shared_review(binary, env, work, session, emu, server, cycle)
                out["client_id"] = storage.client_info.client_id
                out["pr"] = pr

    logging.getLogger("mcp").removeHandler(handler)
    assert not warnings, f"the SDK found fault with the server: {warnings}"
    state = json.loads((work / "home" / "cycles" / f"{out['cycle']}.json").read_text())
    assert state["driver"] == f"connector:{CLIENT_NAME}", state.get("driver")
    # The journal says so from the start: the created event names the driver and the repository.
    events = (work / "home" / "cycles" / f"{out['cycle']}.d" / "events.jsonl").read_text().splitlines()
    created = json.loads(events[0])
    assert created["kind"] == "created", created
    assert created["data"]["driver"] == f"connector:{CLIENT_NAME}", created
    assert created["data"]["repository"] == "acme/widget", created
    assert state["brief_confirmation"]["via"] == "tui", state["brief_confirmation"]
    return out


async def the_cap(binary, env, work, session, emu, another_session):
    """A second cycle: five failing heads, then the sixth test_pr is blocked without asking GitHub."""
    import anyio
    started = await call(session, "start_cycle", dict(FIVE, repository="acme/widget", question="Try again."))
    cycle = started["cycle"]
    await anyio.to_thread.run_sync(person_on_a_terminal, binary, env, str(work), "confirm", "--state", cycle)
    # The person confirmed before the client asked: wait compares with what the client was
    # told (start_cycle's answer), so it says "changed" at once, and from what, even in a new
    # MCP session of the same grant.
    from mcp import ClientSession
    async with another_session() as (read, write):
        async with ClientSession(read, write) as second:
            await second.initialize()
            waited = await call(second, "wait", {"cycle": cycle, "timeout_seconds": 60})
    assert waited["changed"] is True and waited["status"] == "AWAITING_PR", waited
    assert waited["since"] == "AWAITING_BRIEF_CONFIRMATION", waited
    again = await call(session, "wait", {"cycle": cycle, "timeout_seconds": 60, "since": "AWAITING_BRIEF_CONFIRMATION"})
    assert again["changed"] is True and again["since"] == "AWAITING_BRIEF_CONFIRMATION", again
    same = await call(session, "wait", {"cycle": cycle, "timeout_seconds": 60, "since": "AWAITING_PR"})
    assert same["changed"] is False and same["since"] == "AWAITING_PR", same
    await refused(session, "wait", {"cycle": cycle, "since": "DONE_SOON"}, "is not a status")
    number = emu.pr("acme", "widget", "cap", CALC_BUGGY)
    pr = f"acme/widget#{number}"
    foreign = emu.pr("stranger", "tool", "x", CALC_BUGGY)
    before = len(emu.requests_to("/repos/stranger/tool"))
    await refused(session, "test_pr", {"cycle": cycle, "pr": f"stranger/tool#{foreign}"},
                  "the pull request repository does not match")
    assert len(emu.requests_to("/repos/stranger/tool")) == before, "a refused repository is never contacted"
    for k in range(1, 6):
        if k > 1:
            push(emu, "cap", f"echo $(($1 - $2)) # try {k}\n", f"try {k}")
        run = await call(session, "test_pr", {"cycle": cycle, "pr": pr})
        assert run["report"]["status"] == "TEST_FAILED" and run["cycle"]["iteration"] == k, run
    push(emu, "cap", CALC_FIXED, "fix at last")
    asked = len(emu.requests_to(f"/repos/acme/widget/pulls/{number}"))
    blocked = await call(session, "test_pr", {"cycle": cycle, "pr": pr})
    assert blocked["cycle"]["status"] == "BLOCKED_MAX_ITERATIONS" and blocked["cycle"]["iteration"] == 5, blocked
    assert f"forgeloop extend --state {cycle}" in blocked["cycle"]["waiting_for"], blocked
    assert "report" not in blocked, blocked
    assert len(emu.requests_to(f"/repos/acme/widget/pulls/{number}")) == asked, "past the cap GitHub is not asked"
    await refused(session, "test_pr", {"cycle": cycle, "pr": pr}, "the iteration cap is reached")
    # Only the person raises it, on their terminal; then the fixed head is tested.
    extended = await anyio.to_thread.run_sync(person_on_a_terminal, binary, env, str(work),
                                              "extend", "--state", cycle, "--by", "1")
    assert extended["max_iterations"] == 6, extended
    passed = await call(session, "test_pr", {"cycle": cycle, "pr": pr})
    assert passed["cycle"]["status"] == "READY_TO_MERGE" and passed["cycle"]["iteration"] == 6, passed
    return cycle


async def network_needed(binary, env, work, session, emu):
    """A PR whose tests reach for the network: the answer is not an error but the cycle, which
    says the person decides, with what was tried; no run is counted."""
    import anyio
    cycle = (await call(session, "start_cycle", dict(FIVE, repository="acme/widget", question="Net.")))["cycle"]
    await anyio.to_thread.run_sync(person_on_a_terminal, binary, env, str(work), "confirm", "--state", cycle)
    reach = "python3 -c \"import socket; socket.create_connection(('127.0.0.1', 9), timeout=5)\" && echo $(($1 + $2))\n"
    number = emu.pr("acme", "widget", "net", reach)
    answer = await call(session, "test_pr", {"cycle": cycle, "pr": f"acme/widget#{number}"})
    assert "report" not in answer and answer["needs_network"]["counted"] is False, answer
    assert "127.0.0.1:9" in json.dumps(answer["needs_network"]["destinations"]), answer
    assert answer["cycle"]["iteration"] == 0 and answer["cycle"]["status"] == "AWAITING_PR", answer
    assert answer["cycle"]["waiting_for"].startswith("the person: the last run"), answer
    waited = await call(session, "wait", {"cycle": cycle, "timeout_seconds": 1})
    assert waited["changed"] is False and waited["waiting_for"] == answer["cycle"]["waiting_for"], waited


def cli(binary, env, cwd, *args, ok=True):
    """The person's command without a terminal: its JSON when it succeeds (`ok`), else its
    error document."""
    run = subprocess.run([binary, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=HANG_GUARD)
    assert (run.returncode == 0) == ok, (args, run.returncode, run.stdout, run.stderr)
    return json.loads(run.stdout or run.stderr)


async def a_shared_review(binary, env, work, session, emu, server, pr_cycle):
    """A review the person made on their terminal reaches the client only once they share it
    with its grant, through get_review alone, and only until they stop sharing it."""
    import anyio

    def person(*args, ok=True):
        return cli(binary, env, str(work), *args, ok=ok)

    number = emu.pr("acme", "widget", "reviewed", CALC_FIXED)
    started = await anyio.to_thread.run_sync(person, "review", "start", "--state", "rev", "--pr", f"acme/widget#{number}")
    head = started["review"]["target"]["head"]
    await refused(session, "get_review", {"review": "rev"}, "is not a review the person shared with this client")
    person("attest", "--state", "rev", "--model", "GPT-5", "--connector", "absent",
           "--conversation-url", "https://chatgpt.com/c/shared-review")
    person("review", "prepare", "--state", "rev")
    grant = next(g["id"] for g in json.loads(server.grants_file().read_text())["grants"] if g["client_name"] == CLIENT_NAME)
    # Only a review is shared: the client's own PR cycle, a path, another grant are refused.
    assert "is not a review cycle" in json.dumps(person("serve", "--share", pr_cycle, "--grant", grant, ok=False))
    assert "not a path" in json.dumps(person("serve", "--share", str(work / "home" / "cycles" / "rev.json"),
                                             "--grant", grant, ok=False))
    assert "no grant" in json.dumps(person("serve", "--share", "rev", "--grant", "g_000000000000", ok=False))
    shared = person("serve", "--share", "rev", "--grant", grant)
    assert shared["shared"] == ["rev"] and shared["client"] == CLIENT_NAME, shared
    listed = person("serve", "--grants")["grants"]
    assert any(g["grant"] == grant and g["shared"] == ["rev"] for g in listed), listed

    # The packet waits for the person's yes: the client sees that, and what the packet holds.
    review = await call(session, "get_review", {"review": "rev"})
    assert review["status"] == "AWAITING_PACKET" and review["packet_awaits_approval"] is True, review
    assert review["head"] == head and review["pr"] == f"acme/widget#{number}", review
    assert review["route"] == "LOCAL_BUNDLE", review
    assert review["attestation"]["verdict"] == "invalid" and review["attestation"]["commit"] == head, review
    assert "questions" not in json.dumps(review["attestation"]), "the challenge is not handed out"
    manifest = review["manifest"]
    assert manifest["head"] == head and manifest["repository"] == "acme/widget", manifest
    assert [f["path"] for f in manifest["files"] if f["included"]] == ["calc.sh"], manifest
    assert all(len(f["sha256"]) == 64 for f in manifest["files"] if f["included"]), manifest
    assert review["findings"] == [] and review["untriaged"] == [], review

    await anyio.to_thread.run_sync(person_on_a_terminal, binary, env, str(work), "review", "approve", "--state", "rev")
    person("sent", "--state", "rev")
    reply = work / "review-reply.txt"
    reply.write_text("FINDING 1: [high] calc.sh:1 — the sum is not checked for overflow\n"
                     "FINDING 2: [low] calc.sh — no usage line\n")
    person("review", "reply", "--state", "rev", "--file", str(reply))
    person("triage", "--state", "rev", "--finding", "1", "--as", "FIX", "--note", "the person's own note")
    review = await call(session, "get_review", {"review": "rev"})
    assert review["status"] == "AWAITING_TRIAGE" and review["packet_awaits_approval"] is False, review
    decisions = [(f["number"], f["severity"], f["location"], f["decision"]) for f in review["findings"]]
    assert decisions == [(1, "high", "calc.sh:1", "FIX"), (2, "low", "calc.sh", None)], decisions
    assert review["untriaged"] == [2], review
    assert "the person's own note" not in json.dumps(review), "a triage note stays the person's"
    # Sharing opens get_review and nothing else; arguments beyond the name are refused.
    await refused(session, "cycle_status", {"cycle": "rev"}, "is not a cycle this client started")
    await refused(session, "test_pr", {"cycle": "rev", "pr": f"acme/widget#{number}"},
                  "is not a cycle this client started")
    await refused(session, "get_review", {"review": "rev", "path": "/etc/passwd"}, "unknown field")
    await refused(session, "get_review", {"review": pr_cycle}, "is not a review the person shared")

    person("serve", "--unshare", "rev", "--grant", grant)
    await refused(session, "get_review", {"review": "rev"}, "is not a review the person shared with this client")
    assert "is not shared" in json.dumps(person("serve", "--unshare", "rev", "--grant", grant, ok=False))


# ---------------------------------------------------------------------------------------------

async def with_token(server, token, body):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as client:
        async with streamable_http_client(server.mcp_url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)


def write_grants(server, data):
    """Replaces grants.json whole (atomically, as forgeloop writes it): `serve` reads it at
    each request."""
    tmp = server.grants_file().with_suffix(".test-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, server.grants_file())


def edit_grants(server, change):
    """A hand on grants.json (the person's, or a clock's): `change` edits the parsed document."""
    grants = json.loads(server.grants_file().read_text())
    change(grants)
    write_grants(server, json.dumps(grants, indent=2).encode())


def token_hash(token):
    return hashlib.sha256(token.encode()).hexdigest()


async def refusals(work, server, first):
    """A restarted serve: the refusals, a second client, the person's revocation."""
    access_a = first["storage"].tokens.access_token
    cycle_a = first["cycle"]

    # Transport: no token, a foreign Origin, a wrong Host, oversized bodies.
    assert_challenge(mcp_post(server.mcp_url, INITIALIZE), server)
    answer = mcp_post(server.mcp_url, INITIALIZE, access_a)
    assert answer[0] == 200, ("the grant outlives a restart", answer[1].get("WWW-Authenticate"))
    for origin in ("http://evil.example", "null", server.url.replace("127.0.0.1", "127.0.0.2")):
        status, _, body = mcp_post(server.mcp_url, INITIALIZE, access_a, {"Origin": origin})
        assert status == 403 and b"Origin" in body, (origin, status, body)
    status, _, _ = http("POST", f"{server.url}/register", b"{}", {"Origin": "http://evil.example"})
    assert status == 403, status
    assert mcp_post(server.mcp_url, INITIALIZE, access_a, {"Origin": server.url})[0] == 200, "its own origin is fine"
    for host in ("evil.example", "127.0.0.1:1", "evil.example:" + server.url.rsplit(":", 1)[1]):
        status, _, body = mcp_post(server.mcp_url, INITIALIZE, access_a, {"Host": host})
        assert status == 403 and b"Host" in body, (host, status, body)
        status, _, _ = http("GET", f"{server.url}/.well-known/oauth-authorization-server", None, {"Host": host})
        assert status == 403, status
    localhost = server.url.replace("127.0.0.1", "localhost")
    assert http("GET", f"{localhost}/.well-known/oauth-authorization-server")[0] == 200, "localhost:PORT is this server"
    big = dict(INITIALIZE, padding="x" * (64 * 1024))
    assert mcp_post(server.mcp_url, big, access_a)[0] == 413
    status, _, _ = http("POST", f"{server.url}/register", json.dumps(
        {"client_name": "x" * (16 * 1024), "redirect_uris": [REDIRECT_URI]}).encode(),
        {"Content-Type": "application/json"})
    assert status == 413, status
    status, _, _ = post_form(f"{server.url}/token", {"grant_type": "authorization_code", "code": "c" * 17000})
    assert status == 413, status

    # A second client, authorized by hand: it reaches none of A's cycles.
    client_b, tokens_b, _ = second_grant(server)
    access_b = tokens_b["access_token"]

    async def as_b(session):
        for cycle in (cycle_a, first["cap"]):
            for tool, args in [("cycle_status", {"cycle": cycle}), ("wait", {"cycle": cycle, "timeout_seconds": 1}),
                               ("test_pr", {"cycle": cycle, "pr": first["pr"]}), ("get_diff", {"cycle": cycle}),
                               ("get_handoff", {"cycle": cycle})]:
                await refused(session, tool, args, "is not a cycle this client started")
        await refused(session, "start_cycle", dict(FIVE, repository="stranger/tool", question="q"),
                      "is not a repository this connector may use")
        repos = (await call(session, "list_repositories", {}))["repositories"]
        assert [r["repository"] for r in repos] == ["acme/widget"], repos
    await with_token(server, access_b, as_b)

    # Expired and wrong-audience tokens: grants.json edited by hand, read again at each request.
    original = server.grants_file().read_bytes()
    hash_b = token_hash(access_b)

    def expire(grants):
        for grant in grants["grants"]:
            for token in grant["access"]:
                if token["hash"] == hash_b:
                    token["expires_at"] = int(time.time()) - 1
    edit_grants(server, expire)
    assert_challenge(mcp_post(server.mcp_url, INITIALIZE, access_b), server, "expired")

    def elsewhere(grants):
        for grant in grants["grants"]:
            if grant["client_id"] == client_b:
                grant["resource"] = "https://elsewhere.example/mcp"
    write_grants(server, original)
    edit_grants(server, elsewhere)
    assert_challenge(mcp_post(server.mcp_url, INITIALIZE, access_b), server, "another resource")
    write_grants(server, original)
    assert mcp_post(server.mcp_url, INITIALIZE, access_b)[0] == 200, "restored, the token works again"

    # Refresh: never for another resource; it rotates; a used refresh token coming back ends
    # the grant (RFC 9700 §4.14.2).
    def refresh(token, **extra):
        return post_form(f"{server.url}/token", dict({"grant_type": "refresh_token", "refresh_token": token,
                                                       "client_id": client_b}, **extra))
    status, _, body = refresh(tokens_b["refresh_token"], resource="https://elsewhere.example/mcp")
    assert status == 400 and json.loads(body)["error"] == "invalid_target", body
    status, _, body = refresh(tokens_b["refresh_token"], client_id=register(server, "thief"))
    assert status == 400 and json.loads(body)["error"] == "invalid_grant", body
    old_refresh = tokens_b["refresh_token"]
    status, _, body = refresh(old_refresh, resource=server.mcp_url)
    assert status == 200, body
    rotated = json.loads(body)
    assert rotated["refresh_token"] != old_refresh and rotated["access_token"] != access_b, rotated
    assert mcp_post(server.mcp_url, INITIALIZE, rotated["access_token"])[0] == 200
    assert mcp_post(server.mcp_url, INITIALIZE, access_b)[0] == 200, "the older access token lives out its 15 minutes"
    status, _, body = refresh(old_refresh)
    assert status == 400 and "revoked" in json.loads(body)["error_description"], body
    assert_challenge(mcp_post(server.mcp_url, INITIALIZE, rotated["access_token"]), server, "revoked")
    status, _, body = refresh(rotated["refresh_token"])
    assert status == 400, body

    # Revocation by the person: every token stops at once.
    code, listed = server.cli("serve", "--grants")
    assert code == 0 and any(g["client"] == CLIENT_NAME and g["cycles"] for g in listed["grants"]), listed
    assert token_hash(access_a) not in json.dumps(listed), "no token hash is listed"
    # Each grant says where it went (its redirect's host), whatever the client calls itself.
    assert all(g["redirect_hosts"] == ["127.0.0.1"] for g in listed["grants"]), listed
    assert mcp_post(server.mcp_url, INITIALIZE, access_a)[0] == 200
    code, revoked = server.cli("serve", "--revoke", "all")
    assert code == 0 and revoked["status"] == "REVOKED", revoked
    # A revoked grant's tokens are refused as revoked (the client is told why).
    assert_challenge(mcp_post(server.mcp_url, INITIALIZE, access_a), server, "revoked")
    status, _, body = post_form(f"{server.url}/token", {"grant_type": "refresh_token", "client_id": first["client_id"],
                                                         "refresh_token": first["storage"].tokens.refresh_token})
    assert status == 400 and json.loads(body)["error"] == "invalid_grant", body
    code, again = server.cli("serve", "--revoke", "all")
    assert code != 0, again

    # The journal: every request with a grant, with the client's name; never a token.
    journal = (work / "home" / "connector" / "journal.jsonl").read_text()
    lines = [json.loads(line) for line in journal.splitlines()]
    tools = {line.get("tool") for line in lines if line["kind"] == "tool" and line["client"] == CLIENT_NAME}
    assert set(TOOLS) <= tools, tools
    assert any(line["kind"] == "tool" and line["client"] == "second-client" and not line["ok"] for line in lines), lines
    grants_text = server.grants_file().read_text()
    for secret in (access_a, access_b, old_refresh, rotated["access_token"], first["storage"].tokens.refresh_token):
        assert secret not in journal and secret not in grants_text, "tokens are stored hashed, never journaled"
    return [access_a, access_b, rotated["access_token"]]


def without_a_grant(work, server, dead_tokens):
    """A fresh serve: requests without a valid grant change no file, wrong pairing codes
    included (they slow the next try down and never void the person's code); the person's new
    code; the budget of requests without a grant."""
    before = snapshot(work / "home", work / "registry")
    requests_without_a_grant(server, dead_tokens + ["x" * 43, secrets.token_urlsafe(32)])
    fields, code = pairing_tries(server, register(server, "guesser"))
    after = snapshot(work / "home", work / "registry")
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    assert not changed, f"requests without a valid grant changed files: {changed}"
    assert server.serving()["pairing_code"] == code, "a guesser got the code replaced"

    # Only the person gets a new code at once (SIGUSR1 to the running serve); it works.
    code_now, answer = server.cli("serve", "--new-code")
    assert code_now == 0 and answer["status"] == "OK", answer
    renewed = server.code_other_than(code)
    status, _, page = post_form(f"{server.url}/authorize", dict(fields, pairing_code=renewed))
    assert status == 200 and b"Allow this client?" in page, (status, page)
    # The person completes a grant with it: a client that will refresh during the flood.
    refresher = register(server, "refresher")
    answer, verifier = authorize(server, refresher, renewed, "allow")
    status, _, body = redeem(server, refresher, answer["code"][0], verifier)
    assert status == 200, (status, body)
    refresh = json.loads(body)["refresh_token"]

    # The budget: a flood of requests without a grant is answered 429, /mcp's refusals included.
    codes = []
    while not codes or codes[-1] != 429:
        codes.append(http("GET", f"{server.url}/.well-known/oauth-protected-resource")[0])
        assert len(codes) <= 60, "the budget of requests without a grant never ran out"
    assert set(codes[:-1]) == {200}, codes
    status, _, _ = mcp_post(server.mcp_url, INITIALIZE)
    assert status == 429, status
    # A refresh with a valid token is its grant's: the flood does not starve it. Junk is 429.
    refreshing = {"grant_type": "refresh_token", "client_id": refresher, "resource": server.mcp_url}
    status, _, body = post_form(f"{server.url}/token", dict(refreshing, refresh_token=refresh))
    assert status == 200 and json.loads(body)["refresh_token"] != refresh, (status, body)
    status, _, _ = post_form(f"{server.url}/token", dict(refreshing, refresh_token="x" * 43))
    assert status == 429, status


def exposure_is_the_persons(server):
    """A non-loopback address is served only behind an https public URL and with the person's
    yes on a terminal; neither starts here."""
    code, answer = server.cli("serve", "--listen", "0.0.0.0:0")
    assert code == 2 and "reachable from other machines" in answer["error"], answer
    code, answer = server.cli("serve", "--listen", "0.0.0.0:0", "--public-url", "http://forge.example")
    assert code == 2 and "not https" in answer["error"], answer
    code, answer = server.cli("serve", "--listen", "0.0.0.0:0", "--public-url", "https://forge.example")
    assert code == 2 and answer["status"] == "NOT_A_TERMINAL", answer
    code, answer = server.cli("serve", "--new-code")
    assert code == 2 and "not running" in answer["error"], answer


def pairing_tries(server, client_id):
    """Wrong codes on the pairing page: each makes the next try wait longer (a try during the
    wait is not even checked), and the code stays the person's. Returns the page's fields and
    the code, still in force."""
    code = server.serving()["pairing_code"]
    _, challenge = pkce()
    query = urllib.parse.urlencode({"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI,
                                    "code_challenge": challenge, "code_challenge_method": "S256", "state": "t"})
    _, _, page = http("GET", f"{server.url}/authorize?{query}")
    fields = hidden_fields(page)
    wrong = "".join(secrets.choice("ABCDEFGHJKMNPQRSTUVWXYZ23456789") for _ in range(8))
    wrong = wrong if wrong != code.replace("-", "") else "AAAAAAAA"
    waits = []
    for _ in range(2):
        status, _, page = post_form(f"{server.url}/authorize", dict(fields, pairing_code=wrong))
        wait = re.search(rb"Wrong pairing code\. Wait (\d+) s before the next try\.", page)
        assert status == 403 and wait, (status, page)
        waits.append(int(wait.group(1)))
        # At once again, even with the right code: refused unchecked until the wait is over.
        status, _, page = post_form(f"{server.url}/authorize", dict(fields, pairing_code=code))
        assert status == 403 and b"try again in" in page, (status, page)
        time.sleep(waits[-1] + 0.2)
    assert waits[1] == 2 * waits[0], waits
    return fields, code


async def bounded(phase, *args):
    """A phase under the hang guard (the SDK would wait 300 s for a hung tool call)."""
    import anyio
    with anyio.fail_after(HANG_GUARD):
        return await phase(*args)


def main():
    ensure_sdk(__file__)
    import anyio

    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / "target" / "debug" / "forgeloop"))
    binary = str(pathlib.Path(parser.parse_args().bin).resolve())
    token = fresh_token()
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="forgeloop-connector-") as tmp:
        work = pathlib.Path(tmp)
        emu = Emulator(binary, work, token)
        server = None
        try:
            emu.project("acme", "widget")
            emu.project("stranger", "tool")
            config = work / "config.toml"
            config.write_text(
                '[mcp.profiles.project]\ncommands = [["sh", "test.sh"]]\n'
                '[mcp.profiles.smoke]\ncommands = [["git", "diff", "--check"]]\n'
                '[connector]\ndefault_profile = "project"\n'
            )
            env = forgeloop_env(work, FORGELOOP_CONFIG=str(config), FORGELOOP_GITHUB_API=emu.api, GH_TOKEN=token)
            subprocess.run([binary, "project", "bind", "--repository", "acme/widget", "--project-url",
                            "https://chatgpt.com/g/g-p-6743a1b2c3d4e5f6/project", "--project-name", "widget"],
                           env=env, cwd=work, check=True, stdout=subprocess.DEVNULL)
            # Three runs of serve: grants outlive a restart; each run has its own budget of
            # requests without a grant (60 a minute), which the refusals below would exhaust.
            server = Serve(binary, env, work, work / "serve-1.log")
            first = anyio.run(bounded, whole_cycle, binary, env, work, server, emu)
            server.stop()
            # The same address: tokens are for the resource <url>/mcp, and the port is part of it.
            server = Serve(binary, env, work, work / "serve-2.log", server.url.removeprefix("http://"))
            dead = anyio.run(bounded, refusals, work, server, first)
            server.stop()
            server = Serve(binary, env, work, work / "serve-3.log")
            without_a_grant(work, server, dead)
            server.stop()
            exposure_is_the_persons(server)
            for log in work.glob("serve-*.log"):
                assert token not in log.read_text(), "the GitHub token never reaches serve's log"
        except BaseException:
            if server is not None and server.proc.poll() is None:
                server.proc.kill()
            if server is not None:
                sys.stderr.write(f"---- {server.log.name} ----\n" + pathlib.Path(server.log.name).read_text()[-20000:])
            raise
        finally:
            emu.stop()
    print(f"connector test: ok ({time.monotonic() - began:.0f} s)")


if __name__ == "__main__":
    main()
