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

// func cloneInit(flags, stack, fn uintptr, a *forkArgs) (pid uintptr, errno uintptr)
//
// clone(2) with flags (CLONE_VM among them) and stack as the child's
// stack pointer: the child, a process that shares the caller's memory
// and runs at the same time, calls fn(a) on that stack and never returns
// here. fn is initMain's entry for Go's register ABI, called directly:
// a call through the assembly ABI's wrapper would enter the race
// detector in race builds, whose state the caller is using. initMain and
// everything it calls is nosplit and norace: the child has no goroutine
// of its own, so nothing may check or grow a stack.
TEXT ·cloneInit(SB),NOSPLIT|NOFRAME,$0-48
	MOVQ	flags+0(FP), DI
	MOVQ	stack+8(FP), SI
	MOVQ	fn+16(FP), R12
	MOVQ	a+24(FP), R13
	MOVQ	$0, DX	// no parent tid
	MOVQ	$0, R10	// no child tid
	MOVQ	$0, R8	// no TLS
	MOVQ	$56, AX	// SYS_clone
	SYSCALL
	CMPQ	AX, $0
	JEQ	child
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	MOVQ	$-1, pid+32(FP)
	NEGQ	AX
	MOVQ	AX, errno+40(FP)
	RET
ok:
	MOVQ	AX, pid+32(FP)
	MOVQ	$0, errno+40(FP)
	RET
child:
	// SP is the top of the new stack: room for the spill slot of the
	// register argument, which the caller provides in this ABI.
	SUBQ	$16, SP
	MOVQ	R13, AX	// the argument
	XORPS	X15, X15	// the ABI's zero register
	CALL	R12
	// initMain exits; should it ever return, exit all the same.
	MOVQ	$126, DI
	MOVQ	$231, AX	// SYS_exit_group
	SYSCALL
	INT	$3
