#!/usr/bin/env python3
"""`forgeloop mcp` driven by a real MCP client this project did not write: the official
Python SDK (`mcp` on PyPI) and its stdio client session, against the GitHub emulator.

Run from the repository root after `cargo build`:

    python3 tests/mcp/client_test.py [--bin target/debug/forgeloop]

The script installs what it needs itself: when the SDK is missing it creates a virtual
environment in target/mcp-venv, installs the pinned SDK from PyPI, and re-runs itself there.
It exits 0 when every check passed and prints what failed otherwise.
"""

import argparse
import json
import os
import pathlib
import queue
import secrets
import string
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

SDK = "mcp==2.3.0"
ROOT = pathlib.Path(__file__).resolve().parents[2]
VENV = ROOT / "target" / "mcp-venv"
HANG_GUARD = 120.0  # seconds; only against a hung server, never an assertion on speed

TEST_SH = "#!/bin/sh\nout=$(sh calc.sh 2 3)\nif [ \"$out\" = 5 ]; then echo 'ok - 2+3=5'; else echo \"not ok - expected 5, got $out\"; exit 1; fi\n"
CALC_BUGGY = "echo $(($1 - $2))\n"
CALC_FIXED = "echo $(($1 + $2))\n"
BRIEF = ("Goal: add dark mode.\nSuccess: preferences persist.\nScope: web app only.\n"
         "Constraints: keep contrast.\nValidation: run the tests.")


def ensure_sdk(script=__file__):
    """Re-runs `script` (this one, or a sibling test that imports this) in a venv with the SDK
    when the SDK is not importable here."""
    try:
        import mcp  # noqa: F401
        return
    except ImportError:
        pass
    python = VENV / "bin" / "python"
    if os.environ.get("FORGELOOP_MCP_VENV") == "1":
        sys.exit(f"the MCP SDK is still missing in {VENV}; remove it and run again")
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", SDK], check=True)
    env = dict(os.environ, FORGELOOP_MCP_VENV="1")
    os.execve(str(python), [str(python), str(script), *sys.argv[1:]], env)


def forgeloop_env(work, **more):
    """The environment of every forgeloop process a test starts: PATH, and a home, a forgeloop
    home and a registry of the test's own under `work` (the user's home made here); `more`
    added (FORGELOOP_CONFIG, GH_TOKEN, ...)."""
    (work / "userhome").mkdir(exist_ok=True)
    return dict({
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work / "userhome"),
        "FORGELOOP_HOME": str(work / "home"),
        "FORGELOOP_REGISTRY": str(work / "registry"),
    }, **more)


def fresh_token():
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(secrets.choice(alphabet) for _ in range(36))


def wait_for(predicate, what):
    deadline = time.monotonic() + HANG_GUARD
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


# The hanging profile's processes carry this in their command line: inside the sandbox's PID
# namespace their pids mean nothing outside, so they are found by name.
HANG_TAG = f"hang-{os.getpid()}-{int(time.time() * 1000)}"


