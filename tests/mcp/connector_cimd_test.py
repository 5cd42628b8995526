#!/usr/bin/env python3
"""`forgeloop serve`'s client ID metadata documents (design §8.1; CIMD, the MCP authorization
specification's way for a client to be known without registering), driven by the official MCP
Python SDK: its OAuth client provider given `client_metadata_url=` against the real `serve`,
whose document fetch keeps its production guard (public addresses only, verified TLS).

That guard refuses this machine's addresses, so the document servers must sit at public ones
reachable offline: the script re-runs itself in user, network and mount namespaces of its own
(`unshare`), where 1.2.3.4 (public) and 10.77.0.1 (private) are put on the loopback interface
with local routes whose source is 127.0.0.1 (so, to serve, they are another machine), 5.6.7.8
keeps itself as source (this machine's own public address), and /etc/hosts is replaced by the
test's own (cimd.example → 1.2.3.4; mixed.example → 1.2.3.4 and 10.77.0.1). A CA and a server
certificate are made for the run (in its temporary directory, removed with it), and `serve`
trusts that CA only, through SSL_CERT_FILE. Nothing leaves the namespace.

Run from the repository root after `cargo build`:

    python3 tests/mcp/connector_cimd_test.py [--bin target/debug/forgeloop]

It installs the pinned SDK itself as tests/mcp/connector_test.py does (target/mcp-venv), needs
util-linux (`unshare`, `mount`), iproute2 (`ip`) and user namespaces (or root), fails when it
cannot make its namespace (never skips), and exits 0 when every check passed.

What it checks:
  1. the authorization server's metadata says client_id_metadata_document_supported;
  2. the SDK with a client_metadata_url: discovery, no registration, the pairing and consent
     pages naming the client by its claim apart from the URL it was read from, the token, a tool
     call; the grant records the URL as the client id and "<client_name> (<host>)"; a refresh
     reads no document;
  3. the refusals, each a 400 page and never a redirect: loopback, private, link-local, CGNAT,
     documentation and unresolvable hosts (literal or a name resolving to any such address
     among public ones) without a connection, the page saying one fixed sentence and serve's
     log the reason; this machine's own address, connected to and asked nothing; single-label
     hosts and URLs with user information, dot segments, a fragment, no path or 600 characters,
     never fetched nor repeated; a redirect (not followed), a large, slow, foreign,
     secret-holding, confidential, badly redirecting, non-JSON and missing document; the pages
     loaded as an image, a script's fetch or a frame (Sec-Fetch-Dest); a request without PKCE,
     refused before any fetch; an http:// client id (an unknown client, not a document); a
     redirect_uri the document does not list; a refused document on the pairing form's POST.
     Documents are kept as their Cache-Control says, failures not at all;
  4. none of that changes a file (home, serving.json included, and registry byte-identical);
  5. `[connector] client_documents = false`: not offered, and a URL client id refused unfetched.
"""

import argparse
import datetime
import html
import ipaddress
import json
import logging
import os
import pathlib
import shutil
import socket
import socketserver
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

# The world of the connector test: serve as the person reads it, the HTTP helpers, the SDK's
# storage, the snapshot of files.
from client_test import ensure_sdk, forgeloop_env  # noqa: E402
from connector_test import (  # noqa: E402
    INITIALIZE, REDIRECT_URI, Serve, Storage, bounded, call, hidden_fields, http, mcp_post, oauth_provider, pkce,
    post_form, snapshot,
)

