"""The walls bench's CPU reading: every process below a crawl, as it runs."""

import subprocess
import sys

from bench.walls_passes import TreeCpu

BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3:\n    pass\n"


def test_the_cpu_of_a_process_below_the_root_is_counted_by_its_kind():
    # the root starts a child that spends 0.3 s of CPU; RUSAGE_CHILDREN in this process would count it only
    # if the root reaped it and was reaped in turn, which a crawl does not do for its browser's processes
    script = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {BUSY!r}])"
    root = subprocess.Popen([sys.executable, "-c", script])
    watch = TreeCpu(root.pid, lambda pid: "root" if pid == root.pid else "below", every=0.02)
    assert root.wait(60) == 0
    seconds = watch.stop()
    assert seconds["below"] >= 0.25
    assert seconds["root"] < seconds["below"]
