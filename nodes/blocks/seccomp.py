"""Shared block `seccomp`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
"""
import collections
import ctypes
import errno
import struct

# ---- block body ----
# seccomp: the filter a node's networkless child runs under.  A child that
# parses untrusted bytes could otherwise open a socket or start a process and
# use the node's network.  This block only builds the program; installing it
# (prctl PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP) is the node's, in the child.

# Linux prctl(2) and seccomp(2) numbers (include/uapi/linux/prctl.h, seccomp.h, filter.h).
PR_SET_PDEATHSIG = 1
PR_GET_SECCOMP = 21
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
SECCOMP_MODE_FILTER = 2
BPF_LD_W_ABS = 0x20
BPF_JMP_JEQ_K = 0x15
BPF_JMP_JGE_K = 0x35
BPF_RET_K = 0x06
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_DATA_NR = 0  # offsetof(struct seccomp_data, nr)
SECCOMP_DATA_ARCH = 4  # offsetof(struct seccomp_data, arch)
X32_SYSCALL_BIT = 0x40000000

ArchSpec = collections.namedtuple("ArchSpec", "audit_arch host_platform denied enosys")
# The architectures the sandbox knows.  Only a table read off the kernel's own
# syscall list belongs here: a wrong number silently lets a syscall through.
SECCOMP_ARCHES = {
    "x86_64": ArchSpec(
        audit_arch=0xC000003E,  # AUDIT_ARCH_X86_64; i386 (int 0x80) has another and is killed
        host_platform="linux-amd64",  # CRAWLER-RESULT-8: restated in the clean-room claim: the ABI this table filters
        denied=(41, 42, 43, 44, 45,  # socket connect accept sendto recvfrom
                46, 47, 48, 49, 50,  # sendmsg recvmsg shutdown bind listen
                51, 52, 53, 54, 55,  # getsockname getpeername socketpair setsockopt getsockopt
                56, 57, 58,  # clone fork vfork
                101,  # ptrace
                288, 299, 307,  # accept4 recvmmsg sendmmsg
                310, 311,  # process_vm_readv process_vm_writev
                322,  # execveat
                425),  # io_uring_setup
        enosys=(435,),  # clone3: ENOSYS makes libc fall back to clone, which is denied
    ),
    # arm64 uses the generic table (include/uapi/asm-generic/unistd.h): no
    # fork or vfork there, only clone. From 424 on, numbers are the same on
    # every architecture (io_uring_setup 425, clone3 435). Read off the
    # kernel's list; not run on an arm64 machine by the harness yet.
    "aarch64": ArchSpec(
        audit_arch=0xC00000B7,  # AUDIT_ARCH_AARCH64; the 32-bit arm ABI has another and is killed
        host_platform="linux-arm64",  # CRAWLER-RESULT-8: restated in the clean-room claim: the ABI this table filters
        denied=(198, 199, 200, 201, 202,  # socket socketpair bind listen accept
                203, 204, 205, 206, 207,  # connect getsockname getpeername sendto recvfrom
                208, 209, 210, 211, 212,  # setsockopt getsockopt shutdown sendmsg recvmsg
                220,  # clone
                117,  # ptrace
                242, 243, 269,  # accept4 recvmmsg sendmmsg
                270, 271,  # process_vm_readv process_vm_writev
                281,  # execveat
                425),  # io_uring_setup
        enosys=(435,),  # clone3
    ),
}


class SockFprog(ctypes.Structure):
    """struct sock_fprog: the filter program prctl(PR_SET_SECCOMP) takes."""

    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def seccomp_program(spec):
    """The BPF filter as bytes of struct sock_filter (CRAWLER-CHILD-4).

    Layout: a foreign ABI (i386 through int 0x80 on x86_64, 32-bit arm on
    arm64) or a number with the x32 bit is killed; each denied syscall
    jumps to ERRNO(EPERM), clone3 to ERRNO(ENOSYS); anything else is
    allowed, execve included (a filter installed in a preexec_fn must
    let the one exec that follows it through).
    """
    def op(code, k, jt=0, jf=0):
        return struct.pack("=HBBI", code, jt, jf, k)

    denied, enosys = spec.denied, spec.enosys
    n, m = len(denied), len(enosys)
    program = [
        op(BPF_LD_W_ABS, SECCOMP_DATA_ARCH),
        op(BPF_JMP_JEQ_K, spec.audit_arch, 1, 0),  # the expected ABI skips the kill below
        op(BPF_RET_K, SECCOMP_RET_KILL_PROCESS),  # CRAWLER-CHILD-4: a foreign system-call ABI
        op(BPF_LD_W_ABS, SECCOMP_DATA_NR),
        op(BPF_JMP_JGE_K, X32_SYSCALL_BIT, 0, 1),
        op(BPF_RET_K, SECCOMP_RET_KILL_PROCESS),  # CRAWLER-CHILD-4: x32 is a foreign ABI too
    ]
    program += [op(BPF_JMP_JEQ_K, nr, n + m - i, 0) for i, nr in enumerate(denied)]  # to ERRNO(EPERM)
    program += [op(BPF_JMP_JEQ_K, nr, m - j + 1, 0) for j, nr in enumerate(enosys)]  # to ERRNO(ENOSYS)
    program += [
        op(BPF_RET_K, SECCOMP_RET_ALLOW),
        op(BPF_RET_K, SECCOMP_RET_ERRNO | errno.EPERM),  # CRAWLER-CHILD-4: sockets, processes, ptrace, io_uring
        op(BPF_RET_K, SECCOMP_RET_ERRNO | errno.ENOSYS),  # CRAWLER-CHILD-4: clone3 answers ENOSYS
    ]
    return b"".join(program)
