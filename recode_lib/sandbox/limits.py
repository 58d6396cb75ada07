"""Isolation and resource limits, applied by the warm worker (zygote.py) to itself and its children.

    iso = setup_worker(cfg)          # once, in the worker: picks and prepares the isolation mode
    confine(iso, cfg, job, keep_fds) # in each forked child, before any submission code runs
    reap(iso)                        # in the worker, after a child ended: kill what it left
    alone(iso, pid)                  # is the child one thread with no other process around?
    kill_uid(uid)                    # (judge side, as root) kill every process of a uid

Not covered: plain mode's view of the file system, where the filter is the only guard against
unix sockets.
More: docs/modules/sandbox.md (recode_lib.sandbox.limits).
"""

import ctypes
import fcntl
import os
import random
import re
import resource
import signal
import socket
import stat
import sys
import tempfile
import time

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWUSER = 0x20000, 0x08000000, 0x40000000, 0x10000000
CLONE_NEWPID = 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1,
    2,
    4,
    32,
    4096,
    16384,
    1 << 18,
)
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 38, 36
PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 4, 24, 47, 4
MS_NOEXEC = 8
MNT_DETACH = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
ROOT = "/tmp/root"  # inside a tmpfs mounted over /tmp in the worker's own mount namespace
KEEP = "/tmp/keep"  # beside ROOT (so never visible in a child): skeleton of tmp_paths()
EMPTY = "/tmp/empty"  # beside ROOT: the empty second layer of every overlay (_overlay_ro)
_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def _mount(src, dst, fstype, flags, data=None):
    _check(
        _libc.mount(
            src and src.encode(),
            dst.encode(),
            fstype and fstype.encode(),
            flags,
            data and data.encode(),
        ),
        "mount %s" % dst,
    )


def _write(path, text):
    with open(path, "w") as fh:
        fh.write(text)


def _makedirs(path):
    mask = os.umask(0o022)  # directories made on the way stay traversable for the child's uid
    try:
        os.makedirs(path, exist_ok=True)
    finally:
        os.umask(mask)


def _bind_ro(src, dst, is_dir=True):
    _makedirs(dst if is_dir else os.path.dirname(dst))
    if not is_dir and not os.path.lexists(dst):  # (a file mount point in an overlay exists)
        open(dst, "a").close()
    _mount(src, dst, None, MS_BIND | MS_REC)
    try:
        _mount(None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV * is_dir)
    except OSError:
        _libc.umount2(dst.encode(), MNT_DETACH)  # never left writable
        raise


def _bind_file_ro(src, dst):
    """Bind the file `src` read-only at dst if it is a regular file (checked on the very inode
    that is bound: never a socket, device or fifo). Returns whether it did."""
    fd = os.open(src, os.O_PATH)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        _bind_ro("/proc/self/fd/%d" % fd, dst, is_dir=False)
        return True
    finally:
        os.close(fd)


def _overlay_ro(src, dst):
    """Mount a read-only overlay of the directory `src` at dst: its one real layer, over EMPTY
    (a lower-only overlay needs two layers). Every inode seen through it is the overlay's own,
    so no socket bound in `src` (now or later) is found by connect(2) or sendto(2) there:
    af_unix looks a path up to the inode it was bound on. Raises OSError where the kernel
    refuses (no overlayfs, an unsupported lower file system, the stacking depth)."""
    _makedirs(dst)
    fd = os.open(src, os.O_PATH | os.O_DIRECTORY)  # a plain path: no escaping of ':' or ','
    try:
        _mount(
            "overlay",
            dst,
            "overlay",
            MS_RDONLY | MS_NOSUID | MS_NODEV,
            "lowerdir=/proc/self/fd/%d:%s" % (fd, EMPTY),
        )
    finally:
        os.close(fd)


def _mount_points():
    """The visible mount points of this mount namespace, in mount order (one hidden by a
    later mount on it or above it left out)."""
    out = []
    try:
        with open("/proc/self/mountinfo", "rb") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(b" ")
        if len(parts) < 5:
            continue
        point = os.fsdecode(
            re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), parts[4])
        )
        out = [p for p in out if p != point and not p.startswith(point.rstrip("/") + "/")]
        out.append(point)
    return out


def _show_dir(host, src, dst, mounts):
    """Show the host directory `host` (reached as `src`) read-only at dst, with the file
    systems mounted below it: overlays (_overlay_ro) for directories, binds of regular files
    (a socket or device mounted over a file is left out). Returns True if every directory is
    an overlay; False where one had to be a bind (host sockets there stay reachable: the
    caller turns restrict_syscalls' unix filter on)."""
    try:
        _overlay_ro(src, dst)
    except OSError:
        _bind_ro(src, dst)  # recursive: what is mounted below comes with it
        return False
    hidden = True
    for point in mounts:
        if not point.startswith(host.rstrip("/") + "/"):
            continue
        sub_src, sub_dst = src + point[len(host) :], dst + point[len(host) :]
        try:
            if os.path.isdir(sub_src):
                try:
                    _overlay_ro(sub_src, sub_dst)
                except OSError:
                    _bind_ro(sub_src, sub_dst)
                    hidden = False
            else:
                _bind_file_ro(sub_src, sub_dst)
        except OSError:
            pass  # not shown: the overlay above shows what lies under the mount point
    return hidden


