"""The demo site: a small Twisted web server on 127.0.0.1 (no internet).

Its robots.txt has groups for two agents and ``*``, ``*`` and ``$``
wildcards, an Allow inside a Disallow, a Crawl-delay and a Sitemap; its pages
link into allowed and disallowed areas.

Usage: ``python demo_site.py [--port N] [--port-file PATH]`` (port 0: any free port).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from twisted.internet import reactor
from twisted.web import resource, server

ROBOTS_TXT = """\
# robots.txt of the demo site
User-agent: *
Disallow: /private/
Allow: /private/press/
Disallow: /*.pdf$
Disallow: /search

User-agent: DemoBot
User-agent: demobot-images
Disallow: /private/
Allow: /private/press/
Disallow: /*?sort=
Disallow: /*.pdf$
Crawl-delay: 0.2

User-agent: OtherBot
Disallow: /

Sitemap: {origin}/sitemap.xml
"""

LINKS = [
    "/about",
    "/products/",
    "/products/?sort=price",
    "/private/accounts",
    "/private/press/launch",
    "/files/report.pdf",
    "/files/report.pdf.html",
    "/search?q=robots",
    "/blog/2026/rfc9309",
]


def page(path: str) -> bytes:
    links = "".join(f'<li><a href="{link}">{link}</a></li>' for link in LINKS)
    return (
        f"<html><head><title>demo {path}</title></head>"
        f"<body><h1>{path}</h1><ul>{links}</ul></body></html>"
    ).encode()


class DemoSite(resource.Resource):
    isLeaf = True

    def render_GET(self, request: server.Request) -> bytes:
        path = request.path.decode()
        if path == "/robots.txt":
            request.setHeader(b"Content-Type", b"text/plain")
            host = request.getHost()
            return ROBOTS_TXT.format(origin=f"http://{host.host}:{host.port}").encode()
        request.setHeader(b"Content-Type", b"text/html")
        return page(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", type=Path)
    args = parser.parse_args()
    port = reactor.listenTCP(args.port, server.Site(DemoSite()), interface="127.0.0.1")
    number = port.getHost().port
    if args.port_file:
        args.port_file.write_text(str(number))
    print(f"demo site on http://127.0.0.1:{number}/", flush=True)
    reactor.run()


if __name__ == "__main__":
    main()
