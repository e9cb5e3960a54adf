"""A real scrapyd for the e2e tests, and farm deployed to it with the real scrapyd-deploy.

The scrapyd runs as it would on a crawl host where farm is only deployed:

- its own directory, scrapyd.conf (eggs, logs, jobs and dbs dirs in it) and a free port on 127.0.0.1;
- a Python that has farm's dependencies (this venv's site-packages, through a .pth line) but not farm:
  a job, and the state writer process it starts, can only import farm from the egg;
- an impostor ``farm/`` package in its working directory, which records being imported;
- no FARM_* variable in its environment: a job has only the settings schedule.json gives it;
- PYTHONSAFEPATH=1, as the README says to start scrapyd: scrapyd runs every job (and the
  ``list`` that checks an uploaded egg) as ``python -m scrapyd.runner``, which puts the working
  directory first on sys.path, ahead of the egg, which scrapyd appends last.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.parse
import urllib.request
import venv
from pathlib import Path

from tests.e2e.harness import REPO, stop

BIN = Path(sys.executable).parent
IMPOSTOR = 'open(__file__ + ".imported", "w").close()\nraise ImportError("the impostor farm/ was imported")\n'


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def deps_only_python(root: Path) -> Path:
    """A venv whose site-packages point at this venv's, without running its .pth files: every
    dependency imports, farm (installed here in editable mode, through a .pth hook) does not."""
    venv.create(root, with_pip=False)
    purelib = Path(sysconfig.get_paths(vars={"base": str(root), "platbase": str(root)})["purelib"])
    (purelib / "farm-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return root / "bin" / "python"


def descendants(pid: int) -> list[int]:
    """The pids of every live process under ``pid`` (children first)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Scrapyd:
    def __init__(self, root: Path):
        self.root = root
        self.home = root / "scrapyd"  # its working directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = None
        self.version = None

    # --- the server -------------------------------------------------------------------------------

    def start(self, timeout=30):
        self.python = deps_only_python(self.root / "venv")
        self.home.mkdir()
        (self.home / "farm").mkdir()
        (self.home / "farm" / "__init__.py").write_text(IMPOSTOR)
        dirs = {name: self.home / name for name in ("eggs", "logs", "jobs", "dbs")}
        (self.home / "scrapyd.conf").write_text(
            "[scrapyd]\nbind_address = 127.0.0.1\n"
            f"http_port = {self.port}\n"
            + "".join(f"{name}_dir = {path}\n" for name, path in dirs.items())
            + "poll_interval = 0.2\nmax_proc = 4\n"
        )
        env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
        env.pop("PYTHONPATH", None)
        # HOME: no ~/.scrapyd.conf of the machine's; PYTHONFAULTHANDLER: a job that hangs is sent
        # SIGABRT at the end and its threads' stacks go to scrapyd's log
        env.update(PYTHONSAFEPATH="1", HOME=str(self.root), XDG_CONFIG_HOME=str(self.root), PYTHONFAULTHANDLER="1")
        check = subprocess.run(
            [self.python, "-c", "import farm"], cwd=self.home, env=env, capture_output=True, text=True
        )
        assert "No module named 'farm'" in check.stderr, f"farm is importable without the egg: {check.stderr}"
        self.log = open(self.root / "scrapyd.out", "ab")
        self.process = subprocess.Popen(
            [self.python, "-m", "scrapyd"], cwd=self.home, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.get("daemonstatus.json")["status"] == "ok":
                    return self
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"scrapyd did not start:\n{self.output()[-3000:]}")
            time.sleep(0.1)

    def stop(self):
        """End every job process still running (SIGABRT: their stacks go to scrapyd's log, then
        SIGKILL), then scrapyd itself; fail if there were such jobs or scrapyd does not end."""
        if self.process is None:
            return
        lingering = self.end_jobs()
        self.process.terminate()
        try:
            stop(self.process, 30)
        finally:
            self.log.close()
        assert not lingering, f"job processes were still running at the end: {lingering}"

    def end_jobs(self) -> list[int]:
        """Kill what still runs under scrapyd (none, when every job has finished); their pids."""
        lingering = descendants(self.process.pid)
        for pid in lingering:
            _signal(pid, signal.SIGABRT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(pid in descendants(self.process.pid) for pid in lingering):
            time.sleep(0.1)
        for pid in descendants(self.process.pid):
            _signal(pid, signal.SIGKILL)
        return lingering

    def output(self) -> str:
        return (self.root / "scrapyd.out").read_text(errors="replace")

    def impostor_imported(self) -> bool:
        return (self.home / "farm" / "__init__.py.imported").exists()

    # --- deploying ----------------------------------------------------------------------------------

    def deploy(self, version="1", timeout=120):
        """scrapyd-deploy from the repository, to a target that a scrapy.cfg in XDG_CONFIG_HOME
        adds beside the project's own [deploy] (scrapy.cfg files are merged)."""
        config = self.root / "deploy-config"
        config.mkdir(exist_ok=True)
        (config / "scrapy.cfg").write_text(f"[deploy:test]\nurl = {self.url}\n")
        env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
        result = subprocess.run(
            [BIN / "scrapyd-deploy", "test", "--version", version],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        answer = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
        assert result.returncode == 0 and '"status": "ok"' in answer, f"{result.stdout}\n{result.stderr}"
        self.version = version
        return json.loads(answer)

    def egg(self) -> Path:
        return self.home / "eggs" / "farm" / f"{self.version}.egg"

    # --- the JSON API -------------------------------------------------------------------------------

    def get(self, endpoint, **params):
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.url}/{endpoint}{query}", timeout=30) as response:
            return json.loads(response.read())

    def post(self, endpoint, **fields):
        # urlencode escapes the "+" of mysql+pymysql, which sent as is would reach scrapyd as a space
        body = urllib.parse.urlencode(fields, doseq=True).encode()
        with urllib.request.urlopen(f"{self.url}/{endpoint}", body, timeout=60) as response:
            answer = json.loads(response.read())
        assert answer["status"] == "ok", answer
        return answer

    def schedule(self, spider, jobid, settings: dict):
        """schedule.json, each setting as ``setting=NAME=value``."""
        return self.post(
            "schedule.json",
            project="farm",
            spider=spider,
            jobid=jobid,
            setting=[f"{name}={value}" for name, value in settings.items()],
        )

    def cancel(self, jobid):
        return self.post("cancel.json", project="farm", job=jobid)

    def jobs(self, state, jobid):
        return [job for job in self.get("listjobs.json", project="farm")[state] if job["id"] == jobid]

    def wait_finished(self, jobids, timeout, times=1):
        """Poll listjobs.json until each job has finished ``times`` times."""
        deadline = time.monotonic() + timeout
        while not all(len(self.jobs("finished", jobid)) >= times for jobid in jobids):
            if time.monotonic() > deadline:
                raise AssertionError(f"jobs {jobids} not finished within {timeout}s: {self.get('listjobs.json')}")
            time.sleep(0.2)

    def job_log(self, spider, jobid) -> str:
        return (self.home / "logs" / "farm" / spider / f"{jobid}.log").read_text(errors="replace")

    def job_dir(self, spider, jobid) -> Path:
        return self.home / "jobs" / "farm" / spider / jobid

    def died(self, jobid) -> list[str]:
        """scrapyd's lines for a job process that exited non-zero."""
        return [line for line in self.output().splitlines() if "Process died" in line and f"job='{jobid}'" in line]


def _signal(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def last_stat(log, name) -> int:
    """A stat from the last stats dump in a job's log (a resumed job appends to its log), or 0."""
    found = re.findall(rf"'{re.escape(name)}': (\d+)", log)
    return int(found[-1]) if found else 0