INSIDE = "FORGELOOP_CIMD_NAMESPACE"  # set in the re-run inside the namespaces
PUBLIC = "1.2.3.4"  # a public address, on the loopback interface of this namespace only
PRIVATE = "10.77.0.1"
# Public too, but the namespace's own address as serve sees it: its connections to OWN leave from
# OWN, while those to PUBLIC and PRIVATE leave from 127.0.0.1 (their local routes say so), as
# connections to another machine would.
OWN = "5.6.7.8"
NAMED = "cimd.example"  # → PUBLIC, through the namespace's /etc/hosts
MIXED = "mixed.example"  # → PUBLIC and PRIVATE
HOSTS = f"127.0.0.1 localhost\n{PUBLIC} {NAMED}\n{PUBLIC} {MIXED}\n{PRIVATE} {MIXED}\n"
DOC_PATH = "/oauth/client.json"
DOC_URL = f"https://{PUBLIC}{DOC_PATH}"
CLIENT_NAME = "cimd-test"
SHOWN = f"{CLIENT_NAME} ({PUBLIC})"  # the document's name and the site it came from, as grants say it
SLOW_SECS = 7  # longer than serve's 5 s for a whole fetch
PUBLIC_ONLY = "client documents are fetched only from public addresses"
# What a caller is told of every address, name, connection, certificate or time failure.
UNREACHABLE = ("it could not be fetched over https from a public address "
               "(the name, the connection, the certificate or the time)")


# ---------------------------------------------------------------------------------------------
# The namespaces: a network where 1.2.3.4 is this machine, names the test decides.

def tool(name):
    found = shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin:/usr/bin:/bin")
    if not found:
        sys.exit(f"connector cimd test: FAILED: {name} is missing (util-linux and iproute2 are needed)")
    return found