def _overlay_hides_sockets():
    """Whether this kernel's overlays hide sockets: a listener bound in a scratch directory
    is refused when reached through an overlay of it (af_unix finds a socket by the inode it
    was bound on; a kernel that looked through the overlay to the real inode would connect)."""
    low, view = KEEP + "-probe", KEEP + "-view"
    os.mkdir(low, 0o700)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    cli = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        srv.bind(low + "/s")
        srv.listen(1)
        _overlay_ro(low, view)
        try:
            cli.connect(view + "/s")
            return False
        except ConnectionRefusedError:
            return True
        finally:
            _libc.umount2(view.encode(), MNT_DETACH)
    except OSError:
        return False
    finally:
        srv.close()
        cli.close()
        for path in (low + "/s", low, view):
            try:
                (os.rmdir if path != low + "/s" else os.unlink)(path)
            except OSError:
                pass


def tmp_paths(cwd=None):
    """The /tmp-resident paths a fresh start of this interpreter reads, as sorted
    (path, is_dir) pairs with no path inside another: the directory of sys.executable (and of
    each symlink hop to the real binary, e.g. a venv's bin/ and the base's bin/), pyvenv.cfg,
    the base installation's lib/ (standard library, libpython, the shared libraries extension
    modules load later), the standard library and every site-/dist-packages directory on
    sys.path, and the files mapped into this process. Never /tmp itself nor a directory holding
    `cwd` (the judge's working directory, where runs/ may live); sys.path entries of other kinds
    (the project checkout of an editable install, the zygote's own directory) are left out."""
    cwd = os.path.realpath(cwd or os.getcwd())

    def under_tmp(p):
        return p.startswith("/tmp/") and p != "/tmp/"

    found = {}
    hop = os.path.abspath(sys.executable)
    for _ in range(40):  # a symlink chain; each hop's directory must resolve inside the child
        found.setdefault(os.path.dirname(hop), True)
        if not os.path.islink(hop):
            break
        hop = os.path.normpath(os.path.join(os.path.dirname(hop), os.readlink(hop)))
    found.setdefault(os.path.dirname(os.path.realpath(sys.executable)), True)
    base_exe = getattr(sys, "_base_executable", None)
    if base_exe:
        found.setdefault(os.path.dirname(os.path.abspath(base_exe)), True)
    for prefix in {sys.prefix, sys.exec_prefix}:
        found.setdefault(os.path.join(prefix, "pyvenv.cfg"), False)
    stdlib = os.path.dirname(os.path.abspath(os.__file__))
    found.setdefault(stdlib, True)
    for prefix in {sys.base_prefix, sys.base_exec_prefix}:  # libraries that extension modules
        found.setdefault(os.path.join(prefix, "lib"), True)  # load later ($ORIGIN/../lib)
    for p in sys.path:
        p = os.path.abspath(p) if p else ""
        if (
            p == stdlib
            or p.startswith(stdlib + "/")
            or os.path.basename(p) in ("site-packages", "dist-packages")
        ):
            found.setdefault(p, True)
    for p in _mapped_files():
        found.setdefault(p, False)
    out = []
    for p, is_dir in sorted(found.items()):
        if not under_tmp(p) or not (os.path.isdir(p) if is_dir else os.path.isfile(p)):
            continue
        real = os.path.realpath(p)
        if any(x == real or x.startswith(real.rstrip("/") + "/") for x in (cwd, "/tmp")):
            continue  # would show the judge's directory or the whole host /tmp
        if any(p.startswith(q + "/") for q, _ in out):
            continue  # already visible through a directory above it
        out.append((p, is_dir))
    return out


def _mapped_files():
    """Regular files mapped into this process (the interpreter binary, libpython, loaded
    extension modules and their libraries)."""
    paths = set()
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                parts = line.rstrip("\n").split(None, 5)
                if (
                    len(parts) == 6
                    and parts[5].startswith("/")
                    and not parts[5].endswith(" (deleted)")
                ):
                    paths.add(parts[5])
    except OSError:
        pass
    return sorted(p for p in paths if os.path.isfile(p))


def _python_dirs():
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for p in sys.path:
        if "site-packages" in p or "dist-packages" in p or p.startswith(sys.base_prefix):
            dirs.add(p)
    return sorted({os.path.realpath(d) for d in dirs if os.path.isdir(d)} | dirs)


def _build_root():
    """Inside the worker's private mount namespace: a read-only root with system + Python.
    Returns (rebind, hidden). rebind: the re-binds each child makes after mounting its own
    /tmp: [(kept, path, is_dir)], one per top-level name under /tmp, of a read-only skeleton
    under KEEP (outside the root) that holds only the views of tmp_paths() at their paths.
    hidden: whether no host socket can be reached through the root (every directory of the
    host is shown through an overlay, and this kernel's overlays hide sockets); when False,
    restrict_syscalls refuses AF_UNIX sockets in the children instead."""
    mask = os.umask(0o022)  # the root stays traversable for the child's uid whatever the umask
    try:
        return _build_root_tree()
    finally:
        os.umask(mask)


