"""The client half of ``program_zygote``: ``python -I -S program_zygote_client.py [--terminal]
SOCKET PID_FILE ARGV...`` (no site: it starts in a few milliseconds). It hands this process's
standard streams, working directory, environment and ``ARGV`` (``-m MODULE ...`` or
``SCRIPT ...``) to the zygote (with ``--terminal`` the program makes the terminal on its stdin
its controlling terminal), writes the program's pid to ``PID_FILE`` (``-``: nowhere),
forwards the signals it is sent, and exits with the program's status, or dies by the signal
that ended the program."""

import array
import json
import os
import signal
import socket
import sys

FORWARDED = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)


def main() -> int:
    terminal = sys.argv[1] == "--terminal"
    words = sys.argv[1 + terminal :]
    socket_path, pid_path, argv = words[0], words[1], words[2:]
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "terminal": terminal}
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(socket_path)

    def forward(signum: int, frame: object) -> None:
        del frame
        conn.sendall(f"signal {signum}\n".encode())

    for signum in FORWARDED:
        signal.signal(signum, forward)
    fds = array.array("i", [0, 1, 2])
    data = json.dumps(request).encode() + b"\n"
    conn.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())])
    answer = b""
    while True:
        try:
            chunk = conn.recv(256)
        except InterruptedError:
            continue
        if not chunk:
            sys.stderr.write("program_zygote_client: the zygote went away\n")
            return 70
        answer += chunk
        while b"\n" in answer:
            line, answer = answer.split(b"\n", 1)
            word, value = line.split()
            if word == b"pid" and pid_path != "-":
                fd = os.open(pid_path + ".tmp", os.O_WRONLY | os.O_CREAT, 0o600)
                os.write(fd, value)
                os.close(fd)
                os.rename(pid_path + ".tmp", pid_path)
            elif word == b"exit":
                code = int(value)
                if code >= 0:
                    return code
                for signum in FORWARDED:
                    signal.signal(signum, signal.SIG_DFL)
                if -code not in (signal.SIGKILL, signal.SIGSTOP):
                    signal.signal(-code, signal.SIG_DFL)
                os.kill(os.getpid(), -code)  # as the program ended: by that signal
                return 128 - code


if __name__ == "__main__":
    sys.exit(main())
