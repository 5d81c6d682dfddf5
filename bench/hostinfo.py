#!/usr/bin/python3
"""bench/hostinfo.py - the host a bench table was measured on, in one line:
CPU model (with its family, model and stepping: "AMD EPYC" alone names a
whole line of CPUs), the CPUs this process may use, the kernel release,
virtualisation (systemd-detect-virt, else /sys/class/dmi/id/sys_vendor,
else the cpuinfo hypervisor flag), the TCP congestion control (loopback TCP
runs through it) and the load average.  Figures from different hosts, or
from one host under different load, are not comparable; every table says
which it is.

    bench/hostinfo.py            # prints the line
    import hostinfo; hostinfo.line()   # from a script in bench/

Nothing here fails: what cannot be read is printed as "?".
"""
import os
import shutil
import subprocess


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def cpu():
    fields = {}
    flags = ""
    for ln in _read("/proc/cpuinfo").splitlines():
        k, _, v = ln.partition(":")
        k, v = k.strip(), v.strip()
        if k in ("model name", "cpu family", "model", "stepping") and k not in fields:
            fields[k] = v
        elif k == "flags" and not flags:
            flags = v
    name = fields.get("model name", "?")
    ids = ", ".join("%s %s" % (k.replace("cpu ", ""), fields[k])
                    for k in ("cpu family", "model", "stepping") if k in fields)
    return (name + (" (" + ids + ")" if ids else "")), "hypervisor" in flags.split()


def _detect_virt(opt):
    if not shutil.which("systemd-detect-virt"):
        return None
    try:
        r = subprocess.run(["systemd-detect-virt", opt], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() or None  # "none" with exit status 1 on bare metal


def virt(hyper_flag):
    """'kvm guest, docker container', 'bare metal', ..."""
    vm = _detect_virt("--vm")
    if vm is None:  # no systemd-detect-virt: the DMI vendor, else the CPU's flag
        vendor = _read("/sys/class/dmi/id/sys_vendor")
        vm = (vendor or "a hypervisor") if hyper_flag else "none"
    parts = [] if vm == "none" else [vm + " guest"]
    ct = _detect_virt("--container")
    if ct and ct != "none":
        parts.append(ct + " container")
    return ", ".join(parts) or "bare metal"


def load():
    try:
        return "%.2f" % os.getloadavg()[0]
    except OSError:
        return "?"


def line():
    name, hyper = cpu()
    ncpu = len(os.sched_getaffinity(0))
    cc = _read("/proc/sys/net/ipv4/tcp_congestion_control") or "?"
    return "host: %s, %d CPUs; Linux %s; %s; TCP %s; load average %s" % (
        name, ncpu, os.uname().release, virt(hyper), cc, load())


if __name__ == "__main__":
    print(line())
