#!/bin/sh
# PID 1 of the user-mode Linux guest that uml.py boots. The guest's root is the host's / through
# hostfs; everything a run writes outside its results is kept in the guest: /run (where
# `ip netns` keeps its mounts) is a tmpfs of the guest, and the network namespaces are the
# guest kernel's. AQLB_REPO, AQLB_PYTHON and AQLB_JOB come from the kernel's command line
# (arguments with "=" it does not know are given to init as its environment).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH PYTHONDONTWRITEBYTECODE=1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=0755 tmpfs /run
echo "guest: $(uname -r), $(nproc) CPU, $(awk '/MemTotal/ {print $2 " kB"}' /proc/meminfo)"
cd "$AQLB_REPO" && "$AQLB_PYTHON" -m validation.linux.guest "$AQLB_JOB"
echo "guest: jobs done (exit $?); powering off"
sync
# reboot(2) with LINUX_REBOOT_CMD_POWER_OFF: the UML process exits (no busybox needed).
exec "$AQLB_PYTHON" -c 'import ctypes; ctypes.CDLL(None, use_errno=True).reboot(0x4321FEDC)'