def run_in_namespaces(binary):
    """This script again, in user, network and mount namespaces of its own; its exit code."""
    unshare = tool("unshare")
    command = [unshare, "--user", "--map-root-user", "--net", "--mount"]
    probe = subprocess.run([*command, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        sys.exit("connector cimd test: FAILED: cannot make a network namespace of its own "
                 f"({' '.join(command)}: {probe.stderr.strip()}). It needs unprivileged user namespaces "
                 "(sysctl kernel.unprivileged_userns_clone=1; on Ubuntu also "
                 "kernel.apparmor_restrict_unprivileged_userns=0) or root.")
    # Proxies of the outer network would be unreachable in there, and must not be asked.
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env[INSIDE] = "1"
    done = subprocess.run([*command, "--", sys.executable, str(pathlib.Path(__file__).resolve()), "--bin", binary],
                          env=env)
    return done.returncode if done.returncode >= 0 else 128 - done.returncode


def private_network(work):
    """1.2.3.4, 10.77.0.1 and 5.6.7.8 on lo, the first two reached from 127.0.0.1; the test's
    /etc/hosts; checked, never assumed."""
    ip = tool("ip")
    for args in (["link", "set", "lo", "up"], ["addr", "add", f"{PUBLIC}/32", "dev", "lo"],
                 ["addr", "add", f"{PRIVATE}/32", "dev", "lo"], ["addr", "add", f"{OWN}/32", "dev", "lo"]):
        subprocess.run([ip, *args], check=True)
    for address in (PUBLIC, PRIVATE):
        subprocess.run([ip, "route", "replace", "local", address, "dev", "lo", "table", "local", "proto", "kernel",
                        "scope", "host", "src", "127.0.0.1"], check=True)
    for address, source in ((PUBLIC, "127.0.0.1"), (OWN, OWN)):
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.connect((address, 9))
        assert probe.getsockname()[0] == source, f"a connection to {address} leaves from {probe.getsockname()[0]}"
        probe.close()
    hosts = work / "hosts"
    hosts.write_text(HOSTS)
    subprocess.run([tool("mount"), "--bind", str(hosts), "/etc/hosts"], check=True)
    resolved = {info[4][0] for info in socket.getaddrinfo(MIXED, 443, type=socket.SOCK_STREAM)}
    assert resolved == {PUBLIC, PRIVATE}, f"{MIXED} resolves to {resolved} in the namespace"


# ---------------------------------------------------------------------------------------------
# A CA of this run, and the document servers it vouches for.

def certificates(work):
    """(CA file, certificate file, key file): a CA and a server certificate for every address
    and name the test serves documents at. Made for this run, in its temporary directory."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def name(common):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    def usage(**set_):
        flags = dict.fromkeys(["digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
                               "key_agreement", "key_cert_sign", "crl_sign", "encipher_only", "decipher_only"], False)
        return x509.KeyUsage(**dict(flags, **set_))

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("forgeloop cimd test CA")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(usage(key_cert_sign=True, crl_sign=True), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    sans = [x509.IPAddress(ipaddress.ip_address(a)) for a in (PUBLIC, PRIVATE, OWN, "127.0.0.1", "::1")]
    sans += [x509.DNSName(n) for n in ("localhost", NAMED, MIXED)]
    leaf = (x509.CertificateBuilder().subject_name(name(NAMED)).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(usage(digital_signature=True), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    files = (work / "ca.pem", work / "server.pem", work / "server.key")
    files[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    files[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return files


def document(client_id, **fields):
    return json.dumps(dict({"client_id": client_id, "client_name": CLIENT_NAME, "redirect_uris": [REDIRECT_URI],
                            "token_endpoint_auth_method": "none"}, **fields)).encode()


def answer(path, host):
    """(status, headers, body, delay) of a document server for `path`, asked for at `host`: a
    document's own URL is https://<Host><path>, whichever address or name reached it."""
    own = f"https://{host}{path}"
    good = f"https://{host}{DOC_PATH}"
    kind = {"Content-Type": "application/json"}
    # The good document is never kept (each read fetches it: the counts below see every read);
    # the others say nothing, so a success would be kept five minutes and a failure never is.
    return {
        DOC_PATH: (200, dict(kind, **{"Cache-Control": "no-store"}), document(own), 0),
        "/kept.json": (200, dict(kind, **{"Cache-Control": "max-age=60"}), document(own), 0),
        "/moved.json": (302, {"Location": good}, b"", 0),
        "/big.json": (200, kind, document(own, padding="x" * 6000), 0),
        "/slow.json": (200, kind, document(own), SLOW_SECS),
        "/other.json": (200, kind, document(good), 0),
        "/secret.json": (200, kind, document(own, client_secret="s3cr3t"), 0),
        "/confidential.json": (200, kind, document(own, token_endpoint_auth_method="client_secret_basic"), 0),
        "/evil-redirect.json": (200, kind, document(own, redirect_uris=["http://evil.example/cb"]), 0),
        "/not-json.json": (200, {"Content-Type": "text/html"}, b"<html>a page, not a document</html>", 0),
    }.get(path, (404, {"Content-Type": "text/plain"}, b"not here", 0))


class DocumentHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        host = self.headers.get("Host", "")
        with self.server.lock:
            self.server.requests.append((self.path, host))
        status, headers, body, delay = answer(self.path, host)
        time.sleep(delay)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class DocumentServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """An HTTPS document server that counts the TCP connections it accepted (before TLS: a
    refused address must not even be connected to) and the requests it answered."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, tls):
        super().__init__(address, DocumentHandler)
        self.tls = tls
        self.lock = threading.Lock()
        self.connections = 0
        self.requests = []
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def get_request(self):
        accepted = super().get_request()
        with self.lock:
            self.connections += 1
        return accepted

    def finish_request(self, request, client_address):
        # TLS in the connection's own thread, not the accepting one.
        try:
            wrapped = self.tls.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return
        try:
            self.RequestHandlerClass(wrapped, client_address, self)
        finally:
            wrapped.close()

    def handle_error(self, request, client_address):
        pass  # serve gives up on the slow document: the late answer finds the connection closed

    def counts(self):
        with self.lock:
            return self.connections, [path for path, _ in self.requests]

    def hits(self, path):
        return self.counts()[1].count(path)

    def stop(self):
        self.shutdown()
        self.server_close()


# ---------------------------------------------------------------------------------------------
# /authorize by hand, as a browser (or a hostile caller) would ask it.

def authorize_url(server, client_id, redirect_uri=REDIRECT_URI):
    _, challenge = pkce()
    return f"{server.url}/authorize?" + urllib.parse.urlencode({
        "response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "code_challenge": challenge,
        "code_challenge_method": "S256", "state": "cimd", "resource": server.mcp_url})


def assert_refused(answer, why, what):
    """A refusal page: 400, the reason in the page, no redirect anywhere."""
    status, headers, page = answer
    text = html.unescape(page.decode())
    assert status == 400, (what, status, text)
    assert why in text, f"{what}: {why!r} is not in the page:\n{text}"
    assert headers.get("Location") is None, (what, headers.get("Location"))


def unusable(client_id, reason):
    return f"invalid_client: the client's metadata document at {client_id} cannot be used: {reason}"


def not_a_document(reason):
    return f"invalid_client: the client_id is not a document URL: {reason}"


def who(name, url):
    """How the pages name a client known by its document: its claim, and where it was read."""
    return (f"<strong><bdi>{name}</bdi></strong> asks to use forgeloop on this machine.</p>"
            f"<p class=\"note\">Its name is its own claim; its description was read from <code>{url}</code>").encode()


def person_pairs(server, authorization_url, code):
    """The person in the browser: the pairing page naming the client, the code, the consent
    page naming it too, Allow. Returns the redirect's (code, state)."""
    assert urllib.parse.parse_qs(urllib.parse.urlparse(authorization_url).query)["client_id"] == [DOC_URL]
    status, _, page = http("GET", authorization_url)
    assert status == 200, f"the pairing page answered {status}: {html.unescape(page.decode())}"
    assert who(CLIENT_NAME, DOC_URL) in page, page
    fields = hidden_fields(page)
    assert fields.get("client_id") == DOC_URL, fields
    fields["pairing_code"] = code
    status, _, consent = post_form(f"{server.url}/authorize", fields)
    assert status == 200, (status, consent)
    assert who(CLIENT_NAME, DOC_URL) in consent and b"acme/widget" in consent, consent
    assert b"If you allow it, it will be able to" in consent, consent
    status, headers, body = post_form(f"{server.url}/authorize/consent",
                                      {"ticket": hidden_fields(consent)["ticket"], "decision": "allow"})
    assert status == 302, (status, body)
    location = headers["Location"]
    assert location.startswith(REDIRECT_URI + "?"), location
    query = urllib.parse.parse_qs(urllib.parse.urlparse(location).query)
    return query["code"][0], query["state"][0]


# ---------------------------------------------------------------------------------------------
# The checks.

async def sdk_with_a_document(server, public):
    """The official client known by its document: returns its storage."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    # The SDK logs what it finds wrong with a server as warnings: there must be none.
    warnings = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warnings.append(record.getMessage())
    logging.getLogger("mcp").addHandler(handler)
    storage = Storage()
    provider = oauth_provider(server, storage, person_pairs, server.first_code, client_metadata_url=DOC_URL)
    sent = []  # every request the SDK made, the OAuth flow's included

    async def record(request):
        sent.append((request.method, request.url.path))

    before = public.hits(DOC_PATH)
    async with create_mcp_http_client(auth=provider) as client:
        client.event_hooks = {"request": [record], "response": []}
        async with streamable_http_client(server.mcp_url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                assert "list_repositories" in tools, tools
                repos = (await call(session, "list_repositories", {}))["repositories"]
                assert [r["repository"] for r in repos] == ["acme/widget"], repos
    logging.getLogger("mcp").removeHandler(handler)
    assert not warnings, f"the SDK found fault with the server: {warnings}"

    # The SDK used the URL as its client id: it asked for the metadata and a token, never /register.
    assert ("GET", "/.well-known/oauth-authorization-server") in sent and ("POST", "/token") in sent, sent
    assert not any(path == "/register" for _, path in sent), f"the SDK registered, with a document: {sent}"
    assert storage.client_info.client_id == DOC_URL, storage.client_info
    assert storage.tokens is not None and storage.tokens.refresh_token, "the SDK holds its tokens"
    # The document was read at both steps of the pairing page (it says no-store), with its own Host.
    assert public.hits(DOC_PATH) - before == 2, public.counts()
    assert all(host == PUBLIC for path, host in public.requests if path == DOC_PATH), public.requests
    return storage


def the_grant(server, work):
    """The grant names the URL as its client and the client as the person saw it."""
    grants = json.loads(server.grants_file().read_text())["grants"]
    assert len(grants) == 1, grants
    grant = grants[0]
    assert grant["client_id"] == DOC_URL and grant["client_name"] == SHOWN, grant
    assert grant["redirect_uris"] == [REDIRECT_URI], grant
    code, listed = server.cli("serve", "--grants")
    assert code == 0 and [g["client"] for g in listed["grants"]] == [SHOWN], listed
    journal = [json.loads(line) for line in (work / "home" / "connector" / "journal.jsonl").read_text().splitlines()]
    assert any(line.get("tool") == "list_repositories" and line["client"] == SHOWN for line in journal), journal


def refusals(server, public, private, loopback, own):
    """Every refusal: a 400 page with its reason, no redirect, no connection where none may be.
    What an address is, or why a connection failed, is in serve's log, never on the page."""
    local = f"127.0.0.1:{loopback.port}"
    never_fetched = [
        # Addresses that are not public, literal or resolved: refused before connecting.
        (f"https://{local}{DOC_PATH}", "127.0.0.1 is loopback"),
        (f"https://[::1]:{loopback.port}{DOC_PATH}", "::1 is loopback"),
        (f"https://{PRIVATE}{DOC_PATH}", f"{PRIVATE} is private (RFC 1918)"),
        # A name with one private address among public ones is refused whole, the public one
        # not connected to either.
        (f"https://{MIXED}{DOC_PATH}", f"{PRIVATE} is private (RFC 1918)"),
        ("https://169.254.169.254/latest/meta-data/iam", "169.254.169.254 is link-local (cloud metadata)"),
        ("https://100.64.0.1/client.json", "100.64.0.1 is shared address space (CGNAT, RFC 6598)"),
        ("https://203.0.113.7/client.json", "203.0.113.7 is a documentation address"),
        ("https://nowhere.invalid/client.json", "nowhere.invalid does not resolve"),
    ]
    for client_id, logged in never_fetched:
        connections = public.counts()[0]
        answer = http("GET", authorize_url(server, client_id))
        assert_refused(answer, unusable(client_id, UNREACHABLE), client_id)
        page = answer[2].decode()
        for secret in ("loopback", "RFC 1918", "cloud metadata", "CGNAT", "documentation", "resolve", PRIVATE):
            assert secret not in page.replace(client_id, ""), f"{client_id}: the page says {secret!r}: {page}"
        assert public.counts()[0] == connections, f"{client_id}: {PUBLIC} was connected to"
        if "resolve" not in logged:
            logged += f"; {PUBLIC_ONLY}"
        log = pathlib.Path(server.log.name).read_text()
        assert logged in log, f"serve's log does not say {logged!r}"

    not_documents = [
        # URLs that are not a document's: refused before anything is resolved, and the page
        # repeats none of them.
        (f"https://localhost:{loopback.port}{DOC_PATH}", "the host is a single name without a dot"),
        ("https://jenkins/job/x", "the host is a single name without a dot"),
        (f"https://evil@{PUBLIC}{DOC_PATH}", "the URL has user information"),
        (f"https://{PUBLIC}/oauth/../oauth/client.json", 'the URL\'s path has a "." or ".." segment'),
        (f"https://{PUBLIC}/oauth/%2e%2e/oauth/client.json", 'the URL\'s path has a "." or ".." segment'),
        (f"https://{PUBLIC}{DOC_PATH}#top", "the URL has a fragment"),
        (f"https://{PUBLIC}/", "the URL has no path"),
        ("https://pay.example/" + "x" * 600, "the URL is longer than 512 characters"),
    ]
    for client_id, why in not_documents:
        connections = public.counts()[0]
        answer = http("GET", authorize_url(server, client_id))
        assert_refused(answer, not_a_document(why), client_id)
        assert client_id not in html.unescape(answer[2].decode()), f"the page repeats {client_id}"
        assert public.counts()[0] == connections, f"{client_id}: {PUBLIC} was connected to"

    # This machine's own address is public, and still not fetched from: connected to (that is
    # how serve learns it), nothing asked.
    mine = f"https://{OWN}{DOC_PATH}"
    assert_refused(http("GET", authorize_url(server, mine)), unusable(mine, UNREACHABLE), mine)
    assert own.counts()[1] == [], f"serve asked its own address for a document: {own.counts()}"
    assert f"{OWN}:443 is this machine's own address" in pathlib.Path(server.log.name).read_text()

    fetched = [
        ("/moved.json", "it answered a redirect (302 Found), which is not followed"),
        ("/big.json", "it is larger than 5120 bytes"),
        ("/other.json", "the document's client_id is not its own URL"),
        ("/secret.json", "the document has a client secret; only public clients (with PKCE) are accepted"),
        ("/confidential.json", 'token_endpoint_auth_method must be "none"'),
        ("/evil-redirect.json", "redirect_uris: "),
        ("/not-json.json", "the document is not a JSON object"),
        ("/missing.json", "it answered 404 Not Found, not 200"),
        ("/slow.json", UNREACHABLE),
    ]
    for path, why in fetched:
        client_id = f"https://{PUBLIC}{path}"
        connections, paths = public.counts()
        began = time.monotonic()
        assert_refused(http("GET", authorize_url(server, client_id)), unusable(client_id, why), client_id)
        took = time.monotonic() - began
        after, paths_after = public.counts()
        # One GET, on one connection: a redirect is not followed, the good document not read.
        assert after == connections + 1 and paths_after[len(paths):] == [path], (path, paths_after[len(paths):])
        if path == "/slow.json":
            assert took < 6.5, f"a slow document held the page {took:.1f} s (serve allows a fetch 5 s)"

    # A failure is not kept: the same URL is fetched again.
    missing = f"https://{PUBLIC}/missing.json"
    assert_refused(http("GET", authorize_url(server, missing)), unusable(missing, "it answered 404"), missing)
    assert public.hits("/missing.json") == 2, public.counts()
    # A document that says max-age is kept: two pages, one fetch (by name, resolved by hosts).
    # The second is a browser's navigation, as its Sec-Fetch-Dest says.
    kept = f"https://{NAMED}/kept.json"
    for headers in ({}, {"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"}):
        status, _, page = http("GET", authorize_url(server, kept), headers=headers)
        assert status == 200 and who(CLIENT_NAME, kept) in page, (status, page)
    assert public.hits("/kept.json") == 1, public.counts()
    # A web page cannot make the person's browser load the pages as an image, a script's fetch
    # or a frame (to make serve fetch a document): refused before anything is read.
    fresh = f"https://{PUBLIC}/missing.json"
    for dest in ("image", "empty", "iframe", "script"):
        status, _, body = http("GET", authorize_url(server, fresh), headers={"Sec-Fetch-Dest": dest})
        assert status == 403 and b"open only as a page of their own" in body, (dest, status, body)
    assert public.hits("/missing.json") == 2, "a page loaded as an image made serve fetch"
    # A malformed request costs no fetch: PKCE is checked first.
    connections = public.counts()[0]
    no_pkce = authorize_url(server, f"https://{PUBLIC}/missing.json").replace("code_challenge_method=S256", "")
    assert_refused(http("GET", no_pkce), "PKCE with code_challenge_method S256 is required", "no PKCE")
    assert public.counts()[0] == connections, "a request without PKCE made serve fetch"

    # http:// is not a document: an unknown client, and nothing fetched.
    connections = public.counts()[0]
    plain = f"http://{PUBLIC}{DOC_PATH}"
    assert_refused(http("GET", authorize_url(server, plain)), "invalid_client: unknown client_id: register first",
                   plain)
    assert public.counts()[0] == connections, "an http:// client id was fetched"
    # The document's redirect URIs bind: another one is refused, on a page, not redirected to.
    elsewhere = "http://127.0.0.1:9/elsewhere"
    assert_refused(http("GET", authorize_url(server, DOC_URL, elsewhere)),
                   "invalid_request: redirect_uri is not one the client registered", elsewhere)
    # The pairing form's POST reads the document too, before the code is looked at.
    fields = hidden_fields(http("GET", authorize_url(server, f"https://{PUBLIC}/kept.json"))[2])
    assert fields, "the pairing page has its fields"
    bad = f"https://{PRIVATE}{DOC_PATH}"
    assert_refused(post_form(f"{server.url}/authorize", dict(fields, client_id=bad, pairing_code="AAAA-AAAA")),
                   unusable(bad, UNREACHABLE), "POST /authorize")

    assert loopback.counts() == (0, []), f"a loopback document server was connected to: {loopback.counts()}"
    assert private.counts() == (0, []), f"a private document server was connected to: {private.counts()}"


def refresh_reads_no_document(server, storage, public):
    connections = public.counts()[0]
    status, _, body = post_form(f"{server.url}/token", {
        "grant_type": "refresh_token", "refresh_token": storage.tokens.refresh_token, "client_id": DOC_URL,
        "resource": server.mcp_url})
    assert status == 200, body
    assert mcp_post(server.mcp_url, INITIALIZE, json.loads(body)["access_token"])[0] == 200
    assert public.counts()[0] == connections, "a refresh fetched the document again"


def documents_turned_off(binary, env, work, public):
    """`[connector] client_documents = false`: not offered, and a URL client id is refused
    without a fetch. Returns the stopped server."""
    config = work / "no-documents.toml"
    config.write_text("[connector]\nclient_documents = false\n")
    server = Serve(binary, dict(env, FORGELOOP_CONFIG=str(config)), work, work / "serve-off.log")
    status, _, body = http("GET", f"{server.url}/.well-known/oauth-authorization-server")
    assert status == 200 and "client_id_metadata_document_supported" not in json.loads(body), body
    connections = public.counts()[0]
    assert_refused(http("GET", authorize_url(server, DOC_URL)),
                   "invalid_client: this server does not accept client metadata documents: register first", "off")
    assert public.counts()[0] == connections, "a document was fetched with client_documents = false"
    server.stop()
    return server


def inside(binary):
    import anyio

    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="forgeloop-cimd-") as tmp:
        work = pathlib.Path(tmp)
        private_network(work)
        ca, cert, key = certificates(work)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        tls.set_alpn_protocols(["http/1.1"])
        public = DocumentServer((PUBLIC, 443), tls)
        private = DocumentServer((PRIVATE, 443), tls)
        loopback = DocumentServer(("127.0.0.1", 0), tls)
        own = DocumentServer((OWN, 443), tls)
        # The test's CA and no other: serve's fetch verifies against what SSL_CERT_FILE names;
        # each request and each refused document in serve.log.
        env = forgeloop_env(work, SSL_CERT_FILE=str(ca), FORGELOOP_LOG="info")
        subprocess.run([binary, "project", "bind", "--repository", "acme/widget", "--project-url",
                        "https://chatgpt.com/g/g-p-6743a1b2c3d4e5f6/project", "--project-name", "widget"],
                       env=env, cwd=work, check=True, stdout=subprocess.DEVNULL)
        server = None
        try:
            server = Serve(binary, env, work, work / "serve.log")
            status, _, body = http("GET", f"{server.url}/.well-known/oauth-authorization-server")
            assert status == 200 and json.loads(body).get("client_id_metadata_document_supported") is True, body

            storage = anyio.run(bounded, sdk_with_a_document, server, public)
            assert "path=/register" not in pathlib.Path(server.log.name).read_text(), "serve saw a registration"
            server.code_other_than(server.first_code)  # the spent code is replaced before the snapshot
            the_grant(server, work)

            before = snapshot(work / "home", work / "registry")
            refusals(server, public, private, loopback, own)
            after = snapshot(work / "home", work / "registry")
            changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
            assert not changed, f"requests without a valid grant changed files: {changed}"

            refresh_reads_no_document(server, storage, public)
            server.stop()
            server = documents_turned_off(binary, env, work, public)
        except BaseException:
            if server is not None and server.proc.poll() is None:
                server.proc.kill()
            log = work / "serve.log"
            if log.exists():
                sys.stderr.write("---- serve.log (tail) ----\n" + log.read_text()[-20000:])
            raise
        finally:
            for documents in (public, private, loopback, own):
                documents.stop()
    print(f"connector cimd test: ok ({time.monotonic() - began:.0f} s)")


def main():
    ensure_sdk(__file__)
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / "target" / "debug" / "forgeloop"))
    binary = str(pathlib.Path(parser.parse_args().bin).resolve())
    if os.environ.get(INSIDE) != "1":
        sys.exit(run_in_namespaces(binary))
    inside(binary)


if __name__ == "__main__":
    main()
