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
have). ``SERVICE_SECRET_GLOBS``: patterns (lowercase) for the ones whose path varies, whose base
name is an ordinary one (``token``) or that lie in a service's own directory; the policy
refuses them, a walker skips their base names where it walks near them
(``walk_exclusions._glob_exposed``), and the sandbox masks ``MASKED_GLOBS`` of them.
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
    # varshell16b: more credentials at fixed places, in root's directories: systemd's
    # credentials and the host key that decrypts them, apt repositories' logins (Ubuntu Pro's
    # token), cluster join tokens (a kubelet's bootstrap, k3s/rke2's), Wi-Fi and VPN keys
    # (netplan, iwd, tailscale), Kerberos' KDC database and master key, sssd's cached
    # credentials, containers' registry logins, Azure's provisioning data (its admin
    # password). Each base name says what it is: walkers handed any directory at run time
    # (xargs grep -r) skip every one of them.
    "/etc/credstore", "/etc/credstore.encrypted", "/run/credstore", "/run/credstore.encrypted",
    "/var/lib/systemd/credential.secret", "/etc/apt/auth.conf", "/etc/apt/auth.conf.d",
    "/etc/kubernetes/bootstrap-kubelet.conf", "/var/lib/rancher/k3s/server/node-token",
    "/var/lib/rancher/rke2/server/node-token", "/etc/netplan", "/var/lib/iwd",
    "/var/lib/tailscale", "/etc/krb5kdc", "/var/lib/krb5kdc", "/var/kerberos/krb5kdc",
    "/var/lib/sss", "/etc/containers/auth.json", "/var/lib/waagent/ovf-env.xml",
)  # fmt: skip
# The globs the sandbox also masks (each match it finds): in root's directories, which it can
# enter. Not the others: a mask below a directory it cannot enter (a database's data directory,
# 0700 and its service's own) makes bubblewrap fail every command, and there a command run by
# another user reads nothing anyway.
MASKED_GLOBS: tuple[str, ...] = (
    # vipw's and editors' copies beside the originals (shadow-, shadow~, shadow.bak)
    "/etc/shadow*",
    "/etc/gshadow*",
    "/var/backups/shadow*",
    "/var/backups/gshadow*",
    "/etc/ceph/*.keyring",
)
SERVICE_SECRET_GLOBS: tuple[str, ...] = (
    *MASKED_GLOBS, "/var/lib/cloud/instances/*/user-data.txt*", "*/.erlang.cookie",
    # databases' own password hashes, which log in by themselves (md5, mysql_native_password):
    # PostgreSQL's pg_authid (relation 1260), MySQL's user and MariaDB's global_priv tables
    "/var/lib/postgresql/*/main/global/1260*", "/var/lib/pgsql/*data/global/1260*",
    "/var/lib/pgsql/*/data/global/1260*", "/var/lib/mysql/mysql/user.frm",
    "/var/lib/mysql/mysql/user.myd", "/var/lib/mysql/mysql/user.myi",
    "/var/lib/mysql/mysql/user.ibd",
    "/var/lib/mysql/mysql/global_priv.*",
    # varshell16b: cloud-init's other copies of the user's data (the merged cloud-config
    # with its passwords, vendor data, the pickled datasource, the seeds) and its sensitive
    # instance data; systemd's per-unit credentials; k3s/rke2's server token and credentials;
    # Ubuntu Pro's machine token; containers' logins at run time; ceph daemons' and MySQL's
    # keyrings; Jenkins' secrets; redis' passwords (requirepass, ACL users); Azure's keys;
    # zerotier's identity and buildkite's token (in their services' own directories).
    # Walkers skip their base names only where they walk near them (walk_exclusions._glob_exposed).
    "/var/lib/cloud/instances/*/cloud-config.txt", "/var/lib/cloud/instances/*/vendor-data*",
    "/var/lib/cloud/instances/*/obj.pkl", "/var/lib/cloud/seed/*/user-data",
    "/run/cloud-init/instance-data-sensitive.json", "/run/credentials",
    "/var/lib/rancher/*/server/token", "/var/lib/rancher/*/server/cred",
    "/var/lib/ubuntu-advantage/private", "/run/containers/*/auth.json",
    "/run/user/*/containers/auth.json", "/var/lib/ceph/*/keyring", "/var/lib/mysql-keyring",
    "/var/lib/jenkins/secrets", "/var/lib/jenkins/credentials.xml", "/etc/redis/redis.conf",
    "/etc/redis/users.acl", "/etc/redis/redis-*.conf", "/var/lib/waagent/*.prv",
    "/var/lib/zerotier-one/identity.secret", "/var/lib/zerotier-one/authtoken.secret",
    "/etc/buildkite-agent/buildkite-agent.cfg",
)  # fmt: skip