def _build_root_tree():
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    keep = tmp_paths()
    mounts = _mount_points()  # the host's, before /tmp is covered
    old_tmp = os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY)  # keeps a venv under /tmp reachable
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID, "size=1m,mode=755")
    os.mkdir(ROOT, 0o755)
    os.mkdir(EMPTY, 0o755)
    hidden = _overlay_hides_sockets()
    done = []
    for d in ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc"] + _python_dirs():
        if (
            d == "/tmp"
            or d.startswith("/tmp/")
            or not os.path.exists(d)
            or any(d == p or d.startswith(p.rstrip("/") + "/") for p in done)
        ):
            continue
        dst = ROOT + d
        if os.path.islink(d) and os.path.dirname(d) == "/":
            os.symlink(os.readlink(d), dst)
            continue
        if os.path.lexists(dst):
            continue
        hidden = _show_dir(os.path.realpath(d), d, dst, mounts) and hidden
        done.append(d)
    for f in _mapped_files():  # e.g. a libpython found through an absolute RUNPATH
        if not f.startswith("/tmp/") and not os.path.exists(ROOT + f):
            _bind_file_ro(f, ROOT + f)
    os.mkdir(KEEP, 0o700)
    tops = {}  # a skeleton of /tmp holding only the kept views: one recursive bind per child
    for path, is_dir in keep:
        src = "/proc/self/fd/%d%s" % (old_tmp, path[4:])
        if is_dir:
            hidden = _show_dir(path, src, KEEP + path[4:], mounts) and hidden
        else:
            _bind_file_ro(src, KEEP + path[4:])
        top = path[5:].split("/", 1)[0]
        tops[top] = tops.get(top, False) or is_dir or "/" in path[5:]
    rebind = [(KEEP + "/" + top, "/tmp/" + top, is_dir) for top, is_dir in sorted(tops.items())]
    os.makedirs(ROOT + "/dev", exist_ok=True)
    for dev in ("null", "zero", "random", "urandom", "full"):
        if os.path.exists("/dev/" + dev):
            open(ROOT + "/dev/" + dev, "a").close()
            _mount("/dev/" + dev, ROOT + "/dev/" + dev, None, MS_BIND)
    os.makedirs(ROOT + "/proc", exist_ok=True)
    _mount("/proc", ROOT + "/proc", None, MS_BIND | MS_REC)
    os.makedirs(ROOT + "/tmp", exist_ok=True)
    os.symlink("/tmp", ROOT + "/dev/shm")
    os.makedirs(ROOT + "/var", exist_ok=True)
    os.symlink("/tmp", ROOT + "/var/tmp")
    os.close(old_tmp)
    _mount(None, "/tmp", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID)
    return rebind, hidden


def _count_user_processes(uid):
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                n += os.stat("/proc/" + pid).st_uid == uid
            except OSError:
                pass
    return n


