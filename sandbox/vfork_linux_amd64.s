#include "textflag.h"

// func vforkClone(flags uintptr) (pid uintptr, errno uintptr)
//
// clone(2) with flags and no new stack, for CLONE_VM|CLONE_VFORK: the
// child runs on the caller's stack until it execs or exits, and may call
// functions there, which would overwrite the return address of this
// function the parent still has to use. So the return address goes into
// R12, a register each of the two keeps its own copy of, for the time of
// the system call, and back on the stack after it, in each.
TEXT ·vforkClone(SB),NOSPLIT|NOFRAME,$0-24
	MOVQ	flags+0(FP), DI
	MOVQ	$0, SI	// no new stack
	MOVQ	$0, DX	// no parent tid
	MOVQ	$0, R10	// no child tid
	MOVQ	$0, R8	// no TLS
	MOVQ	$56, AX	// SYS_clone
	POPQ	R12
	SYSCALL
	PUSHQ	R12
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	MOVQ	$-1, pid+8(FP)
	NEGQ	AX
	MOVQ	AX, errno+16(FP)
	RET
ok:
	MOVQ	AX, pid+8(FP)
	MOVQ	$0, errno+16(FP)
	RET
