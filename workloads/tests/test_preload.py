import os
import signal
import subprocess
import sys
import textwrap
import time
import unittest

from workloads.tests.util import WORKLOADS, tempdir

# A server whose "job" echoes what it was given, instead of training (no PyTorch here).
SERVER = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, %(workloads)r)
    import preload
    preload.preload_modules = lambda: 0.0

    def main(argv):
        line = sys.stdin.readline().strip()
        with open(os.environ["PIDFILE"], "w") as f:
            f.write(f"{os.getpid()} {os.getpgid(0)}")
        print(f"argv={argv} line={line} env={os.environ.get('JOBVAR')} cwd={os.getcwd()}", flush=True)
        print("to stderr", file=sys.stderr, flush=True)
        if argv and argv[0] == "sleep":
            time.sleep(60)
        if argv and argv[0] == "signal":
            os.kill(os.getpid(), signal.SIGTERM)
        if argv and argv[0] == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        return 3

    import signal
    sys.exit(preload.serve(sys.argv[1], main))
""")

CLIENT = "import sys; sys.path.insert(0, %r); import preload; sys.exit(preload.client(sys.argv[1], sys.argv[2:]))"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class PreloadTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempdir(self)
        self.sock = os.path.join(self.dir, "s")
        self.server = subprocess.Popen([sys.executable, "-c", SERVER % {"workloads": WORKLOADS}, self.sock],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.addCleanup(self.stop_server)
        line = self.server.stdout.readline()
        self.assertTrue(line.startswith("serving "), line)

    def stop_server(self):
        if self.server.poll() is None:
            self.server.stdin.close()
            try:
                self.server.wait(5)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        self.server.stdout.close()

    def client(self, *args, **kw):
        env = dict(os.environ, JOBVAR="from-client", PIDFILE=os.path.join(self.dir, "pid"))
        return subprocess.Popen([sys.executable, "-c", CLIENT % WORKLOADS, self.sock, "train.py", *args],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, cwd=self.dir, process_group=0, **kw)

    def test_the_job_gets_the_clients_stdio_env_cwd_and_exit_code(self):
        c = self.client("a", "b")
        out, err = c.communicate("release\n", timeout=20)
        self.assertEqual(c.returncode, 3)
        self.assertIn(f"argv=['a', 'b'] line=release env=from-client cwd={os.path.realpath(self.dir)}", out)
        self.assertIn("to stderr", err)
        pid, pgid = map(int, read(os.path.join(self.dir, "pid")).split())
        self.assertNotEqual(pid, c.pid)
        self.assertEqual(pgid, c.pid)  # the client's own group, as the runner makes it

    def test_a_job_killed_by_a_signal_kills_its_client_alike(self):
        c = self.client("signal")
        c.communicate("x\n", timeout=20)
        self.assertEqual(c.returncode, -signal.SIGTERM)

    def test_a_job_killed_by_sigkill_kills_its_client_alike(self):
        c = self.client("sigkill")
        _, err = c.communicate("x\n", timeout=20)
        self.assertEqual(c.returncode, -signal.SIGKILL, err)
        self.assertNotIn("Error", err)

    def test_the_job_dies_when_its_client_is_killed(self):
        c = self.client("sleep")
        c.stdin.write("x\n")
        c.stdin.flush()
        pidfile = os.path.join(self.dir, "pid")
        deadline = time.monotonic() + 20
        while not os.path.exists(pidfile) or not read(pidfile):
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        pid = int(read(pidfile).split()[0])
        c.kill()
        c.communicate(timeout=10)
        deadline = time.monotonic() + 10
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            self.assertLess(time.monotonic(), deadline, "the job outlived its client")
            time.sleep(0.05)

    def test_no_server_is_a_clear_error(self):
        c = subprocess.run([sys.executable, "-c", CLIENT % WORKLOADS, os.path.join(self.dir, "none"), "x"],
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(c.returncode, 70)
        self.assertIn("cannot reach the job server", c.stderr)


if __name__ == "__main__":
    unittest.main()