def processes_with(needle):
    """Live (non-zombie) processes whose command line contains `needle`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().decode(errors="replace")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmdline and state not in ("Z", "X"):
            found.append(int(entry))
    return found


class Emulator:
    """`forgeloop github-emulator` as a process, driven through its admin API."""

    def __init__(self, binary, work, token):
        port_file = work / "emulator.port"
        # The admin API's secret, made for this run and passed by environment (never argv).
        self.secret = secrets.token_hex(32)
        self.proc = subprocess.Popen(
            [binary, "github-emulator", "--root", str(work / "emulator"), "--port-file", str(port_file), "--token", token],
            stdin=subprocess.DEVNULL,
            env={**os.environ, "FORGELOOP_EMULATOR_SECRET": self.secret},
        )
        port = wait_for(lambda: port_file.exists() and port_file.read_text().strip(), "the emulator's port")
        self.base = f"http://127.0.0.1:{port}"
        self.api = self.admin("GET", "health")["api_base"]

    def admin(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.base}/_emulator/{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        request.add_header("X-Emulator-Secret", self.secret)
        with urllib.request.urlopen(request, timeout=HANG_GUARD) as response:
            return json.loads(response.read() or b"{}")

    def project(self, owner, name):
        self.admin("POST", "repos", {"owner": owner, "name": name, "private": False})
        self.admin("POST", f"repos/{owner}/{name}/commits",
                   {"branch": "main", "files": {"test.sh": TEST_SH, "calc.sh": CALC_BUGGY}, "message": "project"})

    def pr(self, owner, name, branch, calc):
        self.admin("POST", f"repos/{owner}/{name}/commits", {"branch": branch, "files": {"calc.sh": calc}, "message": branch})
        return self.admin("POST", f"repos/{owner}/{name}/pulls", {"head": branch, "base": "main", "title": branch})["number"]

    def requests_to(self, needle):
        return [r for r in self.admin("GET", "requests") if needle in r.get("path", "")]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def field(obj, snake, camel):
    return getattr(obj, snake, None) if hasattr(obj, snake) else getattr(obj, camel, None)


def structured(result):
    value = field(result, "structured_content", "structuredContent")
    if value is None:
        value = json.loads(result.content[0].text)
    return value


def is_error(result):
    return bool(field(result, "is_error", "isError"))


async def sdk_checks(binary, work, emu, token, env, version):
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    started = work / "shared" / "started"
    failing = emu.pr("acme", "widget", "fix", CALC_BUGGY)
    foreign = emu.pr("stranger", "tool", "x", CALC_BUGGY)
    params = StdioServerParameters(command=binary, args=["mcp"], env=env, cwd=str(work))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            info = field(init, "server_info", "serverInfo")
            assert info.name == "forgeloop", info
            assert info.version == version, (info.version, version)

            tools = sorted(t.name for t in (await session.list_tools()).tools)
            assert tools == ["forge_attest", "forge_attest_answer", "forge_block", "forge_cycle", "forge_cycles",
                             "forge_diff", "forge_next", "forge_profiles", "forge_reply", "forge_review",
                             "forge_review_prepare", "forge_review_reply", "forge_review_start", "forge_sent",
                             "forge_start", "forge_test", "forge_triage", "project_attach", "project_bind",
                             "project_lookup", "webgpt_pr_handoff", "webgpt_pr_status",
                             "webgpt_pr_test"], tools

            status = await session.call_tool("webgpt_pr_status", {"pr": f"acme/widget#{failing}"})
            assert not is_error(status), status
            doc = structured(status)
            assert doc["state"] == "open" and doc["repository"] == "acme/widget", doc
            assert doc["head_sha"] == emu.admin("GET", f"repos/acme/widget/pulls/{failing}")["head_sha"], doc

            progress = []

            async def on_progress(value, total, message):
                progress.append((value, total, message))

            tested = await session.call_tool("webgpt_pr_test", {"pr": f"acme/widget#{failing}", "profile": "project"},
                                             progress_callback=on_progress)
            assert not is_error(tested), tested
            report = structured(tested)
            assert report["status"] == "TEST_FAILED", report
            assert report["comment_published"] is False, report
            assert emu.admin("GET", f"repos/acme/widget/issues/{failing}/comments") == [], "no comment is posted"
            messages = [m for _, _, m in progress]
            assert any(m.startswith("fetching") for m in messages), messages
            assert messages[-1] == "finished: TEST_FAILED", messages

            handoff = await session.call_tool("webgpt_pr_handoff", {"report": report})
            assert not is_error(handoff), handoff
            text = structured(handoff)["handoff"]
            assert "## Forge Loop PR test: TEST_FAILED" in text and "PR_URL:" in text, text
            partial = await session.call_tool("webgpt_pr_handoff", {"report": {"status": "TEST_FAILED"}})
            assert is_error(partial), partial

            cycles = structured(await session.call_tool("forge_cycles", {}))["cycles"]
            assert len(cycles) == 1 and cycles[0]["status"] == "AWAITING_WEBGPT_PR", cycles
            cycle = structured(await session.call_tool("forge_cycle", {"state": "dark-mode"}))
            assert cycle["status"] == "AWAITING_WEBGPT_PR", cycle
            step = structured(await session.call_tool("forge_next", {"task_space": cycles[0]["task_space"]}))
            assert step["action"] == "send", step

            await relay_loop(session, binary, work, emu, env)

            before = len(emu.requests_to("/repos/stranger/tool"))
            refused = await session.call_tool("webgpt_pr_test", {"pr": f"stranger/tool#{foreign}", "profile": "smoke"})
            assert is_error(refused), refused
            assert "stranger/tool is not allowed" in refused.content[0].text, refused
            assert len(emu.requests_to("/repos/stranger/tool")) == before, "a refused repository is never contacted"
            refused = await session.call_tool("webgpt_pr_test", {"pr": f"acme/widget#{failing}", "profile": "anything"})
            assert is_error(refused) and "unknown test profile" in refused.content[0].text, refused

            # Cancellation: the SDK sends notifications/cancelled when the call is abandoned.
            async with anyio.create_task_group() as group:
                hang_result = []

                async def run_hang():
                    hang_result.append(await session.call_tool(
                        "webgpt_pr_test", {"pr": f"acme/widget#{failing}", "profile": "hang"}))
                group.start_soon(run_hang)
                deadline = time.monotonic() + HANG_GUARD
                while not started.exists():
                    assert not hang_result, f"the hanging run ended before it started: {hang_result}"
                    assert time.monotonic() < deadline, "the hanging command never started"
                    await anyio.sleep(0.02)
                assert processes_with(HANG_TAG), "the hanging command runs"
                group.cancel_scope.cancel()
            deadline = time.monotonic() + HANG_GUARD
            while processes_with(HANG_TAG):
                assert time.monotonic() < deadline, "the cancelled run's processes are still alive"
                await anyio.sleep(0.02)
            await session.send_ping()
            assert len((await session.list_tools()).tools) == len(tools), "the server still serves after a cancellation"

    assert token not in json.dumps(report), "the token never appears in a result"


class ControlRoom:
    """The person at the control room (`forgeloop tui` in a private tmux server): what no MCP
    tool does (confirm a brief) is done here, by keys, as a person does it. connector_test
    drives it too."""

    def __init__(self, binary, env, cwd):
        import shlex
        self.socket = f"forgeloop-mcp-{os.getpid()}-{secrets.token_hex(4)}"
        command = f"cd {shlex.quote(str(cwd))} && {shlex.quote(binary)} tui; echo EXIT=$?; sleep 30"
        # The session inherits the tmux server's environment: the token is on no command line.
        subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-s", "t",
                        "-x", "200", "-y", "50", command], env=dict(env, TERM="xterm-256color"), check=True)

    def keys(self, *keys):
        subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "t", *keys], check=True)

    def screen(self):
        return subprocess.run(["tmux", "-L", self.socket, "capture-pane", "-p", "-t", "t"], capture_output=True,
                              text=True).stdout

    def wait_for(self, needle):
        return self.wait_until(lambda screen: needle in screen, repr(needle))

    def wait_until(self, predicate, what):
        deadline = time.monotonic() + HANG_GUARD
        while True:
            screen = self.screen()
            if predicate(screen):
                return screen
            assert time.monotonic() < deadline, f"{what} never showed on the control room:\n{screen}"
            time.sleep(0.05)

    def stop(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def person_confirms_in_the_control_room(binary, env, cwd):
    """The cycle waiting for its brief comes first in the list: `c` opens the brief, `y` confirms."""
    room = ControlRoom(binary, env, cwd)
    try:
        room.wait_until(lambda s: "CONFIRM BRIEF" in s, "the cycle waiting for its brief")
        room.keys("c")
        dialog = room.wait_until(lambda s: "Confirm the delegation brief" in s, "the brief's dialog")
        assert "add dark mode" in dialog, dialog
        room.keys("y")
        room.wait_until(lambda s: "CONFIRM BRIEF" not in s, "the confirmation")
        room.keys("q")
        room.wait_until(lambda s: "EXIT=0" in s, "the control room's exit")
    finally:
        room.stop()


async def relay_loop(session, binary, work, emu, env):
    """A whole cycle with MCP tools only, no CLI call: the Project looked up and bound, start,
    the person confirms in the control room, attach, next, sent, reply, a failing test (its
    comment posted), a fix pushed, a passing test with the stored commands (its comment posted):
    READY_TO_MERGE. What is the person's is refused over MCP before and after."""
    lookup = structured(await session.call_tool("project_lookup", {"repository": "acme/widget"}))
    assert lookup["status"] == "PROJECT_NOT_LINKED" and "project bind" in lookup["next_action"], lookup
    project = "https://chatgpt.com/g/g-p-widget/project"
    bound = structured(await session.call_tool("project_bind", {"repository": "acme/widget", "project_url": project,
                                                                "project_name": "acme/widget"}))
    assert bound["status"] == "PROJECT_LINKED" and bound["project_url"] == project, bound
    other = await session.call_tool("project_bind", {"repository": "acme/widget",
                                                     "project_url": "https://chatgpt.com/g/g-p-other/project",
                                                     "project_name": "other"})
    assert is_error(other), "a binding another Project holds is never overwritten"
    profiles = structured(await session.call_tool("forge_profiles", {}))
    project_profile = next(p for p in profiles["profiles"] if p["name"] == "project")
    assert project_profile["commands"] == [["sh", "test.sh"]], profiles
    started = await session.call_tool("forge_start", {"state": "calc", "request": "Make calc.sh add",
                                                      "webgpt_question": "Fix calc.sh and open a PR.",
                                                      "intent_brief": BRIEF})
    assert structured(started)["status"] == "AWAITING_BRIEF_CONFIRMATION", started
    step = structured(await session.call_tool("forge_next", {"state": "calc"}))
    assert step["action"] == "wait_for_human", step
    await human_only_refused(session)
    import anyio
    await anyio.to_thread.run_sync(person_confirms_in_the_control_room, binary, env, str(work))
    confirmed = structured(await session.call_tool("forge_cycle", {"state": "calc"}))
    assert confirmed["status"] == "AWAITING_WEBGPT_PR", confirmed
    assert confirmed["brief_confirmation"]["via"] == "tui", confirmed["brief_confirmation"]
    attached = structured(await session.call_tool("project_attach", {"repository": "acme/widget", "state": "calc"}))
    assert attached["status"] == "PROJECT_LINKED" and attached["state"].endswith("calc.json"), attached
    outside = await session.call_tool("project_attach", {"repository": "acme/widget", "state": "/etc/passwd.json"})
    assert is_error(outside), "only cycles the server knows"
    step = structured(await session.call_tool("forge_next", {"state": "calc"}))
    assert step["action"] == "send" and "## Confirmed user intent" in step["text"], step
    assert not is_error(await session.call_tool("forge_sent", {"state": "calc"}))
    conversation = "https://chatgpt.com/g/g-p-widget/c/calc-1"
    attached = structured(await session.call_tool("project_attach", {"repository": "acme/widget", "state": "calc",
                                                                     "conversation_url": conversation}))
    assert attached["conversation_url"] == conversation, attached
    number = emu.pr("acme", "widget", "calc-fix", CALC_BUGGY)
    pr = f"acme/widget#{number}"
    reply = structured(await session.call_tool(
        "forge_reply", {"state": "calc", "text": f"Opened it.\nPR_URL: https://github.com/acme/widget/pull/{number}"}))
    assert reply["status"] == "PR_FOUND" and reply["next"]["action"] == "run", reply
    smuggled = await session.call_tool("forge_test", {"state": "calc", "pr": pr, "profile": "project",
                                                      "commands": [["sh", "-c", "id"]]})
    assert is_error(smuggled) and "unknown field" in smuggled.content[0].text, smuggled
    failed = structured(await session.call_tool("forge_test", {"state": "calc", "pr": pr, "profile": "project"}))
    assert failed["status"] == "AWAITING_WEBGPT_FIX" and failed["report"]["status"] == "TEST_FAILED", failed
    assert failed["report"].get("comment_published") is True, failed["report"]
    comments = emu.admin("GET", f"repos/acme/widget/issues/{number}/comments")
    assert len(comments) == 1 and "TEST_FAILED" in comments[0]["body"], comments
    step = structured(await session.call_tool("forge_next", {"state": "calc"}))
    assert step["action"] == "send" and "TEST_FAILED" in step["text"], step
    assert not is_error(await session.call_tool("forge_sent", {"state": "calc"}))
    emu.admin("POST", "repos/acme/widget/commits",
              {"branch": "calc-fix", "files": {"calc.sh": CALC_FIXED}, "message": "fix: add"})
    reply = structured(await session.call_tool("forge_reply", {"state": "calc", "text": f"Pushed.\nPR_URL: {pr}"}))
    assert reply["status"] == "PR_FOUND" and reply["head_check"].startswith("changed:"), reply
    passed = structured(await session.call_tool("forge_test", {"state": "calc", "pr": pr}))
    assert passed["status"] == "READY_TO_MERGE" and passed["report"]["status"] == "TEST_PASSED", passed
    assert passed["iteration"] == 2, passed
    comments = emu.admin("GET", f"repos/acme/widget/issues/{number}/comments")
    assert len(comments) == 2 and "TEST_PASSED" in comments[1]["body"], comments
    assert not emu.admin("GET", f"repos/acme/widget/pulls/{number}").get("merged"), "nothing merges"
    await human_only_refused(session)


