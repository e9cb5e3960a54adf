"""A tiny job site: ``python site.py [port]`` serves ``/search?city=&q=&page=`` as JSON.

Each (city, job) has a fixed number of postings, 10 a page.
"""

import json
import sys
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PAGE_SIZE = 10


def postings(city: str, job: str) -> int:
    """How many postings (city, job) has: 5 to 44, the same every time."""
    return 5 + zlib.crc32(f"{city}/{job}".encode()) % 40


def page(city: str, job: str, number: int) -> dict:
    total = postings(city, job)
    first = (number - 1) * PAGE_SIZE
    jobs = [
        {
            "id": f"{city}-{job}-{i}",
            "title": f"{job} #{i}",
            "company": f"Company {i % 7}",
            "salary": f"{10 + i % 20}-{20 + i % 20}K",
            "city": city,
            "url": f"/jobs/{city}-{job}-{i}",
        }
        for i in range(first, min(first + PAGE_SIZE, total))
    ]
    return {"total": total, "jobs": jobs}


class Search(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlsplit(self.path)
        query = {name: values[0] for name, values in parse_qs(url.query).items()}
        if url.path != "/search" or not query.get("city") or not query.get("q"):
            self.send_error(404)
            return
        body = json.dumps(page(query["city"], query["q"], int(query.get("page", 1)))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # quiet
        pass


def main(port: int) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", port), Search)
    print(f"tinyjobs on http://127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8765)
