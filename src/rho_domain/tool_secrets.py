"""The credential files of the tools engineers use, by name and by place (data only).

``secrets.py``'s home rule (2b) refuses every hidden entry of a known home, but not inside the
workspace (a workspace that is a home, a Daytona sandbox whose home is unknown), and tools read
many of these files from a project directory too. So each file whose whole content is
credentials, or that routinely holds them in clear, is listed here; ``secrets.py`` adds
``TOOL_SECRET_NAMES`` to its name rules (``NAMES``, any directory) and ``TOOL_SECRET_LOCATIONS``
to its locations (``LOCATIONS``, a tree or file below a directory of that name).

Judged and left readable: Pulumi's ``Pulumi.<stack>.yaml`` (its secrets are ciphertext),
Rails' ``credentials.yml.enc`` (ciphertext; its ``master.key`` is a ``*.key``), a project's
``gradle.properties``, ``nuget.config``, ``pip.conf``, ``bunfig.toml`` and ``.condarc``
(build settings the agent needs, whose tokens are usually ``${VAR}``), Django's
``local_settings.py`` (code), JDBC ``*.properties`` and ``tnsnames.ora`` (no secret of their
own), ``.mongorc.js`` (a start-up script), ``.netlify/state.json`` and ``.vercel/project.json``
(site and project ids), the ``.terraform`` directory (providers; its ``terraform.tfstate``,
the backend's configuration, is refused by name).
"""

from __future__ import annotations

TOOL_SECRET_NAMES: tuple[str, ...] = (
    # read from a project directory (redwrite17): yarn's npmAuthToken, Composer's tokens, a
    # MySQL login path, Databricks, Terraform and Kaggle tokens, rclone remotes, OpenStack
    # clouds, PostgreSQL service passwords, Docker's old auth file
    "*/.yarnrc.yml", "*/auth.json", "*/.mylogin.cnf", "*/.databrickscfg", "*/.terraformrc",
    "*/terraform.rc", "*/kaggle.json", "*/rclone.conf", "*/clouds.yaml", "*/.pg_service.conf",
    "*/pg_service.conf", "*/.dockercfg",
    # secretnames17. Terraform's state holds every resource's secrets in clear (generated
    # passwords, keys); its variable files are where those secrets are passed in, which is why
    # GitHub's Terraform .gitignore leaves out every *.tfvars (terraform.tfvars.example is a
    # template and stays readable)
    "*.tfstate", "*.tfstate.backup", "*.tfvars", "*.tfvars.json",
    # Ansible vault password files (.vault_pass, vault_password.txt, vault-password-file)
    "*/.vault_pass*", "*/vault_pass*", "*/.vault-pass*", "*/vault-pass*",
    # files named for secrets: Rails' secrets.yml (secret_key_base in clear), Streamlit's
    # .streamlit/secrets.toml, act's .secrets, Kubernetes Secret manifests, Wrangler's local
    # secrets (.dev.vars, .dev.vars.<env>)
    "*/secrets.yml", "*/secrets.yaml", "*/secrets.json", "*/secrets.toml", "*/.secrets",
    "*/.dev.vars", "*/.dev.vars.*",
    # Vagrant's machine key (.vagrant/machines/*/*/private_key), sentry-cli's token (read from
    # the project too), ODBC data sources' PWD=, Oracle's auto-login wallet, dbt's profiles
    # (read from the project too), clickhouse-client's config (read from the current directory)
    "*/private_key", "*/.sentryclirc", "*/.odbc.ini", "*/odbc.ini", "*/cwallet.sso",
    "*/profiles.yml", "*/clickhouse-client.xml",
    # kubeconfigs and Talos' client config by their usual other names
    "*/kubeconfig", "*/kubeconfig.yaml", "*/kubeconfig.yml", "*.kubeconfig", "*/talosconfig",
    # service-account keys, by name only when the name says so (GCP, Firebase's admin SDK)
    "*-firebase-adminsdk-*.json", "*/service-account*.json", "*/service_account*.json",
    "*/application_default_credentials.json",
    # redis-cli's password file and the data shells' histories (AUTH, db.auth(), createUser)
    "*/.rediscli_auth", "*/.rediscli_history", "*/.dbshell", "*/mongosh_repl_history",
    # Maven's master password, the Vultr CLI's API key
    "*/settings-security.xml", "*/.vultr-cli.yaml",
    # X11's cookie: whoever reads it reaches the user's display
    "*/.xauthority",
    # redshell23, each file whole a key or a store of tokens wherever its tool's directory
    # is moved (GNUPGHOME, AZURE_CONFIG_DIR, CLOUDSDK_CONFIG) or copied into a project:
    # PuTTY's private keys, PKCS#8 keys (Apple's AuthKey_*.p8), PKCS#12 by its long suffix,
    # OpenVPN profiles (their <key> inline), SSH host keys outside /etc/ssh (an image's
    # build context), macOS keychains; the Azure CLI's token caches, gcloud's token
    # databases; Chromium's saved logins (on Linux without a keyring their key is the
    # fixed "peanuts") and Firefox's NSS key databases (logins.json is ciphertext under
    # key4.db's key and stays readable); WordPress's wp-config.php, whose purpose is the
    # database password and the authentication keys and salts (wp-config-sample.php is
    # the template)
    "*.ppk", "*.p8", "*.pkcs12", "*.ovpn", "*/ssh_host_*_key", "*.keychain", "*.keychain-db",
    "*/msal_token_cache.json", "*/msal_token_cache.bin", "*/accesstokens.json",
    "*/credentials.db", "*/access_tokens.db", "*/login data", "*/login data for account",
    "*/key3.db", "*/key4.db", "*/wp-config.php",
    # redshell24, judged by how secret the format is: the browsers' cookie stores, whose
    # session cookies log in as the user (Firefox's in clear; Chromium's under the key
    # its saved logins have, "peanuts" on Linux without a keyring; by their profile
    # directories' names, since a "cookies" directory of a web project is no store);
    # curl's and wget's start-up files outside a home (a project's, a dotfiles
    # repository's), whose "user = name:password" and http_password are what a user
    # keeps in them; WireGuard's wg-quick configurations, each one's [Interface]
    # PrivateKey in clear, by their interface names (wg0.conf, wg-home.conf). Left
    # readable: logins.json (ciphertext under key4.db's key), curl's cookie jars
    # (cookies.txt: too common a name; a git http.cookieFile is refused by what names it).
    # Chromium's Cookies are locations below (a profile directory's entry)
    "*/cookies.sqlite", "*/cookies.sqlite-wal", "*/.curlrc", "*/_curlrc", "*/.wgetrc",
    # wg<digit>*.conf spelt digit by digit: a "[0-9]" is the one pattern form GlobSet hands
    # to fnmatch, whose expression each process compiled at its first judgement
    *(f"*/wg{digit}*.conf" for digit in "0123456789"), "*/wg-*.conf", "*/wg_*.conf",
    # redshell26: Git Credential Manager's plaintext logins, one file each, the password on
    # its first line, at STORE/NAMESPACE/SCHEME/HOST[/PATH...]/ACCOUNT.credential, where
    # the namespace is any text (credential.namespace = a/b/c, ../up, an absolute path:
    # .NET's Path.Combine drops the store then) and the store any directory; judged by the
    # name GCM gives every login, whatever configuration, variable or depth placed it
    "*.credential",
)  # fmt: skip