def uid_claim_dir():
    """Where root-mode workers claim their uid ranges: /dev/shm (memory, gone at reboot) when
    present, else the temp folder; a root-only folder."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    path = os.path.join(base, "recode-sandbox-uids")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def claim_uid_base(tries=64):
    """(uid_base, fd): a random root-mode uid range [base, base + UID_SPAN) that no other live
    worker on this host holds, claimed by an flock held as long as the worker lives (the fd;
    the children close it in confine). Two workers with one range would kill each other's
    children: reap kills every process of the child's uid (kill(-1) as that uid).

    The claim folder stays bounded: each claim first removes the files no live worker holds
    (sweep_uid_claims), so it holds at most one file per live worker plus those of workers
    that ended since the last claim. A claim counts only when the locked file is still the
    one at its path (a sweep may unlink a file between another worker's open and flock)."""
    rng = random.SystemRandom()
    folder = uid_claim_dir()
    sweep_uid_claims(folder)
    for _ in range(tries):
        base = rng.randrange(1 << 4, 1 << 14) * UID_SPAN
        path = os.path.join(folder, str(base))
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        if not _still_linked(fd, path):  # swept between our open and flock: not a claim
            os.close(fd)
            continue
        return base, fd
    raise OSError(0, "no free sandbox uid range after %d tries" % tries)


def _still_linked(fd, path):
    """Whether the file open as fd is the one at path now."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def sweep_uid_claims(folder):
    """Unlink every claim file of `folder` that no live worker holds: each is locked first
    (a held one is skipped), checked to be the file still at its path, unlinked while locked.
    A worker that opened it before the unlink and locks it after sees it unlinked
    (claim_uid_base's check) and draws again, so a live claim is never removed."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.isdigit():
            continue
        path = os.path.join(folder, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _still_linked(fd, path):
                os.unlink(path)
        except OSError:
            pass  # held by a live worker, or already gone
        finally:
            os.close(fd)


def setup_worker(cfg):
    """Choose and prepare the isolation mode in the worker process; returns a dict. Ends by
    giving the worker the children's environment (use_child_environ)."""
    iso = _setup_isolation(cfg)
    use_child_environ()
    iso["environ_set"] = True
    return iso


def _setup_isolation(cfg):
    # no PDEATHSIG here: it fires when the *thread* that started us ends; the worker exits on
    # EOF of its stdin instead (the judge closing or dying)
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    want = cfg.get("isolation", "auto")
    errors = []
    uid = os.getuid()
    if want in ("auto", "root") and uid == 0:
        try:
            _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET), "unshare")
            rebind, hidden = _build_root()
            base, claim = claim_uid_base()
            try:  # as in userns mode: children see only their own pid namespace in /proc
                _check(_libc.unshare(CLONE_NEWPID), "unshare pid")
                init = _start_pid_init()
            except OSError as exc:
                raise RuntimeError("root isolation: no pid namespace: %s" % exc) from None
            return {
                "mode": "root",
                "uid": base,
                "uid_base": base,
                "uid_claim": claim,
                "uid_span": UID_SPAN,
                "seq": 0,
                "nproc": cfg["max_processes"],
                "rebind": rebind,
                "init": init,
                "unix_filter": not hidden,
            }
        except OSError as exc:
            errors.append("root: %s" % exc)
            if want == "root":
                raise
    if want in ("auto", "userns") and uid != 0:
        try:
            gid = os.getgid()
            _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET), "unshare")
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", "%d %d 1" % (uid, uid))
            _write("/proc/self/gid_map", "%d %d 1" % (gid, gid))
            rebind, hidden = _build_root()
            try:  # past unshare(CLONE_NEWUSER) there is no way back to plain mode
                _check(_libc.unshare(CLONE_NEWPID), "unshare pid")
                init = _start_pid_init()
            except OSError as exc:
                raise RuntimeError("userns isolation: no pid namespace: %s" % exc) from None
            n = _count_user_processes(uid) + cfg["max_processes"] + 16
            return {
                "mode": "userns",
                "uid": None,
                "nproc": n,
                "rebind": rebind,
                "init": init,
                "unix_filter": not hidden,
            }
        except OSError as exc:
            errors.append("userns: %s" % exc)
            if want == "userns":
                raise
    n = _count_user_processes(uid) + cfg["max_processes"] + 16
    why = "; ".join(errors)
    if want == "auto":  # never silently: the user learns that submissions run unisolated
        sys.stderr.write(
            "recode sandbox: WARNING: no isolation (plain mode: submissions can "
            "read and write the user's files, use the network and signal the "
            "user's processes): %s\n" % (why or "namespaces unavailable")
        )
        sys.stderr.flush()
    return {
        "mode": "plain",
        "uid": None,
        "nproc": n if uid != 0 else None,
        "why": why,
        "unix_filter": True,
    }


UID_SPAN = 1 << 16  # root mode: a worker's private uids, [uid_base, uid_base + UID_SPAN)


def next_uid(iso):
    """Root mode, in the worker before forking a child: the next uid of the worker's private
    range, so that no two consecutive children (and no two of any UID_SPAN - 1 in a row)
    share a uid and with it the kernel's per-uid state (the user and user-session keyrings,
    the process count). Returns the uid, also kept as iso["uid"] (what confine, reap and
    alone act on); None in the other modes."""
    if iso["mode"] != "root":
        return None
    iso["seq"] = iso["seq"] % (UID_SPAN - 1) + 1
    iso["uid"] = iso["uid_base"] + iso["seq"]
    return iso["uid"]


