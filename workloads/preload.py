"""A preloaded job server: PyTorch and timm imported once, each job forked from it.

Importing PyTorch and timm takes 9-15 s on the lent H200 hosts, longer than the
measurement window, and every fresh interpreter pays it again. With the runner's
`--preload`, the runner starts one server per invocation

    python3 workloads/train.py --serve SOCKET

which imports what a job needs (PyTorch, timm, torchvision's transforms, PIL, numpy and the
job's own modules) without touching CUDA, says `serving PID SECONDS` on its stdout, and
listens on the Unix socket SOCKET. Each job is then started as

    python3 workloads/train.py --via SOCKET --job-file job-N.json

a small client that imports nothing heavy: it hands the server its argument list, its
environment, its working directory and its standard input, output and error (as file
descriptors over the socket), and the server forks a child that runs `train.py`'s `main`
with them, in the client's process group (so the runner's signals to the job's group reach
it and its loader workers). The child sets the job's environment before its first CUDA call
(MPS pipe directory, CUDA_VISIBLE_DEVICES, thread percentage), so the mode applies as with a
fresh interpreter. The client prints nothing, waits, and exits as the child did (its exit
code, or the signal that killed it). The child's pid is in its `hello` event.

Environment read when a module is imported (say OMP_NUM_THREADS) comes from the server's
environment, which the runner gives the same `--job-env` as the jobs.

The server is single-threaded (a fork from a process with other threads could inherit a
held lock): one select loop over the socket, its clients and its stdin. It ends when its
stdin closes (the runner is done or died) and then kills the jobs still running. A client
whose connection breaks has its job killed.

Standard library only at import time; the heavy modules are imported by `serve`.
"""

import array
import json
import os
import selectors
import signal
import socket
import sys
import time

MAX_REQUEST = 1 << 20
EXIT_NO_SERVER = 70


def _send_line(sock, obj):
    try:
        sock.sendall((json.dumps(obj) + "\n").encode())
        return True
    except OSError:
        return False


def _recv_request(conn):
    """The client's request and its three descriptors; raises ValueError on a bad one."""
    data, fds = b"", []
    while not data.endswith(b"\n"):
        msg, anc, _flags, _addr = conn.recvmsg(65536, socket.CMSG_SPACE(3 * array.array("i").itemsize))
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(payload[: len(payload) - (len(payload) % a.itemsize)])
                fds.extend(a)
        if not msg:
            break
        data += msg
        if len(data) > MAX_REQUEST:
            raise ValueError("request too long")
    try:
        req = json.loads(data.decode())
        argv, env, cwd, pgid = req["argv"], req["env"], req["cwd"], int(req["pgid"])
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
            raise ValueError("argv must be a list of strings")
        if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
            raise ValueError("env must map strings to strings")
    except (KeyError, TypeError, json.JSONDecodeError, UnicodeDecodeError) as e:
        for fd in fds:
            os.close(fd)
        raise ValueError(f"bad request: {e}") from None
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        raise ValueError(f"expected 3 descriptors, got {len(fds)}")
    return argv, env, cwd, pgid, fds


def _die_with_parent():
    """PR_SET_PDEATHSIG(SIGKILL): the child dies with the server."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _child(main, argv, env, cwd, pgid, fds, keep_closed):
    """In the forked child: become the job. Never returns."""
    code = 1
    try:
        for fd in keep_closed:
            try:
                os.close(fd)
            except OSError:
                pass
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGPIPE, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            os.setpgid(0, pgid)
        except OSError:
            os.setpgid(0, 0)
        _die_with_parent()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.argv = list(argv)
        code = main(argv[1:])
        code = 0 if code is None else int(code)
        # What a fresh interpreter's exit would do before os._exit skips it: free the job's
        # data loaders, whose __del__ stops and joins their worker processes (left alone,
        # the workers linger until their watchdog sees the job gone, and an MPS daemon
        # waits for them to quit).
        import gc
        gc.collect()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - the child must never return into the server
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        os._exit(code)


def preload_modules():
    """Imports what a job needs, without initialising CUDA; returns the seconds it took."""
    t0 = time.monotonic()
    import numpy  # noqa: F401
    import PIL.Image  # noqa: F401
    import torch
    import torchvision.transforms  # noqa: F401
    import timm
    import timm.data  # noqa: F401
    import timm.optim  # noqa: F401
    import datagen  # noqa: F401
    import events  # noqa: F401
    import itertime  # noqa: F401
    import jobspec  # noqa: F401
    if torch.cuda.is_initialized():
        raise RuntimeError("CUDA was initialised while preloading; jobs cannot be forked")
    _ = timm.__version__
    return time.monotonic() - t0


def serve(path, main):
    """Runs the server on the socket `path` until stdin closes; returns the exit code."""
    seconds = preload_modules()
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(64)
    listener.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "listen")
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
    jobs = {}  # pid -> client connection
    print(f"serving {os.getpid()} {seconds:.3f}", flush=True)

    def kill_all():
        for pid in list(jobs):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    try:
        while True:
            for key, _ in sel.select(timeout=0.02):
                if key.data == "stdin":
                    if not os.read(sys.stdin.fileno(), 4096):
                        return 0
                elif key.data == "listen":
                    try:
                        conn, _ = listener.accept()
                    except BlockingIOError:
                        continue
                    conn.setblocking(True)
                    conn.settimeout(5)
                    try:
                        argv, env, cwd, pgid, fds = _recv_request(conn)
                    except (ValueError, OSError) as e:
                        _send_line(conn, {"error": str(e)})
                        conn.close()
                        continue
                    open_fds = [listener.fileno(), sel.fileno()] + [c.fileno() for c in jobs.values()]
                    pid = os.fork()
                    if pid == 0:
                        conn_fd = conn.fileno()
                        _child(main, argv, env, cwd, pgid, fds, open_fds + [conn_fd])
                    for fd in fds:
                        os.close(fd)
                    conn.settimeout(None)
                    jobs[pid] = conn
                    sel.register(conn, selectors.EVENT_READ, pid)
                    _send_line(conn, {"pid": pid})
                else:  # a client spoke or hung up: it never speaks, so it is gone
                    pid = key.data
                    conn = key.fileobj
                    try:
                        gone = not conn.recv(1)
                    except OSError:
                        gone = True
                    if gone and pid in jobs:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
            while jobs:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                conn = jobs.pop(pid, None)
                if conn is not None:
                    sel.unregister(conn)
                    _send_line(conn, {"status": status})
                    conn.close()
    finally:
        kill_all()
        try:
            os.unlink(path)
        except OSError:
            pass


def client(path, argv):
    """Hands this process's job to the server at `path`; returns the exit code to exit with
    (or kills itself with the child's signal)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as e:
        print(f"train.py: cannot reach the job server at {path}: {e.strerror or e}", file=sys.stderr)
        return EXIT_NO_SERVER
    req = {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(), "pgid": os.getpgid(0)}
    fds = array.array("i", [0, 1, 2])
    sock.sendmsg([(json.dumps(req) + "\n").encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())])
    reader = sock.makefile("r", encoding="utf-8")
    status = None
    for line in reader:
        msg = json.loads(line)
        if "error" in msg:
            print(f"train.py: the job server refused the job: {msg['error']}", file=sys.stderr)
            return EXIT_NO_SERVER
        if "status" in msg:
            status = int(msg["status"])
            break
    if status is None:
        print("train.py: the job server went away before the job ended", file=sys.stderr)
        return EXIT_NO_SERVER
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        # SIGKILL and SIGSTOP take no handler (setting one is EINVAL); the others might have one.
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)