# Kept in a home (rule 2b covers them only where the home is known and is not the workspace),
# below directories whose names say which tool they belong to; Bundler's .bundle/config is
# read from the project too (BUNDLE_<HOST>: user:password). uv's tokens are a location, not
# the name credentials.toml: that name alone is an ordinary file's (Streamlit's holds an email).
TOOL_SECRET_LOCATIONS: tuple[str, ...] = (
    "*/.bundle/config", "*/uv/credentials", "*/.m2/settings.xml", "*/.gradle/gradle.properties",
    "*/.nuget/nuget/nuget.config", "*/.config/pypoetry/auth.toml", "*/.mc", "*/.ngrok2",
    "*/.config/ngrok", "*/.config/hub", "*/.config/glab-cli", "*/.tsh", "*/.config/doctl",
    "*/.config/hcloud", "*/.config/helm/repositories.yaml", "*/.config/helm/registry",
    "*/.config/op", "*/.oci", "*/.bluemix", "*/.config/linode-cli", "*/.config/scw", "*/.fly",
    "*/.config/netlify", "*/.wrangler/config", "*/.config/.wrangler", "*/.railway",
    "*/.render", "*/.supabase/access-token", "*/.config/configstore", "*/.snowsql",
    "*/.snowflake", "*/.dbt", "*/.clickhouse-client", "*/.circleci/cli.yml",
    "*/.travis/config.yml", "*/.netlify/config.json", "*/huggingface/token",
    "*/.huggingface/token",
    # GnuPG's private keys and gcloud's older credentials, wherever GNUPGHOME or
    # CLOUDSDK_CONFIG puts them (redshell23)
    "*/private-keys-v1.d", "*/legacy_credentials",
    # Git Credential Manager's plaintext store (credential.credentialStore=plaintext): one
    # file per login, the password in clear (probeshell23b)
    "*/.gcm/store",
    # Chromium's cookie store in a profile directory (redshell24: see the names above)
    "*/default/cookies", "*/profile */cookies", "*/network/cookies",
)  # fmt: skip