def confine(iso, cfg, job, keep_fds):
    """In a freshly forked child: isolate, limit, drop privileges. Raises on failure."""
    os.setsid()
    if iso.get("memcg") is not None:  # root mode: before dropping root (memcg.py)
        iso["memcg"].join()
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    keep = sorted(set(keep_fds) | {0, 1, 2})
    lo = 3
    for fd in keep + [65536]:
        if fd >= lo:
            os.closerange(lo, fd)
            lo = fd + 1
    mode = iso["mode"]
    if mode in ("root", "userns"):
        _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWIPC), "unshare")
        owner = ",uid=%d,gid=%d" % (iso["uid"], iso["uid"]) if iso["uid"] else ""
        _mount(
            "tmpfs",
            ROOT + "/tmp",
            "tmpfs",
            MS_NOSUID | MS_NODEV,
            "size=%dm,mode=700%s" % (cfg["tmp_size_mb"], owner),
        )
        for kept, path, is_dir in iso.get("rebind", ()):  # the interpreter's paths under /tmp
            _bind_ro(kept, ROOT + path, is_dir)  # recursive: brings the read-only binds inside
        sysv = cap_sysv_ipc(cfg["tmp_size_mb"])  # before the chroot: /proc/sys is here
        os.chroot(ROOT)
        os.chdir("/tmp")
    else:
        sysv = False  # the user's own IPC namespace: nothing to cap, so none at all
        os.chdir(job["workdir"])
    mem = int(job["memory_mb"]) * 1024 * 1024
    cpu = int(job["cpu_limit_s"]) + 1
    for res, val in (
        (resource.RLIMIT_AS, mem),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_FSIZE, cfg["tmp_size_mb"] * 1024 * 1024),
        (resource.RLIMIT_NOFILE, 256),
        (resource.RLIMIT_CORE, 0),
        # no POSIX message queues: state that would outlive a stdio test's processes
        (resource.RLIMIT_MSGQUEUE, 0),
    ):
        resource.setrlimit(res, (val, val))
    if iso.get("nproc"):
        resource.setrlimit(resource.RLIMIT_NPROC, (iso["nproc"], iso["nproc"]))
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl")
    if mode == "userns":
        drop_capabilities()
    if iso["uid"]:
        os.setgroups([])
        os.setresgid(iso["uid"], iso["uid"], iso["uid"])
        os.setresuid(iso["uid"], iso["uid"], iso["uid"])
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    restrict_syscalls(sysv=sysv, unix=iso.get("unix_filter", True))
    if not iso.get("environ_set"):  # set once in the worker (setup_worker), inherited
        use_child_environ()
    if mode == "plain":
        _guard_network()


def use_child_environ():
    """Make this process's environment exactly the one a child runs with (nothing of the
    judge's): the worker does it once at the end of setup_worker, so every child inherits it
    through fork and confine has nothing to change (clearing and refilling os.environ in each
    child cost ~0.4 ms, most of it copy-on-write faults). Nothing in the worker reads these."""
    os.environ.clear()
    os.environ.update(
        {
            "PATH": os.path.dirname(os.path.abspath(sys.executable))  # its `python`
            + ":/usr/local/bin:/usr/bin:/bin",
            "HOME": "/tmp",
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            # numeric libraries run single-threaded, as one CPU per submission
            # allows (and a unittest-style test gets its nonce only while alone)
            **{v: "1" for v in THREAD_VARS},
            **ALLOCATOR_ENV,
            "JE_ARROW_MALLOC_CONF": "background_thread:false",  # pyarrow (pandas)
        }
    )


