"""The client half of ``docs_cli_zygote``: run by the ``rho-agent`` shell function of a docs
bash block (``python -I -S``: no site, so it starts in a few milliseconds). It hands this
process's standard streams, working directory, environment (without the function's own
variables) and arguments to the zygote, and exits with the command's status (the zygote
says ``pid N``, then ``exit CODE``: ``tests/cli/zygote_serve.py``)."""

import array
import json
import os
import socket
import sys

OWN = ("BASH_FUNC_rho-agent%%", "RHO_DOCS_PYTHON", "RHO_DOCS_CLIENT", "RHO_DOCS_CLI_SOCKET")


def main() -> int:
    env = {k: v for k, v in os.environ.items() if k not in OWN}
    request = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": env}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(os.environ["RHO_DOCS_CLI_SOCKET"])
        fds = array.array("i", [0, 1, 2])
        data = json.dumps(request).encode() + b"\n"
        conn.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())])
        answer = b""
        while b"exit " not in answer or not answer.endswith(b"\n"):  # after "pid N"
            chunk = conn.recv(64)
            if not chunk:
                sys.stderr.write("rho-agent: the docs CLI zygote went away\n")
                return 70
            answer += chunk
    code = int(answer.rpartition(b"exit ")[2])
    return code if code >= 0 else 128 - code  # a signal's end, as a shell reports it


if __name__ == "__main__":
    sys.exit(main())
