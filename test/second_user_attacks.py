#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The trust boundary attacks, run by a real second local user.

As root, makes two throwaway users, a victim and an attacker (neither is root, so file
modes bind both), and runs the attacks of SECURITY.md as the attacker against the real
`plugrt` command run as the victim:

  1. plugin directories the attacker owns or can write, and a directory above the plugins
     that the attacker owns: refused with a reason, the attacker's plugin never runs;
  2. the attacker swapping the plugin directory for one of theirs (RENAME_EXCHANGE in a
     parent they own) while the victim loads it, allow-list pinned: only the pinned
     plugin or a refusal, never the attacker's code;
  3. a cache directory the attacker owns or can write: refused with a reason and the run
     still succeeds; entries and a key planted while the victim's cache was writable:
     never "blob from cache", the outputs are the victim's own;
  4. links planted in the cache (the counts file, an entry, the key, the cost profile and
     its temporary files): the file they name is never written;
  5. the victim's cache is private: the attacker can read none of it.

The attacker's plugin is the marker test plugin, which creates $PLUGRT_TEST_MARKER as it
is mapped: that file existing means the attacker's code ran in the victim's process.
Both users and every file are removed at exit, also on failure. Exits 77 (skipped) when
not root or when users cannot be made; 1 when any attack succeeds.

Usage: second_user_attacks.py PLUGRT TEST_PLUGIN_DIR MODELS_DIR
"""
import grp
import hashlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

SKIP = 77
RACE_TRIES = 200
RACE_SECONDS = 10.0
COMMAND_TIMEOUT = 30
STALE_USER = re.compile(r"^plugrt-(victim|attacker)-([0-9]+)-[0-9]$")

# The attacker's side of the swap race: exchanges two directories until told to stop.
SWAPPER = r"""
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, stop, seconds = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3], float(sys.argv[4])
end = time.monotonic() + seconds
swaps = 0
while time.monotonic() < end and not os.path.exists(stop):
    for _ in range(64):
        if libc.renameat2(-100, a, -100, b, 2) == 0:  # AT_FDCWD, RENAME_EXCHANGE
            swaps += 1
print(swaps)
"""



class VictimOutput:
    """A run's output. Placement measures backends against each other on the first load,
    so two runs of one input may run on different backends and differ in the last bits;
    the attacker's numbers (42.0 everywhere) are nowhere near."""

    def __init__(self, path):
        self.values = np.load(path)

    def __eq__(self, other):
        return isinstance(other, VictimOutput) and self.values.shape == other.values.shape and bool(
            np.allclose(self.values, other.values, rtol=1e-4, atol=1e-5))

class User:
    def __init__(self, name, home):
        self.name, self.home = name, home
        entry = pwd.getpwnam(name)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid


class Attacks:
    def __init__(self, plugrt, plugin_dir, models_dir):
        self.plugrt_built, self.plugin_dir, self.models_dir = plugrt, plugin_dir, models_dir
        self.base = None
        self.users = []
        self.groups = []
        self.failures = []
        self.children = []

    # ---- Setup and cleanup ----

    def make_user(self, role):
        for attempt in range(5):
            name = "plugrt-%s-%d-%d" % (role, os.getpid(), attempt)
            try:
                pwd.getpwnam(name)
                continue
            except KeyError:
                pass
            home = os.path.join(self.base, role)
            made = subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", home,
                                   "--shell", "/usr/sbin/nologin", "--user-group", name],
                                  capture_output=True, text=True, check=False)
            if made.returncode != 0:
                raise OSError("useradd %s failed: %s" % (name, made.stderr.strip()))
            self.users.append(name)
            self.groups.append(name)
            user = User(name, home)
            os.mkdir(home)
            os.chown(home, user.uid, user.gid)
            os.chmod(home, 0o755)
            return user
        raise OSError("no free user name for the %s" % role)

    def cleanup(self):
        for child in self.children:
            if child.poll() is None:
                child.kill()
                child.wait()
        for name in self.users:
            removed = subprocess.run(["userdel", name], capture_output=True, text=True, check=False)
            if removed.returncode != 0:
                print("cleanup: userdel %s: %s" % (name, removed.stderr.strip()), file=sys.stderr)
        for name in self.groups:
            try:
                grp.getgrnam(name)
            except KeyError:
                continue
            subprocess.run(["groupdel", name], capture_output=True, check=False)
        self.users, self.groups = [], []
        if self.base is not None and os.path.isdir(self.base):
            shutil.rmtree(self.base, ignore_errors=True)
            self.base = None

    def remove_stale_users(self):
        """Users and files left by a run that was killed (ctest's timeout kills outright)."""
        for entry in pwd.getpwall():
            match = STALE_USER.match(entry.pw_name)
            if match is None or os.path.exists("/proc/" + match.group(2)):
                continue
            subprocess.run(["userdel", entry.pw_name], capture_output=True, check=False)
            subprocess.run(["groupdel", entry.pw_name], capture_output=True, check=False)
            base = os.path.dirname(entry.pw_dir)
            if os.path.basename(base).startswith("plugrt-attacks-") and \
                    os.path.dirname(base) == tempfile.gettempdir():
                shutil.rmtree(base, ignore_errors=True)

    def setup(self):
        self.remove_stale_users()
        self.base = tempfile.mkdtemp(prefix="plugrt-attacks-")
        os.chmod(self.base, 0o755)
        self.victim = self.make_user("victim")
        self.attacker = self.make_user("attacker")
        # The victim runs a copy of the command, root's, in a directory only root writes,
        # so it can run wherever the build tree is; plugins beside it are added for the
        # cache attacks only, which need a backend besides portable.
        self.bin = os.path.join(self.base, "bin")
        os.mkdir(self.bin, 0o755)
        self.plugrt = os.path.join(self.bin, "plugrt")
        shutil.copy2(self.plugrt_built, self.plugrt)
        os.chmod(self.plugrt, 0o755)
        self.shared = os.path.join(self.base, "shared")  # root's, readable by both
        os.mkdir(self.shared, 0o755)
        for plugin in ("good", "marker"):
            path = os.path.join(self.shared, "libplugrt_%s.so" % plugin)
            shutil.copy2(os.path.join(self.plugin_dir, "libplugrt_%s.so" % plugin), path)
            os.chmod(path, 0o755)
        self.program = os.path.join(self.shared, "tiny_cnn.prt")
        compiled = subprocess.run([self.plugrt_built, "compile", os.path.join(self.models_dir, "tiny_cnn.onnx"),
                                   "--backends", "portable", "-o", self.program],
                                  env={"PATH": "/usr/bin:/bin", "HOME": self.base,
                                       "PLUGRT_CACHE_DIR": os.path.join(self.base, "root-cache")},
                                  capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False)
        if compiled.returncode != 0:
            raise OSError("plugrt compile failed: " + compiled.stderr)
        os.chmod(self.program, 0o644)

    # ---- Running as a user ----

    def env_of(self, user, extra=None):
        env = {"PATH": "/usr/bin:/bin", "HOME": user.home, "LC_ALL": "C"}
        # A sanitizer build's options (ctest --preset asan sets some the tests need).
        env.update({k: v for k, v in os.environ.items() if k.endswith("SAN_OPTIONS")})
        env.update(extra or {})
        return env

    def as_user(self, user, args, extra_env=None, umask=0o022, timeout=COMMAND_TIMEOUT):
        try:
            return subprocess.run(args, user=user.uid, group=user.gid, extra_groups=[], umask=umask, cwd=user.home,
                                  env=self.env_of(user, extra_env), capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired:  # killed by run()
            self.check("%s finishes within %d s" % (" ".join(args[:2]), timeout), False, "it hung: %s" % args)
            return subprocess.CompletedProcess(args, 124, "", "timed out")

    def victim_runs(self, args, extra_env=None, timeout=COMMAND_TIMEOUT):
        # umask 0: whatever privacy the cache has comes from plugrt, not from the umask.
        return self.as_user(self.victim, [self.plugrt] + args, extra_env, umask=0, timeout=timeout)

    def attacker_does(self, code, *args):
        done = self.as_user(self.attacker, [sys.executable, "-c", code] + [str(a) for a in args])
        if done.returncode != 0:
            raise OSError("the attacker's step failed: " + done.stderr)
        return done.stdout

    def attacker_area(self, name, mode):
        """A directory of the attacker's, in a directory only root writes (so that it, not a
        directory above it, is what the victim's checks find untrusted)."""
        path = os.path.join(self.base, name)
        os.mkdir(path)
        os.chown(path, self.attacker.uid, self.attacker.gid)
        os.chmod(path, mode)
        return path

    def attacker_copies(self, source, destination):
        self.attacker_does("import shutil, sys; shutil.copyfile(sys.argv[1], sys.argv[2])", source, destination)

    def attacker_mkdir(self, path, mode):
        self.attacker_does("import os, sys; os.mkdir(sys.argv[1]); os.chmod(sys.argv[1], int(sys.argv[2], 8))",
                           path, oct(mode)[2:])

    def attacker_links(self, target, links):
        self.attacker_does("import os, sys\nfor link in sys.argv[2:]: os.symlink(sys.argv[1], link)", target, *links)

    # ---- Outcomes ----

    def check(self, attack, ok, detail):
        print("%s: %s%s" % ("ok" if ok else "FAILED", attack, "" if ok else "\n    " + detail))
        if not ok:
            self.failures.append(attack)

    def marker(self, name):
        path = os.path.join(self.victim.home, "ran-" + name)
        return path, {"PLUGRT_TEST_MARKER": path}

    def doctor_says(self, output, plugin_path, reason):
        """Whether `plugrt doctor` refused `plugin_path` with `reason` in its why line."""
        lines = output.splitlines()
        for i, line in enumerate(lines):
            if line.split() == ["refused", plugin_path] and i + 1 < len(lines):
                return reason in lines[i + 1]
        return False

    # ---- 1. Plugin directories ----

    def plugin_directory(self, attack, directory, plugin_path, reason):
        marker, env = self.marker(attack.split()[0])
        doctor = self.victim_runs(["doctor", "--plugin-dir", directory], env)
        self.check(attack + ": doctor names the reason",
                   doctor.returncode == 0 and self.doctor_says(doctor.stdout, plugin_path, reason),
                   "wanted a refusal of %s with '%s'; doctor said (rc %d):\n%s%s" %
                   (plugin_path, reason, doctor.returncode, doctor.stdout, doctor.stderr))
        backends = self.victim_runs(["backends", "--plugin-dir", directory], env)
        self.check(attack + ": backends lists no marker backend",
                   backends.returncode == 0 and "marker" not in backends.stdout,
                   "backends said (rc %d):\n%s%s" % (backends.returncode, backends.stdout, backends.stderr))
        run = self.victim_runs(["run", self.program, "--plugin-dir", directory, "--no-cache",
                                "--measure-seconds", "0"], env)
        self.check(attack + ": run succeeds without it", run.returncode == 0,
                   "run failed (rc %d): %s" % (run.returncode, run.stderr))
        self.check(attack + ": the attacker's plugin never ran", not os.path.exists(marker),
                   "the marker plugin's constructor ran in the victim's process")

    def attack_plugin_directories(self):
        a, v = self.attacker, self.victim
        marker_so = os.path.join(self.shared, "libplugrt_marker.so")
        # The attacker's own directory, offered to the victim.
        theirs = self.attacker_area("attacker-plugins", 0o755)
        self.attacker_copies(marker_so, os.path.join(theirs, "libplugrt_marker.so"))
        self.plugin_directory("1a plugin directory owned by the attacker", theirs,
                              os.path.join(theirs, "libplugrt_marker.so"),
                              "its directory %s is owned by uid %d, neither this user" % (theirs, a.uid))
        # The victim's directory, left writable by every user; the attacker drops a plugin in.
        open_dir = os.path.join(v.home, "plugins-open")
        self.as_user(v, ["mkdir", "-m", "0777", open_dir])
        self.attacker_copies(marker_so, os.path.join(open_dir, "libplugrt_marker.so"))
        self.plugin_directory("1b plugin directory writable by every user", open_dir,
                              os.path.join(open_dir, "libplugrt_marker.so"),
                              "its directory %s is writable by every user (mode 0777)" % open_dir)
        # Writable by the attacker's group, which the victim is not in.
        group_dir = os.path.join(v.home, "plugins-group")
        os.mkdir(group_dir)
        os.chown(group_dir, v.uid, a.gid)
        os.chmod(group_dir, 0o775)
        self.attacker_copies(marker_so, os.path.join(group_dir, "libplugrt_marker.so"))
        self.plugin_directory("1c plugin directory writable by the attacker's group", group_dir,
                              os.path.join(group_dir, "libplugrt_marker.so"),
                              "its directory %s is writable by group %d" % (group_dir, a.gid))
        # The victim's own directory and plugin, below a directory the attacker owns.
        upper = self.attacker_area("attacker-upper", 0o755)
        lower = os.path.join(upper, "plugins")
        os.mkdir(lower)
        os.chown(lower, v.uid, v.gid)
        self.as_user(v, ["cp", marker_so, os.path.join(lower, "libplugrt_marker.so")])
        self.plugin_directory("1d plugin directory below one the attacker owns", lower,
                              os.path.join(lower, "libplugrt_marker.so"),
                              "its directory %s is owned by uid %d, neither this user" % (upper, a.uid))

    # ---- 2. The swap race ----

    def attack_directory_swap(self):
        a, v = self.attacker, self.victim
        parent = self.attacker_area("attacker-swap", 0o755)
        plugins, theirs = os.path.join(parent, "plugins"), os.path.join(parent, "theirs")
        os.mkdir(plugins)
        os.chown(plugins, v.uid, v.gid)
        self.as_user(v, ["cp", os.path.join(self.shared, "libplugrt_good.so"), plugins + "/"])
        self.attacker_mkdir(theirs, 0o755)
        self.attacker_copies(os.path.join(self.shared, "libplugrt_marker.so"),
                             os.path.join(theirs, "libplugrt_good.so"))
        with open(os.path.join(self.shared, "libplugrt_good.so"), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        allow_list = os.path.join(v.home, "allowed.txt")
        self.as_user(v, [sys.executable, "-c", "import sys; open(sys.argv[1], 'w').write(sys.argv[2])", allow_list,
                         digest + "  libplugrt_good.so\n"])
        marker, env = self.marker("2-swap")

        # Without --allow-untrusted-plugins the attacker's parent alone refuses every try.
        pinned = ["backends", "--plugin-dir", plugins, "--plugin-allow-list", allow_list]
        stop = os.path.join(self.base, "stop-swapping")
        swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, plugins, theirs, stop, str(RACE_SECONDS + 20)],
                                   user=a.uid, group=a.gid, extra_groups=[], cwd=a.home, env=self.env_of(a),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children.append(swapper)
        listed = 0
        for _ in range(10):
            out = self.victim_runs(pinned, env)
            listed += ("offset" in out.stdout) + ("marker" in out.stdout)
        self.check("2a swap race, ownership checks on: every try refused",
                   listed == 0 and not os.path.exists(marker),
                   "a plugin below the attacker's directory loaded in %d of 10 tries" % listed)

        # With them off, only the allow-list stands between the victim and the swap.
        tries = loaded = refused = theirs_ran = 0
        errors = []
        start = time.monotonic()
        while tries < RACE_TRIES and time.monotonic() - start < RACE_SECONDS:
            out = self.victim_runs(pinned + ["--allow-untrusted-plugins"], env)
            tries += 1
            if out.returncode != 0:
                errors.append("rc %d: %s" % (out.returncode, out.stderr.strip()))
            elif "marker" in out.stdout:
                theirs_ran += 1
            elif "offset" in out.stdout:
                loaded += 1
            else:
                refused += 1
            if os.path.exists(marker):
                theirs_ran += 1
                break
        open(stop, "w").close()
        try:
            swaps = swapper.communicate(timeout=10)[0].strip()
        except subprocess.TimeoutExpired:
            swapper.kill()
            swaps = "?"
            swapper.communicate()
        print("    the attacker swapped %s times; of %d tries the pinned plugin loaded in %d, %d were refused, "
              "the attacker's file ran in %d" % (swaps, tries, loaded, refused, theirs_ran))
        self.check("2b swap race, allow-list pinned: never the attacker's code",
                   theirs_ran == 0 and not errors and not os.path.exists(marker) and tries > 0,
                   "the attacker's plugin ran in %d of %d tries; failed runs: %s" % (theirs_ran, tries, errors[:3]))

    # ---- 3, 4, 5. The cache ----

    def run_program(self, name, cache_args, extra_env=None):
        out_dir = os.path.join(self.victim.home, "out-" + name)
        run = self.victim_runs(["run", self.program, "--report", "--output-dir", out_dir] + cache_args, extra_env)
        output = os.path.join(out_dir, "output.npy")
        return run, VictimOutput(output) if os.path.exists(output) else None

    def attack_cache(self):
        a, v = self.attacker, self.victim
        # Backends besides portable, so placement at load compiles blobs the cache keeps.
        built_plugins = os.path.join(os.path.dirname(self.plugrt_built), "plugins")
        if os.path.isdir(built_plugins):
            shutil.copytree(built_plugins, os.path.join(self.bin, "plugins"))
        own = os.path.join(v.home, "cache")
        first, reference = self.run_program("own-1", ["--cache-dir", own])
        second, again = self.run_program("own-2", ["--cache-dir", own])
        if first.returncode != 0 or second.returncode != 0 or reference is None:
            self.check("3 the victim's own runs", False, "plugrt run failed: %s%s" % (first.stderr, second.stderr))
            return
        cached = "blob from cache" in second.stdout
        print("    the victim's own cache: %s" % ("second run took its blobs from the cache" if cached else
                                                  "no backend besides portable, nothing to cache"))
        self.check("3 the victim's own runs agree", again == reference, "two runs of the same input differ")

        # 3a, 3b, 3c: cache directories the attacker owns or can write.
        theirs = self.attacker_area("attacker-cache", 0o755)
        open_parent = self.attacker_area("attacker-open", 0o777)
        xdg = self.attacker_area("attacker-xdg", 0o777)
        for attack, top, args, env, reason in [
            ("3a --cache-dir owned by the attacker", theirs, ["--cache-dir", theirs], None,
             "%s: not trusted: the directory is owned by uid %d" % (theirs, a.uid)),
            ("3b PLUGRT_CACHE_DIR below a directory the attacker owns and everyone can write", open_parent, [],
             {"PLUGRT_CACHE_DIR": open_parent + "/cache"},
             "%s: not trusted: the directory is owned by uid %d" % (open_parent, a.uid)),
            ("3c XDG_CACHE_HOME the attacker owns and everyone can write", xdg, [], {"XDG_CACHE_HOME": xdg},
             "%s: not trusted: the directory is owned by uid %d" % (xdg, a.uid)),
        ]:
            run, output = self.run_program(attack.split()[0], args, env)
            self.check(attack + ": refused with a reason, the run succeeds",
                       run.returncode == 0 and reason in run.stdout + run.stderr and output == reference,
                       "wanted '%s' and the victim's outputs; rc %d:\n%s%s" % (reason, run.returncode, run.stdout,
                                                                              run.stderr))
            written = [os.path.join(d, f) for d, ds, fs in os.walk(top)
                       for f in ds + fs if os.lstat(os.path.join(d, f)).st_uid == v.uid]
            self.check(attack + ": nothing of the victim's made there", not written, "made: %s" % written)

        # 3d: the victim's cache left writable by every user (umask 0); the attacker plants
        # their own key and their own valid entries for the same program.
        sloppy = os.path.join(v.home, "cache-sloppy")
        self.as_user(v, ["mkdir", "-m", "0777", sloppy, sloppy + "/blobs"])
        attacker_cache = os.path.join(a.home, "own-cache")
        made = self.as_user(a, [self.plugrt, "run", self.program, "--cache-dir", attacker_cache])
        if made.returncode != 0:
            raise OSError("the attacker's own run failed: " + made.stderr)
        planted = []
        for directory, _, files in os.walk(attacker_cache):
            for name in files:
                relative = os.path.relpath(os.path.join(directory, name), attacker_cache)
                if relative.startswith("costs-"):
                    continue
                self.attacker_copies(os.path.join(directory, name), os.path.join(sloppy, relative))
                planted.append(relative)
        run, output = self.run_program("3d-open", ["--cache-dir", sloppy])
        self.check("3d cache writable by every user, entries and key planted: refused, outputs the victim's",
                   run.returncode == 0 and "is writable by every user (mode 0777)" in run.stdout and
                   "blob from cache" not in run.stdout and output == reference,
                   "rc %d:\n%s%s" % (run.returncode, run.stdout, run.stderr))
        # The victim notices and makes it private; what the attacker planted stays.
        os.chmod(sloppy, 0o700)
        os.chmod(sloppy + "/blobs", 0o700)
        for attempt in ("3e-private-1", "3e-private-2"):
            run, output = self.run_program(attempt, ["--cache-dir", sloppy])
            # The attacker's key is not the victim's file, so the cache is not used.
            self.check("3e the same cache made private, planted files kept (%s): the attacker's key is refused, "
                       "never the attacker's blobs" % attempt,
                       run.returncode == 0 and output == reference and "blob from cache" not in run.stdout and
                       "key: not a private file of this user (owner uid %d" % a.uid in run.stdout,
                       "planted %s; rc %d:\n%s%s" % (planted, run.returncode, run.stdout, run.stderr))

        self.attack_cache_links(reference)
        self.attack_cache_privacy(own)

    def attack_cache_links(self, reference):
        a, v = self.attacker, self.victim
        precious = os.path.join(v.home, "precious.txt")
        self.as_user(v, [sys.executable, "-c", "open(__import__('sys').argv[1], 'w').write('keep me\\n')", precious])
        before = os.stat(precious)
        # Names the victim's cache uses, learnt from the victim's own cache.
        own = os.path.join(v.home, "cache")
        entries = sorted(f for f in os.listdir(own + "/blobs") if f.endswith(".blob"))
        costs = sorted(f for f in os.listdir(own) if f.startswith("costs-") and f.endswith(".tsv"))
        for name, with_key in (("cache-links", False), ("cache-links-key", True)):
            cache = os.path.join(v.home, name)
            self.as_user(v, ["mkdir", "-m", "0777", cache, cache + "/blobs"])
            links = ["blobs/stats"] + ["blobs/" + e for e in entries]
            for profile in costs:
                links.append(profile)
                # The old, predictable temporary names: the profile's name, .tmp and the
                # pid, for the next pids to be handed out.
                with open("/proc/sys/kernel/ns_last_pid") as f:
                    pid = int(f.read())
                links += ["%s.tmp%d" % (profile, p) for p in range(pid + 1, pid + 400)]
                links += ["%s.tmp" % profile]
            if with_key:
                links.append("key")
            self.attacker_links(precious, [os.path.join(cache, link) for link in links])
            os.chmod(cache, 0o700)  # the victim made it private after the links were planted
            os.chmod(cache + "/blobs", 0o700)
            for attempt in (1, 2):
                run, output = self.run_program("%s-%d" % (name, attempt), ["--cache-dir", cache])
                with open(precious) as f:
                    text = f.read()
                after = os.stat(precious)
                unchanged = text == "keep me\n" and after.st_mtime_ns == before.st_mtime_ns and \
                    after.st_size == before.st_size
                self.check("4 links planted in the cache%s (run %d): the file they name is untouched" %
                           (" (key included)" if with_key else "", attempt),
                           unchanged and run.returncode == 0 and output == reference,
                           "precious now %r; rc %d:\n%s%s" % (text, run.returncode, run.stdout, run.stderr))

    def attack_cache_privacy(self, own):
        modes = {}
        for directory, dirs, files in os.walk(own):
            for name in dirs + files:
                path = os.path.join(directory, name)
                modes[os.path.relpath(path, own)] = os.lstat(path).st_mode & 0o7777
        modes["."] = os.lstat(own).st_mode & 0o7777
        wrong = {p: oct(m) for p, m in modes.items()
                 if m != (0o700 if os.path.isdir(os.path.join(own, p)) else 0o600)}
        self.check("5 the victim's cache (made with umask 0) is 0700 directories, 0600 files",
                   not wrong and "key" in modes, "modes: %s" % wrong)
        read = self.as_user(self.attacker, [sys.executable, "-c", r"""
import os, sys
got = []
for path in sys.argv[1:]:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, 'rb').read(1)
        got.append(path)
    except PermissionError:
        pass
print('\n'.join(got))
"""] + [os.path.join(own, p) for p in modes])
        self.check("5 the attacker can read none of the victim's cache",
                   read.returncode == 0 and read.stdout.strip() == "",
                   "read: %s %s" % (read.stdout, read.stderr))

    def run(self):
        self.attack_plugin_directories()
        self.attack_directory_swap()
        self.attack_cache()


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("skipped: needs root to make the throwaway victim and attacker users")
        return SKIP
    if sys.version_info < (3, 9):
        print("skipped: needs Python 3.9 or later to run commands as another user")
        return SKIP
    if shutil.which("useradd") is None or shutil.which("userdel") is None:
        print("skipped: no useradd/userdel to make the throwaway users")
        return SKIP
    attacks = Attacks(*sys.argv[1:])

    def stop(signum, _frame):
        raise SystemExit("stopped by signal %d" % signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
    start = time.monotonic()
    try:
        try:
            attacks.setup()
        except OSError as error:
            if not attacks.users:
                print("skipped: cannot make the throwaway users: %s" % error)
                return SKIP
            raise
        attacks.run()
    finally:
        attacks.cleanup()
    print("%d attacks failed, in %.1f s" % (len(attacks.failures), time.monotonic() - start))
    for failure in attacks.failures:
        print("  " + failure)
    return 1 if attacks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
