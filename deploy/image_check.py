#!/usr/bin/env python3
"""Builds deploy/Dockerfile's image without a Docker daemon, and checks it.

Usage (as root, from anywhere; `make image-check` runs it):

    deploy/image_check.py [--dockerfile deploy/Dockerfile] [--context .]
                          [--build-arg NAME=VALUE ...] [--keep DIR]

What it does, reading the Dockerfile rather than repeating it, so the check
cannot drift from the image:

1. Parses the Dockerfile into stages (the instructions it knows are listed
   in INSTRUCTIONS; anything else is an error naming the line).
2. Per stage, makes a fresh root of the stage's base image with Debian's
   mmdebstrap from Debian's archive (`debian:12` and `debian:12-slim` are
   both bookworm's minbase, as Debian's images are built), then runs the
   stage's steps in it: RUN under /bin/sh -c in a chroot in a private mount
   and PID namespace with /dev, /proc, /sys, /etc/hosts and
   /etc/resolv.conf as Docker provides them; COPY from the context (less the
   Dockerfile's .dockerignore) or from an earlier stage's root; ARG, ENV and
   WORKDIR as Docker applies them.
3. In the last stage's root: `ldd` of the ENTRYPOINT must find every shared
   library, `ENTRYPOINT --help` must succeed as the image's USER, and the
   image's CMD (with --listen moved to a free loopback port) must answer
   /readyz and exit 0 on SIGTERM.

Two caches make a second run cheap, and neither changes what is built:
the downloaded .debs (IMAGE_CHECK_CACHE, default
~/.cache/gpusched-image-check) and the host's ccache, mounted into every
stage but the last (which must hold only what the image installs) with
ccache installed there and CCACHE_BASEDIR set to the context's copy, as
CMakeLists.txt's ccache logic expects. Prints each step's time.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field

INSTRUCTIONS = {"FROM", "ARG", "ENV", "WORKDIR", "RUN", "COPY", "LABEL", "USER",
                "EXPOSE", "ENTRYPOINT", "CMD"}
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BASE_IMAGE = re.compile(r"^debian:(12|bookworm)(-slim)?$")
MIRRORS = ["deb http://deb.debian.org/debian bookworm main",
           "deb http://deb.debian.org/debian bookworm-updates main",
           "deb http://deb.debian.org/debian-security bookworm-security main"]
ROOT_CCACHE = "/ccache"


class CheckError(Exception):
    """A failed step: the message says which and why."""


@dataclass
class Step:
    line: int
    instruction: str
    args: str


@dataclass
class Stage:
    base: str
    name: str
    steps: list = field(default_factory=list)


# --- Parsing --------------------------------------------------------------

def logical_lines(text):
    """(first line number, text) per instruction: continuations joined,
    comments and blank lines dropped, as Docker reads them."""
    out, pending, start = [], "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("#") or not stripped:
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        out.append((start, pending + stripped))
        pending = ""
    if pending:
        out.append((start, pending))
    return out


def parse_dockerfile(path):
    with open(path) as f:
        text = f.read()
    stages = []
    for line, content in logical_lines(text):
        instruction, _, args = content.partition(" ")
        instruction = instruction.upper()
        args = args.strip()
        if instruction not in INSTRUCTIONS:
            raise CheckError(f"{path}:{line}: {instruction} is not an "
                             "instruction image_check.py knows")
        if instruction == "FROM":
            stages.append(parse_from(path, line, args))
        elif not stages:
            raise CheckError(f"{path}:{line}: {instruction} before FROM")
        else:
            stages[-1].steps.append(Step(line, instruction, args))
    if not stages:
        raise CheckError(f"{path}: no FROM")
    return stages


def parse_from(path, line, args):
    words = args.split()
    if len(words) == 3 and words[1].upper() == "AS":
        image, name = words[0], words[2]
    elif len(words) == 1:
        image, name = words[0], ""
    else:
        raise CheckError(f"{path}:{line}: FROM {args}: want IMAGE [AS NAME]")
    if not BASE_IMAGE.match(image):
        raise CheckError(f"{path}:{line}: base {image}: only debian:12 and "
                         "debian:12-slim can be made with mmdebstrap here")
    return Stage(image, name)


def expand(text, variables):
    """$NAME and ${NAME} as Docker expands them outside RUN."""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)",
                  lambda m: variables.get(m.group(1) or m.group(2), ""), text)


# --- The build context ----------------------------------------------------

def ignore_patterns(dockerfile):
    """<Dockerfile>.dockerignore beside the Dockerfile (BuildKit's rule),
    else .dockerignore at the context root is not looked for: the
    Dockerfile's own file is what `docker build -f` uses here."""
    path = dockerfile + ".dockerignore"
    if not os.path.exists(path):
        return []
    patterns = []
    with open(path) as f:
        for raw in f:
            pattern = raw.strip()
            if not pattern or pattern.startswith("#"):
                continue
            if pattern.startswith("!"):
                raise CheckError(f"{path}: exceptions (!) are not supported")
            patterns.append(pattern_regex(pattern.strip("/")))
    return patterns


def pattern_regex(pattern):
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def copy_context(context, patterns, destination):
    """The context's files into destination, less what the patterns
    exclude (a directory that matches takes everything under it)."""
    for directory, dirs, files in os.walk(context):
        relative = os.path.relpath(directory, context)
        prefix = "" if relative == "." else relative + "/"
        dirs[:] = [d for d in dirs
                   if not any(p.match(prefix + d) for p in patterns)]
        os.makedirs(os.path.join(destination, relative), exist_ok=True)
        for name in files:
            if any(p.match(prefix + name) for p in patterns):
                continue
            source = os.path.join(directory, name)
            target = os.path.join(destination, relative, name)
            if os.path.islink(source):
                os.symlink(os.readlink(source), target)
            else:
                shutil.copy2(source, target)


# --- Roots and commands in them -------------------------------------------

def make_root(root, debs, extra_packages):
    """A fresh bookworm minbase root; the .debs it fetched are kept in
    `debs` for the next run."""
    command = ["mmdebstrap", "--variant=minbase", "--mode=root", "--quiet",
               "--skip=essential/unlink",
               "--setup-hook=mkdir -p \"$1\"/var/cache/apt/archives/",
               f"--setup-hook=sync-in {debs} /var/cache/apt/archives/",
               f"--customize-hook=sync-out /var/cache/apt/archives {debs}"]
    if extra_packages:
        command.append("--include=" + ",".join(extra_packages))
    command += ["bookworm", root] + MIRRORS
    run_host(command, "mmdebstrap")


def run_host(command, what):
    result = subprocess.run(command)
    if result.returncode != 0:
        raise CheckError(f"{what} failed with exit code {result.returncode}")


def chroot_script(root, mounts, workdir, user, argv, env):
    """A shell script for `unshare`: mounts what Docker provides a step
    (private to the namespace, so they vanish with it), then runs argv in
    the root with exactly `env`."""
    q = shlex.quote
    lines = ["set -e",
             f"mount --rbind /dev {q(root + '/dev')}",
             f"mount -t proc proc {q(root + '/proc')}",
             f"mount --rbind /sys {q(root + '/sys')}",
             f"cp -L /etc/hosts {q(root + '/etc/hosts')}",
             f"cp -L /etc/resolv.conf {q(root + '/etc/resolv.conf')}"]
    for host, inside in mounts:
        lines.append(f"mkdir -p {q(root + inside)}")
        lines.append(f"mount --bind {q(host)} {q(root + inside)}")
    userspec = f"--userspec={q(user)} " if user else ""
    environment = " ".join(q(f"{k}={v}") for k, v in env.items())
    inner = f"cd {q(workdir)} && exec " + " ".join(q(a) for a in argv)
    lines.append(f"exec chroot {userspec}{q(root)} /usr/bin/env -i "
                 f"{environment} /bin/sh -c {q(inner)}")
    return "\n".join(lines)


def in_root(root, argv, *, workdir="/", user="", env=None, mounts=(),
            capture=False, background=False):
    script = chroot_script(root, list(mounts), workdir, user, argv,
                           env or {"PATH": DEFAULT_PATH, "HOME": "/root"})
    command = ["unshare", "--mount", "--propagation", "private", "--pid",
               "--fork", "--kill-child", "/bin/sh", "-c", script]
    if background:
        return subprocess.Popen(command, start_new_session=True)
    return subprocess.run(command, capture_output=capture, text=capture)


def remove_root(root):
    """rm -rf that never crosses into a mount still there."""
    with open("/proc/self/mountinfo") as f:
        if any((" " + root + "/") in line or (" " + root + " ") in line
               for line in f):
            raise CheckError(f"{root} still has mounts; not removed")
    subprocess.run(["rm", "-rf", "--one-file-system", root], check=True)


# --- Running a stage ------------------------------------------------------

class StageRun:
    """One stage's root and what its steps have set so far."""

    def __init__(self, stage, root, options):
        self.stage, self.root, self.options = stage, root, options
        self.args, self.env = {}, {"PATH": DEFAULT_PATH}
        self.workdir, self.user = "/", ""
        self.labels, self.entrypoint, self.cmd = {}, [], []
        self.context_copy = ""

    def variables(self):
        return {**self.args, **self.env}

    def apply(self, step):
        handler = getattr(self, "do_" + step.instruction.lower())
        try:
            handler(step.args)
        except CheckError as e:
            raise CheckError(f"{self.options.dockerfile}:{step.line}: "
                             f"{step.instruction}: {e}") from None

    def do_arg(self, args):
        name, has_default, default = args.partition("=")
        given = self.options.build_args.get(name)
        self.args[name] = given if given is not None else (
            expand(default, self.variables()) if has_default else "")

    def do_env(self, args):
        for word in shlex.split(args):
            name, has_value, value = word.partition("=")
            if not has_value:
                raise CheckError("want NAME=VALUE")
            self.env[name] = expand(value, self.variables())

    def do_workdir(self, args):
        path = expand(args, self.variables())
        self.workdir = os.path.normpath(os.path.join(self.workdir, path))
        os.makedirs(self.root + self.workdir, exist_ok=True)

    def do_run(self, args):
        if args.startswith("["):
            raise CheckError("the exec form of RUN is not supported")
        env = {"HOME": "/root", **self.args, **self.env}
        mounts = []
        if self.options.ccache_dir and not self.is_last():
            mounts.append((self.options.ccache_dir, ROOT_CCACHE))
            env.update(CCACHE_DIR=ROOT_CCACHE, CCACHE_NOHASHDIR="1",
                       CCACHE_BASEDIR=self.context_copy or self.workdir,
                       CCACHE_MAXSIZE=os.environ.get("CCACHE_MAXSIZE", "8G"))
        mounts.append((self.options.debs, "/var/cache/apt/archives"))
        result = in_root(self.root, ["/bin/sh", "-c", args],
                         workdir=self.workdir, user=self.user, env=env,
                         mounts=mounts)
        if result.returncode != 0:
            raise CheckError(f"exit code {result.returncode}")

    def do_copy(self, args):
        words = shlex.split(args)
        source_stage = None
        while words and words[0].startswith("--"):
            flag = words.pop(0)
            if not flag.startswith("--from="):
                raise CheckError(f"{flag} is not supported")
            source_stage = flag[len("--from="):]
        if len(words) != 2:
            raise CheckError("want one source and one destination")
        source, target = (expand(w, self.variables()) for w in words)
        target = os.path.normpath(os.path.join(self.workdir, target))
        if source_stage is None:
            self.copy_from_context(source, target)
        else:
            self.copy_from_stage(source_stage, source, target)

    def copy_from_context(self, source, target):
        if os.path.normpath(source) != ".":
            raise CheckError("only `COPY . DIR` is supported from the context")
        copy_context(self.options.context, self.options.ignore,
                     self.root + target)
        self.context_copy = target

    def copy_from_stage(self, name, source, target):
        earlier = self.options.roots.get(name)
        if earlier is None:
            raise CheckError(f"no earlier stage named {name}")
        destination = self.root + target
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copy2(earlier + source, destination)

    def do_user(self, args):
        self.user = expand(args, self.variables())

    def do_label(self, args):
        for word in shlex.split(args):
            name, _, value = word.partition("=")
            self.labels[name] = value

    def do_expose(self, args):
        pass  # no network of its own here

    def do_entrypoint(self, args):
        self.entrypoint = exec_form(args)

    def do_cmd(self, args):
        self.cmd = exec_form(args)

    def is_last(self):
        return self.stage is self.options.stages[-1]


def exec_form(args):
    try:
        value = json.loads(args)
    except ValueError:
        value = None
    if not isinstance(value, list) or not all(isinstance(v, str)
                                              for v in value):
        raise CheckError("only the exec form [\"...\"] is supported")
    return value


# --- Checks on the final image --------------------------------------------

def check_libraries(run):
    binary = run.entrypoint[0]
    result = in_root(run.root, ["ldd", binary], capture=True)
    print(result.stdout, end="")
    if result.returncode != 0 or "not found" in result.stdout:
        raise CheckError(f"ldd {binary}: a shared library is missing")


def check_help(run):
    result = in_root(run.root, run.entrypoint + ["--help"], user=run.user,
                     capture=True)
    print(result.stdout, end="")
    if result.returncode != 0 or "usage:" not in result.stdout:
        raise CheckError(f"{' '.join(run.entrypoint)} --help as user "
                         f"{run.user or 'root'}: exit {result.returncode}, "
                         f"{result.stderr.strip()}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def with_listen(cmd, address):
    """The image's CMD with its --listen value replaced by `address`."""
    out, skip = [], False
    for word in cmd:
        if skip:
            out.append(address)
            skip = False
        elif word == "--listen":
            out.append(word)
            skip = True
        elif word.startswith("--listen="):
            out.append("--listen=" + address)
        else:
            out.append(word)
    return out if "--listen" in out or any(
        w.startswith("--listen=") for w in out) else out + ["--listen",
                                                            address]


def check_serves(run, seconds=30):
    """The image's default command, as its USER, answers /readyz and stops
    with exit 0 on SIGTERM (on a loopback port: the network is the host's)."""
    port = free_port()
    argv = run.entrypoint + with_listen(run.cmd, f"127.0.0.1:{port}")
    process = in_root(run.root, argv, user=run.user, background=True)
    try:
        deadline = time.monotonic() + seconds
        while True:
            try:
                url = f"http://127.0.0.1:{port}/readyz"
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise CheckError(f"{' '.join(argv)}: not ready on port {port}")
            time.sleep(0.2)
        os.killpg(process.pid, signal.SIGTERM)
        code = process.wait(timeout=seconds)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if code != 0:
        raise CheckError(f"{' '.join(argv)}: exit {code} after SIGTERM")
    print(f"image-check: {' '.join(argv)} answered /readyz, exit 0 on SIGTERM")


# --- Main -------------------------------------------------------------------

def timed(label, function, *args):
    start = time.monotonic()
    function(*args)
    print(f"image-check: {label}: {time.monotonic() - start:.0f} s",
          flush=True)


def run_stage(stage, root, options):
    extra = ["ccache"] if options.ccache_dir and stage is not options.stages[
        -1] else []
    timed(f"stage {stage.name or stage.base}: root of {stage.base}",
          make_root, root, options.debs, extra)
    run = StageRun(stage, root, options)
    for step in stage.steps:
        print(f"image-check: {options.dockerfile}:{step.line}: "
              f"{step.instruction} {step.args[:70]}", flush=True)
        timed(f"{step.instruction} at line {step.line}", run.apply, step)
    return run


def host_ccache_dir():
    if shutil.which("ccache") is None:
        return ""
    result = subprocess.run(["ccache", "--get-config", "cache_dir"],
                            capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else ""


def parse_options(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dockerfile", default=os.path.join(here,
                                                             "Dockerfile"))
    parser.add_argument("--context", default=os.path.dirname(here))
    parser.add_argument("--build-arg", action="append", default=[])
    parser.add_argument("--keep", default="",
                        help="make the roots here and keep them")
    options = parser.parse_args(argv)
    options.build_args = dict(a.partition("=")[::2] for a in options.build_arg)
    options.context = os.path.abspath(options.context)
    options.ignore = ignore_patterns(options.dockerfile)
    cache = os.environ.get("IMAGE_CHECK_CACHE") or os.path.expanduser(
        "~/.cache/gpusched-image-check")
    options.debs = os.path.join(cache, "debs")
    os.makedirs(options.debs, exist_ok=True)
    options.ccache_dir = host_ccache_dir()
    options.roots = {}
    return options


def check(options):
    options.stages = parse_dockerfile(options.dockerfile)
    workdir = options.keep or tempfile.mkdtemp(prefix="image-check-")
    os.makedirs(workdir, exist_ok=True)
    try:
        run = None
        for index, stage in enumerate(options.stages):
            root = os.path.join(workdir, stage.name or f"stage{index}")
            options.roots[stage.name or str(index)] = root
            run = run_stage(stage, root, options)
        timed("ldd", check_libraries, run)
        timed("--help", check_help, run)
        timed("serve", check_serves, run)
    finally:
        if not options.keep:
            for root in options.roots.values():
                if os.path.exists(root):
                    remove_root(root)
            os.rmdir(workdir)


def main(argv):
    # In step with the output of the commands it runs, also into a file.
    sys.stdout.reconfigure(line_buffering=True)
    if os.geteuid() != 0:
        print("image-check: needs root (mmdebstrap --mode=root, chroot, "
              "mount)", file=sys.stderr)
        return 2
    start = time.monotonic()
    try:
        options = parse_options(argv)
        check(options)
    except CheckError as e:
        print(f"image-check: FAILED: {e}", file=sys.stderr)
        return 1
    print(f"image-check: OK in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
