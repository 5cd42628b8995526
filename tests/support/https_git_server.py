#!/usr/bin/env python3
"""Test-only HTTPS smart-git server: http.server + ssl in front of `git http-backend` (CGI).

usage: https_git_server.py ROOT CERT KEY PORTFILE
  ROOT      directory holding bare repositories (GIT_PROJECT_ROOT)
  PORTFILE  the port chosen on 127.0.0.1 is written here (atomically) once listening
env:
  HTTPS_GIT_SERVER_TOKEN  if set, every request needs HTTP Basic auth whose password equals it
                          (any user name); otherwise 401 with a Basic challenge, like GitHub
                          for a private repository. Passed by env so it is not visible in ps.
  HTTPS_GIT_SERVER_REDIRECT  `PREFIX=TARGET`: a request whose path starts with PREFIX/ is
                          answered 301 with Location TARGET + the rest of the path and the
                          query (a renamed repository), before any auth check
Logs one line per request to stderr, plus `auth user=<name> ok=<bool>` for every request that
carried credentials (the tests count these to check how often the client retried).
"""
import base64
import hmac
import os
import ssl
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

ROOT, CERT, KEY, PORTFILE = sys.argv[1:5]
TOKEN = os.environ.get("HTTPS_GIT_SERVER_TOKEN") or None
REDIRECT = os.environ.get("HTTPS_GIT_SERVER_REDIRECT") or None


def log(line):
    sys.stderr.write("srv: " + line + "\n")
    sys.stderr.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        log(fmt % args)

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, status, headers, body):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _credentials(self):
        """(user, password) from a Basic Authorization header, or None."""
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Basic "):
            return None
        try:
            user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return ("", "")
        return (user, password)

    def _handle(self):
        body = self._body()
        if REDIRECT is not None:
            prefix, _, target = REDIRECT.partition("=")
            if self.path.startswith(prefix + "/"):
                log(f"redirect {self.path}")
                return self._send(301, [("Location", target + self.path[len(prefix):])], b"moved\n")
        creds = self._credentials()
        user = ""
        if creds is not None:
            user = creds[0]
            ok = TOKEN is not None and hmac.compare_digest(creds[1].encode(), TOKEN.encode())
            log(f"auth user={user} ok={ok}")
        if TOKEN is not None and (creds is None or not hmac.compare_digest(creds[1].encode(), TOKEN.encode())):
            return self._send(401, [("WWW-Authenticate", 'Basic realm="git"')], b"auth required\n")
        url = urlsplit(self.path)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": ROOT,
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": url.path,
            "QUERY_STRING": url.query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "REMOTE_USER": user,
            "SERVER_PROTOCOL": "HTTP/1.1",
            "GATEWAY_INTERFACE": "CGI/1.1",
        }
        for header, var in (("Git-Protocol", "GIT_PROTOCOL"), ("Content-Encoding", "HTTP_CONTENT_ENCODING")):
            if self.headers.get(header):
                env[var] = self.headers[header]
        proc = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
        if proc.stderr:
            log("http-backend: " + proc.stderr.decode(errors="replace").strip())
        out = proc.stdout
        sep = out.find(b"\r\n\r\n")
        if sep >= 0:
            head, rest = out[:sep], out[sep + 4:]
        else:
            head, _, rest = out.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            elif key:
                headers.append((key, value.strip()))
        self._send(status, headers, rest)

    do_GET = do_POST = _handle


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
log(f"listening on 127.0.0.1:{server.server_address[1]}")
server.serve_forever()
