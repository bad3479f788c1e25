"""The credential files that services keep at fixed places on a machine (data only).

``secrets.py`` refuses ``/etc/shadow``, ``/etc/sudoers`` and SSH host keys, but a profile that
reads outside the workspace (``read_outside_workspace: allow``, or a read root such as
``/etc``) also meets the files in which packages and administrators store credentials at
well-known paths: a database's maintenance login (``/etc/mysql/debian.cnf``), a cluster's
admin kubeconfig (``/etc/kubernetes/admin.conf``, k3s' ``k3s.yaml``), VPN and Wi-Fi keys
(``/etc/wireguard``, NetworkManager's connections, ``wpa_supplicant``, ``ipsec.secrets``,
``/etc/openvpn``), mail relays' and directories' passwords, a CI runner's token, Debian's daily
copies of ``/etc/shadow`` in ``/var/backups``, the tables where databases keep their users'
password hashes. Their names say nothing a name rule could catch
(``admin.conf``, ``debian.cnf``), so each is listed where it lives.

``SERVICE_SECRETS``: real paths (case as on disk), each a file or a tree; ``secrets.py`` adds
them, casefolded, to its locations and, as they are, to the system secrets the sandbox masks
and the walkers exclude by base name (so each base name is one no ordinary file is likely to
have). ``SERVICE_SECRET_GLOBS``: patterns (lowercase) for the ones whose path varies, of which
the sandbox masks ``MASKED_GLOBS``.
"""

from __future__ import annotations

SERVICE_SECRETS: tuple[str, ...] = (
    "/etc/mysql/debian.cnf",
    "/etc/kubernetes/admin.conf", "/etc/kubernetes/super-admin.conf",
    "/etc/kubernetes/kubelet.conf", "/etc/kubernetes/controller-manager.conf",
    "/etc/kubernetes/scheduler.conf", "/etc/rancher/k3s/k3s.yaml", "/etc/rancher/rke2/rke2.yaml",
    "/etc/wireguard", "/etc/NetworkManager/system-connections", "/etc/wpa_supplicant",
    "/etc/openvpn", "/etc/ipsec.secrets", "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets",
    "/etc/postfix/sasl_passwd", "/etc/postfix/sasl_passwd.db", "/etc/exim4/passwd.client",
    "/etc/msmtprc", "/etc/ssmtp/ssmtp.conf", "/etc/fetchmailrc", "/etc/rsyncd.secrets",
    "/etc/ldap.secret", "/etc/pam_ldap.secret", "/etc/libnss-ldap.secret", "/etc/sssd/sssd.conf",
    "/etc/samba/smbpasswd", "/var/lib/samba/private", "/etc/pki/tls/private", "/etc/pki/CA/private",
    "/etc/gitlab/gitlab-secrets.json", "/etc/gitlab-runner", "/etc/pgbouncer/userlist.txt",
    "/var/backups/shadow.bak", "/var/backups/gshadow.bak",
)  # fmt: skip
# The globs the sandbox also masks (each match it finds): in root's directories, which it can
# enter. Not the others: a mask below a directory it cannot enter (a database's data directory,
# 0700 and its service's own) makes bubblewrap fail every command, and there a command run by
# another user reads nothing anyway.
MASKED_GLOBS: tuple[str, ...] = (
    # vipw's and editors' copies beside the originals (shadow-, shadow~, shadow.bak)
    "/etc/shadow*",
    "/etc/gshadow*",
    "/var/backups/*shadow*",
    "/etc/ceph/*.keyring",
)
SERVICE_SECRET_GLOBS: tuple[str, ...] = (
    *MASKED_GLOBS, "/var/lib/cloud/instances/*/user-data.txt*", "*/.erlang.cookie",
    # databases' own password hashes, which log in by themselves (md5, mysql_native_password):
    # PostgreSQL's pg_authid (relation 1260), MySQL's user and MariaDB's global_priv tables
    "/var/lib/postgresql/*/main/global/1260*", "/var/lib/pgsql/*data/global/1260*",
    "/var/lib/pgsql/*/data/global/1260*", "/var/lib/mysql/mysql/user.*",
    "/var/lib/mysql/mysql/global_priv.*",
)  # fmt: skip
