"""The kernel's own queue disciplines, built in user space from Debian's linux-source package.

`harness(name)` returns an executable that runs Linux's `net/sched/sch_<name>.c` on a
schedule (harness/harness.h describes its input and output). It is built at test time from
the installed package, never from a copy in this repository:

1. the files below are extracted from `/usr/src/linux-source-6.1.tar.xz` (Debian's
   `linux-source-6.1`; `AQMLAB_LINUX_SOURCE` names another tarball) into a cache directory
   under the build folder (`target/linux_qdisc/`, or `$CARGO_TARGET_DIR/linux_qdisc/`);
2. an include directory is assembled there: the algorithm headers (`VERBATIM`) link to the
   extracted files, and every other kernel header they or the discipline name becomes a
   one-line file that includes our shim (`shim/kshim.h`: sk_buff, Qdisc, time, random
   source, lists, timers, netlink reduced to what the disciplines touch);
3. gcc compiles our harness with the discipline's `.c` file passed by `-include`, so that its
   static functions and structures are in the harness's translation unit.

A discipline newer than the package (`EXTERNAL`: DualPI2, merged in Linux 6.17) comes instead
from a directory named by an environment variable (`AQMLAB_DUALPI2_SOURCE`): a kernel tree, or
any directory holding the same relative paths (`net/sched/sch_dualpi2.c` and the uapi
`include/uapi/linux/pkt_sched.h` that defines its attributes). Its files are copied into their
own cache directory (keyed by their contents) with their own include directory, where the
uapi header shadows the system's. Without it, `source_tree` raises KernelSourceMissing with
one line saying what to set; the suite then replays the committed fixture of the kernel's
logs (`fixture.py`) instead of running the harness.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
PACKAGE = "linux-source-6.1"

# Kernel files each harness compiles, in order (-include), and the headers used as shipped.
SOURCES = {
    "codel": ["net/sched/sch_codel.c"],
    "fq_codel": ["net/sched/sch_fq_codel.c"],
    "pie": ["net/sched/sch_pie.c"],
    "fq_pie": ["net/sched/sch_pie.c", "net/sched/sch_fq_pie.c"],
    "cake": ["net/sched/sch_cake.c"],
    "dualpi2": ["net/sched/sch_dualpi2.c"],
    "red": ["net/sched/sch_red.c"],
}
# Disciplines the package lacks: the environment variable naming their source directory, and
# the uapi headers taken from that directory as shipped (our include name: its path there).
EXTERNAL = {
    "dualpi2": (
        "AQMLAB_DUALPI2_SOURCE",
        {"linux/pkt_sched.h": "include/uapi/linux/pkt_sched.h"},
    ),
}
VERBATIM = {
    "net/codel.h": "include/net/codel.h",
    "net/codel_impl.h": "include/net/codel_impl.h",
    "net/codel_qdisc.h": "include/net/codel_qdisc.h",
    "net/pie.h": "include/net/pie.h",
    "net/red.h": "include/net/red.h",
    "linux/pkt_sched.h": "include/uapi/linux/pkt_sched.h",
    "linux/pkt_cls.h": "include/uapi/linux/pkt_cls.h",
}
MEMBERS = sorted(
    {p for n, s in SOURCES.items() if n not in EXTERNAL for p in s}
    | set(VERBATIM.values())
    | {"Makefile"}
)
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


class KernelSourceMissing(RuntimeError):
    """The linux-source package is not installed (and no other tarball was named)."""


@dataclass(frozen=True)
class KernelTree:
    root: Path  # the extracted files, kernel-relative paths below it
    version: str  # the kernel's VERSION.PATCHLEVEL.SUBLEVEL (its Makefile)
    package: str  # the Debian package version, or the tarball's name


def tarball() -> Path:
    path = Path(os.environ.get("AQMLAB_LINUX_SOURCE", TARBALL))
    if not path.is_file():
        raise KernelSourceMissing(
            f"{path} is missing: install Debian's {PACKAGE} package "
            f"(apt-get install {PACKAGE}) or set AQMLAB_LINUX_SOURCE to a kernel tarball"
        )
    return path


def cache_dir() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "linux_qdisc"


def _package_version(path: Path) -> str:
    if path != TARBALL:
        return path.name
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", PACKAGE],
            capture_output=True,
            text=True,
            check=True,
        )
        return f"{PACKAGE} {out.stdout.strip()}"
    except (OSError, subprocess.CalledProcessError):
        return path.name


def _kernel_version(makefile: Path) -> str:
    text = makefile.read_text()
    parts = [
        re.search(rf"^{k}\s*=\s*(\S+)", text, re.M) for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL")
    ]
    return ".".join(m.group(1) for m in parts if m)


def extract() -> KernelTree:
    """The extracted files (extracting them the first time: about a minute for the xz)."""
    src = tarball()
    st = src.stat()
    ident = f"{src}:{st.st_size}:{st.st_mtime_ns}:{','.join(MEMBERS)}"
    key = hashlib.sha256(ident.encode()).hexdigest()[:12]
    dest = cache_dir() / f"src-{key}"
    done = dest / ".extracted"
    if not done.exists():
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        patterns = [f"*/{m}" for m in MEMBERS]
        subprocess.run(
            ["tar", "-xJf", str(src), "-C", str(dest), "--wildcards", *patterns],
            check=True,
        )
        tops = [p for p in dest.iterdir() if p.is_dir()]
        if len(tops) != 1:
            raise KernelSourceMissing(f"{src}: expected one top directory, found {tops}")
        tops[0].rename(dest / "linux")
        done.write_text(_package_version(src) + "\n")
    root = dest / "linux"
    return KernelTree(root, _kernel_version(root / "Makefile"), done.read_text().strip())


def git_blob(data: bytes) -> str:
    """The file's git blob id (`git hash-object`): names an upstream file exactly."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def source_dir(name: str) -> Path:
    """The directory an EXTERNAL discipline's source comes from (its environment variable),
    or KernelSourceMissing with one line saying why it cannot be had."""
    var, headers = EXTERNAL[name]
    value = os.environ.get(var)
    if not value:
        raise KernelSourceMissing(
            f"{SOURCES[name][0]} is not in {PACKAGE} (Linux 6.17 and later only): set {var} "
            f"to a kernel tree (or a directory with {SOURCES[name][0]} and "
            f"{', '.join(headers.values())})"
        )
    root = Path(value)
    missing = [p for p in SOURCES[name] + list(headers.values()) if not (root / p).is_file()]
    if missing:
        raise KernelSourceMissing(f"{var}={value}: missing {', '.join(missing)}")
    return root


