/* LD_PRELOAD shim for Debian's user-mode-linux 6.1 (linux.uml) on hosts whose XSAVE state is
 * larger than UML's compiled-in buffer (AVX-512, AMX, CET: here 0x18e7, 2472 bytes).
 *
 * Why: UML 6.1 saves a guest process's FP state with PTRACE_GETREGSET(NT_X86_XSTATE) into a
 * fixed buffer (FP_SIZE, struct _xstate, 832 bytes) and restores it with PTRACE_SETREGSET of
 * that size. The host kernel's xstateregs_set() refuses any size but the full one (EFAULT),
 * UML's userspace() then calls fatal_sigsegv(): the guest's first process (init) dies with
 * SIGSEGV ("userspace - ptrace set fp regs failed, errno = 14", "Attempted to kill init!").
 * Fixed upstream by "um: switch to regset API and depend on XSTATE" (2024), not in 6.1.
 *
 * What: the probe UML makes at start (arch_init_registers: GETREGSET NT_X86_XSTATE) and every
 * later GETREGSET/SETREGSET of NT_X86_XSTATE fail with EIO, so UML sets have_xstate_support = 0
 * and uses PTRACE_GETFPREGS/SETFPREGS (the 512-byte FXSAVE image: x87 and SSE), which every
 * x86-64 host accepts. The AVX/AVX-512 upper state is then not saved by UML between guest
 * tasks that share one host process (threads of one guest process); each guest process is its
 * own host process, whose full state the host kernel keeps. The bed's agents are
 * single-threaded.
 *
 * Everything else goes to glibc's ptrace unchanged (PEEK* semantics included). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/ptrace.h>
#include <sys/types.h>

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

typedef long (*ptrace_fn)(enum __ptrace_request, ...);

long ptrace(enum __ptrace_request req, ...)
{
	static ptrace_fn real;
	va_list ap;
	va_start(ap, req);
	pid_t pid = va_arg(ap, pid_t);
	void *addr = va_arg(ap, void *);
	void *data = va_arg(ap, void *);
	va_end(ap);
	if ((req == PTRACE_GETREGSET || req == PTRACE_SETREGSET) &&
	    (unsigned long)addr == NT_X86_XSTATE) {
		errno = EIO;
		return -1;
	}
	if (!real)
		real = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
	return real(req, pid, addr, data);
}