async def human_only_refused(session):
    """What is the person's has no tool, and no argument turns a tool into one: each call is
    refused (an unknown tool, or an unknown field) and changes nothing."""
    from mcp.shared.exceptions import MCPError
    before = structured(await session.call_tool("forge_cycle", {"state": "calc"}))
    for tool in ("forge_confirm", "forge_approve", "forge_unblock", "forge_extend", "forge_allow_hosts",
                 "forge_rerun", "forge_merge"):
        try:
            result = await session.call_tool(tool, {"state": "calc"})
        except MCPError as e:
            assert "tool" in str(e).lower(), (tool, e)
            continue
        assert is_error(result), (tool, result)
    for tool, args in [
        ("forge_start", {"state": "calc2", "request": "r", "webgpt_question": "q", "intent_brief": BRIEF,
                         "await_confirmation": False}),
        ("forge_start", {"state": "calc2", "request": "r", "webgpt_question": "q", "intent_brief": BRIEF,
                         "max_iterations": 99}),
        ("forge_test", {"state": "calc", "pr": "acme/widget#1", "allow_hosts": ["127.0.0.1:1"]}),
        ("forge_test", {"state": "calc", "pr": "acme/widget#1", "rerun": True}),
        ("forge_block", {"state": "calc", "status": "BLOCKED_MAX_ITERATIONS", "reason": "skip the cap"}),
    ]:
        result = await session.call_tool(tool, args)
        assert is_error(result), (tool, args, result)
    after = structured(await session.call_tool("forge_cycle", {"state": "calc"}))
    assert (after["status"], after["iteration"], after["max_iterations"]) == \
        (before["status"], before["iteration"], before["max_iterations"]), (before, after)


