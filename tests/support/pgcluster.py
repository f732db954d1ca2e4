"""A throw-away PostgreSQL cluster from Debian's `postgresql` package, for the store's second engine in tests and
benchmarks: initdb in a temp dir, a free port on 127.0.0.1, trust auth, gone at stop.

As root, initdb refuses to run, so the cluster runs as the package's `postgres` user. A fresh database per test
is a `CREATE DATABASE ... TEMPLATE` of one that already has every table: milliseconds.
"""

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid


def bindir():
    try:
        found = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
        if os.path.exists(os.path.join(found, "initdb")) and os.path.exists(os.path.join(found, "pg_ctl")):
            return found
    except (OSError, subprocess.CalledProcessError):
        pass
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not candidates:
        raise RuntimeError("PostgreSQL is not installed: `make test` installs Debian's postgresql package")
    return os.path.dirname(candidates[-1])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self):
        self.bin = bindir()
        self.dir = tempfile.mkdtemp(prefix="ptas-pg-")
        self.port = free_port()
        self.root = os.geteuid() == 0
        self.url = f"postgresql://ptas@127.0.0.1:{self.port}/postgres"

    def _run(self, *args):
        command = [os.path.join(self.bin, args[0]), *args[1:]]
        if self.root:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, text=True)

    def start(self):
        if self.root:
            shutil.chown(self.dir, "postgres")
        self._run("initdb", "-D", os.path.join(self.dir, "data"), "-A", "trust", "-U", "ptas", "--no-sync", "-E",
                  "UTF8")
        for _ in range(3):      # the port was free when chosen; another process may have bound it since
            try:
                self.resume()
                return self
            except subprocess.CalledProcessError:
                if "Address already in use" not in self.log():
                    raise
                self.port = free_port()
                self.url = f"postgresql://ptas@127.0.0.1:{self.port}/postgres"
        raise RuntimeError(f"PostgreSQL found no free port:\n{self.log()}")

    def log(self):
        try:
            with open(os.path.join(self.dir, "log")) as log:
                return log.read()
        except FileNotFoundError:
            return ""

    def halt(self, mode="fast"):
        """Stop the server and keep its data (`start` again brings it back); every connection to it breaks."""
        self._run("pg_ctl", "-D", os.path.join(self.dir, "data"), "-m", mode, "-w", "stop")

    def resume(self):
        data = os.path.join(self.dir, "data")
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300")
        self._run("pg_ctl", "-D", data, "-o", options, "-l", os.path.join(self.dir, "log"), "-w", "start")

    def stop(self):
        try:
            self._run("pg_ctl", "-D", os.path.join(self.dir, "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _admin(self, sql):
        import psycopg
        with psycopg.connect(self.url, autocommit=True) as db:
            db.execute(sql)

    def database(self):
        """A new empty database; its URL."""
        name = "t" + uuid.uuid4().hex[:16]
        self._admin(f"CREATE DATABASE {name}")
        return self.url.rsplit("/", 1)[0] + "/" + name


class Databases:
    """A pool of databases holding the app's tables: a test takes one, and gives it back emptied (every row
    deleted, identities restarted), which is far cheaper than creating a database per test."""

    def __init__(self, cluster, make_app):
        self.cluster, self.make_app = cluster, make_app
        self.free = []

    def take(self):
        if self.free:
            return self.free.pop()
        url = self.cluster.database()
        self.make_app(url).extensions["ptas"].close()
        return url

    def give_back(self, url):
        import psycopg
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(EMPTY)
        self.free.append(url)


# Every row of every table deleted and every identity a test used restarted, in one transaction (a DO block is
# one). A sequence never used since its restart is left alone: restarting every one was most of the work.
EMPTY = """
DO $$
DECLARE name text;
BEGIN
    FOR name IN SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() LOOP
        EXECUTE 'DELETE FROM ' || name;
    END LOOP;
    FOR name IN SELECT quote_ident(schemaname) || '.' || quote_ident(sequencename) FROM pg_sequences
                WHERE schemaname = current_schema() AND last_value IS NOT NULL LOOP
        EXECUTE 'ALTER SEQUENCE ' || name || ' RESTART';
    END LOOP;
END $$
"""
