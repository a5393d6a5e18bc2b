"""The crawler node's seccomp programs, run through a small BPF interpreter.

The conformance checks see the filter only on the machine they run on (x86_64
here). The program for every other architecture in the node's table is built
by the same code with other numbers, so a jump offset that is wrong for a
table of another length would go unseen until someone runs the node there.
This test loads the node file (importing it opens nothing: CRAWLER-NODE-3),
builds each architecture's program and evaluates it the way the kernel does.
"""

import errno
import struct
import unittest

from conformance.tests import reference_node

# Classic BPF opcodes the node uses, and seccomp's return actions.
LD_W_ABS, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
KILL_PROCESS, RET_ERRNO, ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
# A few system calls every Python process makes, by architecture (x86_64's
# arch/x86/entry/syscalls/syscall_64.tbl; arm64's asm-generic/unistd.h).
EVERYDAY = {
    "x86_64": {"read": 0, "write": 1, "openat": 257, "execve": 59, "exit_group": 231},
    "aarch64": {"read": 63, "write": 64, "openat": 56, "execve": 221, "exit_group": 94},
}


# The 32-bit ABI each 64-bit kernel also accepts: AUDIT_ARCH_I386, AUDIT_ARCH_ARM.
FOREIGN_ABI = {"x86_64": 0x40000003, "aarch64": 0x40000028}


def load_node():
    return reference_node.load_node("crawler_job", "seccomp")


def run_filter(program, arch, nr):
    """The action the program returns for a system call `nr` under ABI `arch`."""
    data = struct.pack("=iI", nr, arch)  # struct seccomp_data: nr, arch (the rest is never read)
    ops = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    for _ in range(len(ops) + 1):
        code, jt, jf, k = ops[pc]
        if code == LD_W_ABS:
            acc = struct.unpack("=I", data[k:k + 4])[0]
            pc += 1
        elif code in (JEQ_K, JGE_K):
            taken = acc == k if code == JEQ_K else acc >= k
            pc += 1 + (jt if taken else jf)
        elif code == RET_K:
            return k
        else:
            raise AssertionError("opcode %#x at %d is not one the node should emit" % (code, pc))
        if not 0 <= pc < len(ops):
            raise AssertionError("a jump leaves the program (pc %d of %d)" % (pc, len(ops)))
    raise AssertionError("the program never returns")


class SeccompProgramTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.node = load_node()

    def test_every_architecture_denies_allows_and_kills_as_declared(self):
        self.assertEqual(set(self.node.SECCOMP_ARCHES), set(EVERYDAY))
        for machine, spec in sorted(self.node.SECCOMP_ARCHES.items()):
            with self.subTest(machine=machine):
                program = self.node.seccomp_program(spec)
                self.assertEqual(len(set(spec.denied)), len(spec.denied), "a number listed twice")
                self.assertFalse(set(spec.denied) & set(spec.enosys))
                for nr in spec.denied:
                    self.assertEqual(run_filter(program, spec.audit_arch, nr), RET_ERRNO | errno.EPERM, nr)
                for nr in spec.enosys:
                    self.assertEqual(run_filter(program, spec.audit_arch, nr), RET_ERRNO | errno.ENOSYS, nr)
                for name, nr in EVERYDAY[machine].items():
                    self.assertNotIn(nr, spec.denied, name)
                    self.assertEqual(run_filter(program, spec.audit_arch, nr), ALLOW, name)
                self.assertEqual(run_filter(program, FOREIGN_ABI[machine], 0), KILL_PROCESS)
                self.assertEqual(run_filter(program, spec.audit_arch, 0x40000000), KILL_PROCESS)

    def test_the_interpreter_sees_a_broken_jump(self):
        # The test above can fail: a program whose first denial jumps one
        # instruction too far returns ENOSYS (or runs off the end) instead.
        spec = self.node.SECCOMP_ARCHES["x86_64"]
        program = bytearray(self.node.seccomp_program(spec))
        code, jt, jf, k = struct.unpack("=HBBI", program[6 * 8:7 * 8])
        program[6 * 8:7 * 8] = struct.pack("=HBBI", code, jt + 1, jf, k)
        self.assertNotEqual(run_filter(bytes(program), spec.audit_arch, spec.denied[0]),
                            RET_ERRNO | errno.EPERM)


if __name__ == "__main__":
    unittest.main()
