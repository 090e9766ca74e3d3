# expect: rejected | did not write
# expect-cpu: rejected | did not write
# Forging the verdict, every door at once, at import: a perfect reply into the runner's own reply pipe (its
# file descriptor is on this process's command line), a perfect final line into the judge's stdout through
# /proc/<judge>/fd/1, and a look at the judge's environment. Then an honest kernel, as if nothing happened.
import os

from base import custom_kernel as honest

REPLY = b'{"ready": true, "event_us": 1.0, "wall_us": 2.0, "problem": "", "escaped": false, "tamper": ""}\n'
FINAL = b'{"final": {"status": "ok", "score": 1.0, "shapes": [], "tests": {"passed": 1, "total": 1}}}\n'


def _attempt(what, action):
    try:
        action()
        print(f"forge: {what}: done", flush=True)
    except OSError as exc:
        print(f"forge: {what}: {exc.strerror}", flush=True)


def _write_path(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _read_path(path):
    with open(path, "rb") as f:
        f.read(64)


args = open("/proc/self/cmdline", "rb").read().split(b"\0")
judge = os.getppid()
_attempt(f"/proc/{judge}/fd/1", lambda: _write_path(f"/proc/{judge}/fd/1", FINAL))
_attempt(f"/proc/{judge}/environ", lambda: _read_path(f"/proc/{judge}/environ"))
if b"--ctl-out" in args:
    _attempt("reply pipe", lambda: os.write(int(args[args.index(b"--ctl-out") + 1]), REPLY))


def custom_kernel(A):
    return honest(A)