# seccomp(2) filter of every child (restrict_syscalls): memory that RLIMIT_AS does not count.
# Per architecture: (AUDIT_ARCH, {syscall: number}); x86_64's x32 numbers (bit 30) are refused.
SECCOMP_ARCHS = {
    "x86_64": (
        0xC000003E,
        {
            "memfd_create": 319,
            "memfd_secret": 447,
            "shmget": 29,
            "msgget": 68,
            "semget": 64,
            "io_uring_setup": 425,
            "setsockopt": 54,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "socket": 41,
            "socketpair": 53,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "memfd_create": 279,
            "memfd_secret": 447,
            "shmget": 194,
            "msgget": 186,
            "semget": 190,
            "io_uring_setup": 425,
            "setsockopt": 208,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "socket": 198,
            "socketpair": 199,
        },
    ),
}
# SysV message queues (32000 x 16 KB) and semaphore sets (32000 x 32000 semaphores: ~64 GB of
# slab) are kernel memory outside RLIMIT_AS that nothing here uses: always refused. SysV shared
# memory (shmget) is refused unless cap_sysv_ipc bounded it in the child's IPC namespace.
REFUSED_SYSCALLS = (
    "memfd_create",
    "memfd_secret",
    "io_uring_setup",
    "add_key",
    "request_key",
    "keyctl",
    "msgget",
    "semget",
)
SYSV_SYSCALLS = ("shmget",)
SOL_SOCKET, SOCKET_BUFFER_OPTIONS = 1, (7, 8, 32, 33)  # SO_SNDBUF, SO_RCVBUF, their *FORCE
AF_UNIX, SOCK_STREAM, SOCK_SEQPACKET, SOCK_TYPE_MASK = 1, 1, 5, 0xF  # type: also flags
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
_BPF_LD_ABS, _BPF_JEQ, _BPF_JGE, _BPF_RET, _BPF_AND = 0x20, 0x15, 0x35, 0x06, 0x54
_RET_ALLOW, _RET_EPERM = 0x7FFF0000, 0x00050000 | 1


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def seccomp_program(machine=None, sysv=False, unix=False):
    """The BPF program of restrict_syscalls as (code, jt, jf, k) tuples, or None for an
    architecture without a table (SECCOMP_ARCHS): EPERM for REFUSED_SYSCALLS (and
    SYSV_SYSCALLS unless `sysv`), for setsockopt(SOL_SOCKET, SO_SNDBUF | SO_RCVBUF |
    ...FORCE), for any syscall of another ABI (i386 through int 0x80, x32) and, with `unix`,
    for socket(AF_UNIX, ...) and socketpair(AF_UNIX, ...) of any type but SOCK_STREAM and
    SOCK_SEQPACKET (the unix filter: see restrict_syscalls); everything else allowed."""
    arch = SECCOMP_ARCHS.get(machine or os.uname().machine)
    if arch is None:
        return None
    audit, nr = arch
    # (code, jump if true, jump if false, k), jumps (forward) by label, a str marks where a
    # label is; seccomp_data holds the syscall number at offset 0, the arch at 4 and args[i]
    # at 16 + 8 * i (low 32 bits: level, optname; family, type)
    prog = [
        (_BPF_LD_ABS, None, None, 4),
        (_BPF_JEQ, None, "deny", audit),
        (_BPF_LD_ABS, None, None, 0),
    ]
    if audit == SECCOMP_ARCHS["x86_64"][0]:
        prog.append((_BPF_JGE, "deny", None, 0x40000000))  # the x32 ABI
    refused = REFUSED_SYSCALLS + (() if sysv else SYSV_SYSCALLS)
    prog += [(_BPF_JEQ, "deny", None, nr[name]) for name in refused]
    if unix:
        prog += [
            (_BPF_JEQ, "socket", None, nr["socket"]),
            (_BPF_JEQ, "socketpair", None, nr["socketpair"]),
        ]
    prog += [
        (_BPF_JEQ, None, "allow", nr["setsockopt"]),
        (_BPF_LD_ABS, None, None, 24),
        (_BPF_JEQ, None, "allow", SOL_SOCKET),
        (_BPF_LD_ABS, None, None, 32),
    ]
    prog += [(_BPF_JEQ, "deny", None, opt) for opt in SOCKET_BUFFER_OPTIONS]
    if unix:
        prog += [
            (_BPF_RET, None, None, _RET_ALLOW),
            "socket",
            (_BPF_LD_ABS, None, None, 16),
            (_BPF_JEQ, "deny", "allow", AF_UNIX),
            "socketpair",
            (_BPF_LD_ABS, None, None, 16),
            (_BPF_JEQ, None, "allow", AF_UNIX),
            (_BPF_LD_ABS, None, None, 24),
            (_BPF_AND, None, None, SOCK_TYPE_MASK),
            (_BPF_JEQ, "allow", None, SOCK_STREAM),
            (_BPF_JEQ, "allow", "deny", SOCK_SEQPACKET),
        ]
    prog += [
        "allow",
        (_BPF_RET, None, None, _RET_ALLOW),
        "deny",
        (_BPF_RET, None, None, _RET_EPERM),
    ]
    at, code = {}, []
    for ins in prog:
        if isinstance(ins, str):
            at[ins] = len(code)
        else:
            code.append(ins)
    return [
        (c, at[jt] - i - 1 if jt else 0, at[jf] - i - 1 if jf else 0, k)
        for i, (c, jt, jf, k) in enumerate(code)
    ]


def _compiled(sysv, unix):
    """seccomp_program(sysv=sysv, unix=unix) as the kernel's sock_fprog, built once per worker
    (before any fork, so a child only makes the prctl call): None without a table for this
    machine."""
    prog = seccomp_program(sysv=sysv, unix=unix)
    if prog is None:
        return None
    arr = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    return _SockFprog(len(prog), arr), arr  # the array is kept alive with the header


_FILTERS = {(sysv, unix): _compiled(sysv, unix) for sysv in (False, True) for unix in (False, True)}


def restrict_syscalls(sysv=False, unix=False):
    """Install the seccomp filter of seccomp_program in this process (after no_new_privs; it
    is inherited by everything the submission starts and cannot be removed). What it closes:
    kernel memory a process can fill without its address space (RLIMIT_AS) growing — memfds
    (each up to RLIMIT_FSIZE, RLIMIT_NOFILE of them per process), socket buffers raised to
    net.core.wmem_max, SysV message queues and semaphore sets (kernel slab), and SysV shared
    memory (attach, fill, detach, repeat) unless `sysv` (cap_sysv_ipc bounded it in this
    child's IPC namespace) — so no record can hold unbounded memory that belongs to no
    process (the OOM killer would pick an innocent one). The kernel keyrings are refused as well: a
    key outlives the process that made it (in the uid's user or persistent keyring), so it would
    carry state from one stdio test to the next (one uid per record) and, in userns mode
    (the user's own uid), from record to record. io_uring is refused too: its operations
    would bypass this filter, and nothing here needs it. Standard Python never needs any of
    these (multiprocessing and shared_memory use files in /dev/shm, which is the child's
    size-capped /tmp). With `unix` (the unix filter: a worker whose root shows some host
    directory through a bind rather than an overlay, and plain mode), no unix-domain socket
    that could name a path can be made: socket(AF_UNIX, ...) is refused, and so is
    socketpair(AF_UNIX, ...) unless SOCK_STREAM or SOCK_SEQPACKET (a datagram pair, or a
    SOCK_RAW one, which af_unix makes a datagram pair, sends to any path with sendto/sendmsg,
    and seccomp cannot read the address those take), while a stream or seqpacket pair stays
    (connected, it cannot connect again, even after its peer closed: EISCONN; a seqpacket
    pair ignores a sendto address): so multiprocessing.Pipe, socket.socketpair and asyncio's
    self-pipe work, a listener of the submission's own (multiprocessing.Manager, the
    forkserver) does not. No-op on an architecture without a table (SECCOMP_ARCHS). Raises
    OSError if the kernel refuses the filter."""
    compiled = _FILTERS[bool(sysv), bool(unix)]
    if compiled is None:
        return
    _check(
        _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(compiled[0]), 0, 0), "seccomp"
    )