class Raw:
    """A raw pipe to `forgeloop mcp`, for what an SDK will not send."""

    def __init__(self, binary, env, cwd):
        self.proc = subprocess.Popen([binary, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def send(self, text):
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def next(self):
        message = self.lines.get(timeout=HANG_GUARD)
        assert message is not None, "the server closed stdout"
        return message


def raw_checks(binary, env, cwd):
    raw = Raw(binary, env, cwd)
    raw.send("{ this is not JSON")
    parse = raw.next()
    assert parse["id"] is None and parse["error"]["code"] == -32700, parse
    raw.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))
    assert raw.next()["result"]["serverInfo"]["name"] == "forgeloop"
    raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    raw.send("also not JSON }")
    assert raw.next()["error"]["code"] == -32700
    # A notification gets no reply: the next message is the answer to the ping after it.
    raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}))
    raw.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    pong = raw.next()
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}, pong
    raw.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"}))
    assert raw.next()["error"]["code"] == -32601
    raw.proc.stdin.close()
    assert raw.lines.get(timeout=HANG_GUARD) is None, "nothing unasked-for after EOF"
    assert raw.proc.wait(timeout=HANG_GUARD) == 0, "EOF ends the server with exit code 0"


def main():
    ensure_sdk()
    import anyio

    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / "target" / "debug" / "forgeloop"))
    binary = str(pathlib.Path(parser.parse_args().bin).resolve())
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.split()[-1]
    token = fresh_token()
    with tempfile.TemporaryDirectory(prefix="forgeloop-mcp-") as tmp:
        work = pathlib.Path(tmp)
        emu = Emulator(binary, work, token)
        try:
            emu.project("acme", "widget")
            emu.project("stranger", "tool")
            config = work / "config.toml"
            config.write_text(
                '[mcp]\nallowed_repositories = ["acme/widget"]\n'
                '[mcp.profiles.smoke]\ncommands = [["git", "diff", "--check"]]\n'
                '[mcp.profiles.default]\ncommands = [["bun", "test"], ["bun", "run", "typecheck"]]\n'
                '[mcp.profiles.project]\ncommands = [["sh", "test.sh"]]\n'
                f'[mcp.profiles.hang]\nwrite_paths = ["{work / "shared"}"]\n'
                f'commands = [["sh", "-c", "touch \'{work / "shared" / "started"}\'; sleep 300; :", "{HANG_TAG}"]]\n'
            )
            (work / "shared").mkdir()
            # The sandbox runs the command as an unprivileged account (nobody when forgeloop
            # is root), which must be able to write the directory it is granted.
            (work / "shared").chmod(0o1777)
            env = forgeloop_env(work, FORGELOOP_CONFIG=str(config), FORGELOOP_GITHUB_API=emu.api, GH_TOKEN=token)
            subprocess.run([binary, "forge", "--request", "Add dark mode", "--intent-brief", BRIEF,
                            "--webgpt-question", "Implement dark mode and open a PR.", "--state", "dark-mode"],
                           env=env, cwd=work, check=True, stdout=subprocess.DEVNULL)
            anyio.run(sdk_checks, binary, work, emu, token, env, version)
            raw_checks(binary, env, str(work))
        finally:
            emu.stop()
    print("mcp client test: ok")


if __name__ == "__main__":
    main()
