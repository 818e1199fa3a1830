"""Loopback servers that do not speak the OpenAI wire format, each counting what it receives.

`PageServer` answers every chat request with a web page (nginx's welcome page by default, with
status 200, as a web server at the wrong address does) or with any status and body given;
after `pages` requests (None: never) it answers as the OpenAI server does, like a proxy in front
of a model server that is starting up. `requests` counts the chat requests it received.

`refusing_port()` is a port on loopback where nothing listens: a connection to it is refused
(it never reaches a server, so there is nothing to count there; the client's own count is in
the outputs it stores), and no other server can take the port until the socket closes, but an
`OpenAIServer(port=...)` started on it later (both set SO_REUSEPORT), as a server started after
the first attempt.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from tests.servers.openai_server import OpenAIServer, Request, hold_port

NGINX_WELCOME = b"""<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto; font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
"""

BAD_GATEWAY = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n"
    b"</body>\r\n</html>\r\n"
)


class PageServer(OpenAIServer):
    def __init__(
        self,
        *,
        status: int = 200,
        page: bytes = NGINX_WELCOME,
        content_type: str = "text/html",
        pages: int | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.status, self.page, self.content_type = status, page, content_type
        self.pages = pages
        self.requests = 0  # chat requests received, pages and chat replies alike

    async def _chat(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        self.requests += 1
        if self.pages is not None and self.requests > self.pages:
            return await super()._chat(request, writer)
        head = [
            f"HTTP/1.1 {self.status} Status",
            f"Content-Type: {self.content_type}",
            f"Content-Length: {len(self.page)}",
            "Server: nginx/1.24.0",
            "Connection: keep-alive",
        ]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + self.page)
        await writer.drain()
        return True


def refusing_port(host: str = "127.0.0.1") -> socket.socket:
    """A bound socket that does not listen: connections to its port are refused. Close it to
    give the port up."""
    return hold_port(host)