def cap_sysv_ipc(tmp_size_mb):
    """In a child's fresh IPC namespace (root or userns mode, before the chroot): bound all
    of its SysV shared memory together to tmp_size_mb (kernel.shmall, the namespace's own
    sysctl; the segment count is bounded by it too, a segment holding at least a page).
    True when set (root mode); False when the kernel does not let this process set it (a
    user namespace, a read-only /proc/sys): restrict_syscalls then refuses shmget instead."""
    try:
        fd = os.open("/proc/sys/kernel/shmall", os.O_WRONLY)
    except OSError:
        return False
    try:
        os.write(fd, b"%d" % ((int(tmp_size_mb) << 20) // _PAGE))
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


_PAGE = os.sysconf("SC_PAGESIZE")


def drop_capabilities():
    """Empty every capability set of this process (bounding, ambient, effective, permitted,
    inheritable). In userns mode the forked children hold every capability of the worker's
    user namespace (its mounts, chroot, namespaces, ptrace): kept, the submission could
    mount or umount, chroot out of ROOT (a nested chroot), setns(2) into the worker's mount
    namespace, create namespaces, or ptrace anything of the user. The uid stays the user's
    (not 0 inside the namespace), so an exec gains nothing back; no_new_privs keeps it so."""
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            if ctypes.get_errno() == 22:  # EINVAL: past the last capability
                break
            _check(-1, "drop capability %d" % cap)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable} words, all 0
    _check(_libc.capset(header, data), "capset")


def _start_pid_init():
    """userns mode, in the worker after unshare(CLONE_NEWPID): fork I, the init (pid 1) of the
    pid namespace every child of this worker is then born in. I mounts a fresh /proc over
    ROOT/proc (it lists only this namespace: I, the current child and what it started; not the
    judge, the worker, other workers' children or the user's other processes, so none of
    them can be named for kill(2), ptrace(2) or /proc/<pid>/root, cwd, fd, environ, mem),
    then becomes non-dumpable (a child cannot ptrace it or read its /proc files), chroots,
    drops its capabilities and only reaps the orphans re-parented to it (`reap` kills them).
    Signals from inside the namespace to an init without handlers are dropped by the
    kernel. It dies with the worker, and the namespace with it: when the read end of a pipe
    (the lifeline) whose only write end the worker holds (its children close it in confine)
    reaches EOF. PR_SET_PDEATHSIG is set too, but alone it is not enough: the kernel checks
    the dying parent's permission to signal, and root mode's reap runs as the child's uid
    (setresuid), so a worker killed there could not signal its root-owned init (left running,
    re-parented to pid 1); nor does it cover a worker that died before the prctl. Returns its
    pid."""
    r, w = os.pipe()
    life_r, life_w = os.pipe()  # the worker keeps life_w open as long as it lives
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.close(life_w)
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            os.setsid()
            null = os.open("/dev/null", os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            lo = 3
            for fd in sorted((w, life_r)) + [65536]:
                os.closerange(lo, fd)
                lo = fd + 1
            for sig in signal.valid_signals():
                if sig not in (signal.SIGKILL, signal.SIGSTOP):
                    try:
                        signal.signal(sig, signal.SIG_DFL)
                    except (OSError, ValueError):
                        pass
            _mount("proc", ROOT + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
            os.chroot(ROOT)
            os.chdir("/")
            drop_capabilities()
            signal.signal(signal.SIGCHLD, _reap_orphans)  # reaps as each orphan ends
            _reap_orphans()
            os.write(w, b"ok")
            os.close(w)
            while os.read(life_r, 1):  # b"": EOF, the worker is gone (it never writes)
                pass
        finally:
            os._exit(1)
    os.close(w)
    os.close(life_r)
    ok = os.read(r, 16)
    os.close(r)
    if ok != b"ok":
        os.waitpid(pid, 0)
        raise OSError(0, "the pid namespace's init failed to start")
    return pid


def _reap_orphans(*_):
    """The pid-namespace init's SIGCHLD handler: collect every ended process adopted by it."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def _guard_network():
    import socket

    def refuse(*args, **kwargs):
        raise PermissionError("network access is disabled in the sandbox")

    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.socket.bind = refuse  # type: ignore[method-assign]
    socket.create_connection = refuse


def reap(iso):
    """Kill whatever the last child left behind, then collect zombies. Returns nothing."""
    if iso["uid"]:
        # as the child's uid, in this (single-threaded) worker itself rather than a forked
        # helper (a fork per record cost ~1 ms): real and effective uid become the child's,
        # the saved uid stays root so that the next call returns to it. kill(-1) reaches every
        # process of that uid but this one; with the real uid no longer root, no root process
        # is among them. The worker is outside the children's pid namespace: none of them
        # can name it while it holds their uid.
        try:
            os.setresuid(iso["uid"], iso["uid"], 0)
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:  # nothing left: the usual case
                pass
            if KEYS_REACHABLE:
                clear_keyrings()
        finally:
            os.setresuid(0, 0, 0)
            _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # as before (a uid change clears it)
    else:  # plain, userns: the worker's children and (userns) the orphans its init adopted
        init = iso.get("init")
        for _ in range(20):
            adopted = (_live_children(init) or []) if init else []
            kids = [k for k in _children() if k != init] + adopted
            if not kids:
                break
            for k in kids:
                try:
                    os.kill(k, signal.SIGKILL)
                except OSError:
                    pass
            _collect(0.2, init)
    _collect(keep=iso.get("init"))


# keyctl(2): KEYCTL_CLEAR of the calling uid's user and user-session keyrings
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "i686": 288, "ppc64le": 271, "s390x": 280}
KEYCTL_CLEAR, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = 7, -4, -5


# Whether a child's processes can make kernel keys at all: not where restrict_syscalls'
# filter refuses add_key, request_key and keyctl (every architecture of SECCOMP_ARCHS; the
# filter is installed in every child, or the child fails). Only then does reap clear the uid's
# keyrings: touching a uid's user keyrings creates them, so clearing each record's fresh uid
# would leave two empty keyrings in kernel memory per record (never freed: they stay listed
# in /proc/key-users) and cost more than the rest of the reap.
KEYS_REACHABLE = os.uname().machine not in SECCOMP_ARCHS


def clear_keyrings():
    """Empty the per-uid keyrings of the calling process's uid (root mode's reap, run as the
    child's uid): data a submission stored there (`keyctl add user ... @u`) never reaches a
    later child that gets the same uid after the range wrapped. Best effort: a kernel
    without keyrings has nothing to clear."""
    nr = _SYS_KEYCTL.get(os.uname().machine)
    if nr is None:
        return
    for ring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
        _libc.syscall(nr, KEYCTL_CLEAR, ctypes.c_long(ring))


# glibc gives every thread that allocates an arena of its own, each reserving 64 MB of address
# space (8 per core at most): under RLIMIT_AS (memory_mb) a right answer with a thread pool of
# 12 workers failed at 512 MB while it used a few MB. Two arenas, as a small process needs.
ALLOCATOR_ENV = {"MALLOC_ARENA_MAX": "2"}

THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
)


def alone(iso, pid):
    """Whether the child `pid` is a single thread and no other process of the submission runs
    (its children; in root mode any process with the private uid); zombies do not count."""
    if iso.get("init") and _live_children(iso["init"]) != []:
        return False  # an orphan of the submission, adopted by the pid namespace's init
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
        if len(tasks) != 1:
            return False
        with open("/proc/%d/task/%d/children" % (pid, pid)) as fh:
            if any(not _zombie(int(c)) for c in fh.read().split()):
                return False
    except OSError:
        return False
    if iso["uid"]:
        return [p for p in _uid_pids(iso["uid"]) if p != pid and not _zombie(p)] == []
    return True


def _live_children(pid):
    """The children of the single-threaded process `pid` that are not zombies (None: gone)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as fh:
            return [int(c) for c in fh.read().split() if not _zombie(int(c))]
    except OSError:
        return None


def _zombie(pid):
    """Whether pid is a finished process not yet waited for (an os.popen whose pipe was
    read but not closed): it runs nothing any more."""
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True  # gone


def _uid_pids(uid, span=1):
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if uid <= os.stat("/proc/" + p).st_uid < uid + span:
                    out.append(int(p))
            except OSError:
                pass
    return out


def kill_uid(uid, rounds=50, span=1):
    """SIGKILL every process owned by a uid in [uid, uid + span) until none is left (needs
    root). Returns whether none is left. Used by the judge when a worker dies (its children
    were re-parented): with span, every uid of its private range."""
    for _ in range(rounds):
        pids = _uid_pids(uid, span)
        if not pids:
            return True
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)
    return not _uid_pids(uid, span)


def _children():
    me, out = os.getpid(), []
    try:
        for tid in os.listdir("/proc/%d/task" % me):
            with open("/proc/%d/task/%s/children" % (me, tid)) as fh:
                out += [int(x) for x in fh.read().split()]
    except OSError:
        pass
    return out


def _collect(patience_s=2.0, keep=None):
    """Reap children (killed leftovers reparented to this subreaper) until none is left but
    `keep` (the userns init, which lives as long as the worker), and `keep` has no live
    child (orphans it adopted, killed by `reap`)."""
    end = time.monotonic() + patience_s
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if keep and _children() == [keep] and not _live_children(keep):
                return
            if time.monotonic() > end:
                return
            time.sleep(0.001)