def external_tree(name: str) -> KernelTree:
    """An EXTERNAL discipline's files, copied into a cache directory keyed by their contents
    (version: the tree's Makefile when there is one, else the source file's git blob)."""
    root = source_dir(name)
    _, headers = EXTERNAL[name]
    rel = SOURCES[name] + list(headers.values())
    digest = hashlib.sha256()
    for p in rel:
        digest.update(p.encode() + b"\0" + (root / p).read_bytes())
    dest = cache_dir() / f"{name}-{digest.hexdigest()[:12]}"
    if not (dest / ".copied").exists():
        for p in rel:
            (dest / "linux" / p).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / p, dest / "linux" / p)
        (dest / ".copied").write_text(str(root) + "\n")
    tree = dest / "linux"
    makefile = root / "Makefile"
    source = (root / SOURCES[name][0]).read_bytes()
    if makefile.is_file():
        version = _kernel_version(makefile)
    else:
        version = f"{Path(SOURCES[name][0]).name} blob {git_blob(source)[:12]}"
    return KernelTree(tree, version, str(root))


def source_tree(name: str) -> KernelTree:
    """The kernel files discipline `name` is built from."""
    return external_tree(name) if name in EXTERNAL else extract()


def _include_dir(tree: KernelTree, files: list[Path], verbatim: dict[str, str]) -> Path:
    """Our include directory for these kernel files: verbatim algorithm headers, a stub for
    every other kernel header named (transitively). `verbatim` headers are linked whether
    named or not (an EXTERNAL tree's uapi header, which shadows the system's)."""
    inc = tree.root.parent / "include"
    shim = (HERE / "shim" / "kshim.h").resolve()
    todo = list(files)
    seen: set[str] = set()
    for name, path in verbatim.items():
        out = inc / name
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.is_symlink() or out.exists():
            out.unlink()
        out.symlink_to(tree.root / path)
        seen.add(name)
        todo.append(tree.root / path)
    while todo:
        text = todo.pop().read_text()
        for name in INCLUDE.findall(text):
            if name in seen or "/" not in name:
                continue
            seen.add(name)
            out = inc / name
            out.parent.mkdir(parents=True, exist_ok=True)
            if name in VERBATIM:
                target = tree.root / VERBATIM[name]
                if out.is_symlink() or out.exists():
                    out.unlink()
                out.symlink_to(target)
                todo.append(target)
            elif not out.exists():
                out.write_text(f'#include "{shim}"\n')
    return inc


def harness_files(name: str) -> list[Path]:
    """Our side of discipline `name`'s harness: its .c file first, then what it includes."""
    harness_dir, shim = HERE / "harness", HERE / "shim"
    return [
        harness_dir / f"harness_{name}.c",
        harness_dir / "harness.h",
        harness_dir / "attrs.h",
        shim / "kshim.h",
        shim / "kshim_net.h",
        shim / "kshim_child.h",
    ]


def harness(name: str) -> tuple[Path, KernelTree]:
    """The harness executable for discipline `name` (built when its inputs changed)."""
    tree = source_tree(name)
    sources = [tree.root / p for p in SOURCES[name]]
    ours = harness_files(name)
    digest = hashlib.sha256()
    for f in sources + ours:
        digest.update(f.read_bytes())
    exe = tree.root.parent / "bin" / f"harness_{name}-{digest.hexdigest()[:12]}"
    if exe.exists():
        return exe, tree
    inc = _include_dir(tree, sources, EXTERNAL[name][1] if name in EXTERNAL else {})
    exe.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["gcc", "-O1", "-std=gnu11", "-w", "-fno-strict-aliasing", "-I", str(inc)]
    cmd += ["-I", str(HERE / "harness")]
    for s in sources:
        cmd += ["-include", str(s)]
    cmd += [str(ours[0]), "-o", str(exe) + ".tmp"]
    subprocess.run(cmd, check=True)
    os.replace(str(exe) + ".tmp", exe)
    return exe, tree


def run(name: str, schedule: str, random_words: bytes, workdir: Path) -> list[str]:
    """Runs discipline `name`'s harness on `schedule` (the text harness.h reads) with the
    random stream `random_words` (little-endian u32s); returns its log lines."""
    exe, _ = harness(name)
    workdir.mkdir(parents=True, exist_ok=True)
    rnd = workdir / f"{name}.random"
    rnd.write_bytes(random_words)
    out = subprocess.run(
        [str(exe), str(rnd)], input=schedule, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"harness_{name} failed ({out.returncode}): {out.stderr.strip()}")
    return out.stdout.splitlines()
