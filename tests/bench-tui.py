#!/usr/bin/env python3
"""Time to the TUI's first frame and its idle memory (docs/performance.md).

    tests/bench-tui.py [path/to/agent] [runs]

Runs `agent` (no command: the TUI) on a pseudo-terminal of 80x24 in a fresh
AGENT_HOME whose built-in components are already compiled and cached (a first
`agent skill list` fills the cache), and measures, per run, the time from
spawning the process to the first frame on the terminal (the status line's
`/help` written), then the resident memory (VmRSS) after two seconds idle.
Prints the median, min and max. Needs Linux (/proc) and Python 3.
"""
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/agent")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20

with tempfile.TemporaryDirectory() as tmp:
    home, project = os.path.join(tmp, "home"), os.path.join(tmp, "project")
    os.makedirs(home)
    os.makedirs(project)
    env = dict(os.environ, AGENT_HOME=home, NO_COLOR="1", ANTHROPIC_API_KEY="bench", TERM="xterm-256color")
    env.pop("CI", None)
    subprocess.run([binary, "skill", "list"], cwd=project, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    frames, rss = [], []
    for _ in range(runs):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        start = time.perf_counter()
        p = subprocess.Popen([binary], cwd=project, env=env, stdin=slave, stdout=slave,
                             stderr=slave, close_fds=True, start_new_session=True)
        os.close(slave)
        seen = b""
        first = None
        while first is None:
            r, _, _ = select.select([master], [], [], 10)
            if not r:
                raise SystemExit("no first frame within 10 s:\n" + seen.decode(errors="replace"))
            chunk = os.read(master, 65536)
            seen += chunk
            if b"/help" in seen:
                first = time.perf_counter() - start
        frames.append(first * 1000)
        deadline = time.time() + 2
        while time.time() < deadline:  # keep draining the terminal while idle
            r, _, _ = select.select([master], [], [], 0.1)
            if r:
                os.read(master, 65536)
        with open(f"/proc/{p.pid}/status") as f:
            kb = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        rss.append(kb / 1024)
        os.write(master, b"\x04")  # Ctrl-D on an empty prompt quits
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            raise SystemExit("the TUI did not quit on Ctrl-D")
        os.close(master)

def show(name, xs, unit):
    print(f"{name}: median {statistics.median(xs):.1f} {unit} (min {min(xs):.1f}, max {max(xs):.1f}, {len(xs)} runs)")

show("time to first frame", frames, "ms")
show("idle RSS", rss, "MB")
