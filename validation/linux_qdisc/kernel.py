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
MEMBERS = sorted({p for s in SOURCES.values() for p in s} | set(VERBATIM.values()) | {"Makefile"})
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


def _include_dir(tree: KernelTree, files: list[Path]) -> Path:
    """Our include directory for these kernel files: verbatim algorithm headers, a stub for
    every other kernel header named (transitively)."""
    inc = tree.root.parent / "include"
    shim = (HERE / "shim" / "kshim.h").resolve()
    todo = list(files)
    seen: set[str] = set()
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


def harness(name: str) -> tuple[Path, KernelTree]:
    """The harness executable for discipline `name` (built when its inputs changed)."""
    tree = extract()
    sources = [tree.root / p for p in SOURCES[name]]
    ours = [HERE / "harness" / f"harness_{name}.c", HERE / "harness" / "harness.h"]
    ours += [HERE / "harness" / "attrs.h", HERE / "shim" / "kshim.h", HERE / "shim" / "kshim_net.h"]
    digest = hashlib.sha256()
    for f in sources + ours:
        digest.update(f.read_bytes())
    exe = tree.root.parent / "bin" / f"harness_{name}-{digest.hexdigest()[:12]}"
    if exe.exists():
        return exe, tree
    inc = _include_dir(tree, sources)
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
