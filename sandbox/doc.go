// Package sandbox confines the processes tools start (Bash, stdio MCP
// servers): what they may see and write, whether they may use the
// network, what privileges they hold and how long they may live (SPEC
// R9.2, R9.4; issues 10, 19, 20).
//
// # On Linux
//
// Every such process is started through the run's helper: the running
// program itself (os.Executable), re-executed once per Sandbox, on its
// first Start, with the FLOWER_SANDBOX_INIT variable set, which this
// package's init function recognizes before any other code runs (issue
// 19: starting flower again for every Bash call cost a launch of the
// whole binary per call). The helper
//
//   - is the init (pid 1) of a new PID namespace and a new mount
//     namespace with its own /proc, in a new user namespace when flower is
//     not root (the main case: a person's own account), and in a new
//     network namespace, with no interface but a loopback that is down,
//     when the config says network: false; when it exits, the kernel
//     kills everything in the namespace;
//   - makes its mount namespace the view every command gets (view_linux.go):
//     flower's state (the run dir, the state home's flower/) covered by
//     an empty read-only tmpfs, the protected paths (Protected:
//     flower.yaml, .mcp.json, .claude/, .git/hooks, .git/config,
//     .flower/project, and the instruction files when asked) bind-mounted
//     read-only, and a devpts of its own, so that the person's terminals
//     are not there;
//   - dies with flower: the parent-death signal, and a "lifeline" pipe whose
//     write end only flower holds (closed by the kernel however flower
//     dies, and by Close);
//   - starts each command flower asks for (serve_linux.go) in a PID and
//     mount namespace of its own, nested in the run's, whose init is a
//     clone of the helper that never execs (on amd64 it shares the
//     helper's memory, on a stack of its own): it mounts that namespace's
//     /proc, so the command sees its own processes only, and exits when
//     the command exits, with its status; the kernel then kills whatever
//     the command left, setsid, double-forked, nohup'd, disowned and
//     daemonized processes included. Ending a call early kills that init;
//   - takes from each command, before it execs, every capability (the
//     bounding set too: root gives up root, so no mknod, no hostname, no
//     chown, no mount), sets no_new_privs, puts it in a session of its own
//     (no controlling terminal: /dev/tty cannot be opened, so an OSC 52
//     escape cannot reach the person's clipboard), and applies Landlock:
//     read everywhere, write only the workspace, the run's TMPDIR and
//     Config.Writable; no TCP connect or bind unless Config.Network; no
//     ptrace (so no /proc/<pid>/environ) of, and no signal to, processes
//     outside the sandbox.
//
// Harden makes flower itself not dumpable (no process of the same user
// may read its memory or environ, or ptrace it). A process that is not
// dumpable cannot write a child's user-namespace maps, so the helper's
// start is ordered with it (withDumpable): that is what made the
// namespaces fail for every user but root before issue 20.
//
// Where namespaces cannot be created (user namespaces disabled for the
// user), each command gets a helper of its own (Wrap), a child subreaper:
// orphans are re-parented to it, and when the command ends (or flower
// dies) it kills every descendant it can find. A process that double-forks
// between two scans can escape; there is no mount view (flower's state
// is refused by the file tools only, the protected paths only by the
// confirmation the next start asks for) and no network namespace; the
// command still has no capability, no_new_privs, no controlling terminal
// and Landlock. flower says so in one line when it starts. Elsewhere than
// Linux there is no helper (see Supported).
//
// # Protected paths that do not exist
//
// A protected path that is missing when the helper builds the view
// (often .mcp.json, .claude/, flower.yaml; .git/hooks in some clones) has
// no mount point, so a command may create it. The field has no way to
// prevent that without changing the workspace: Landlock only grants
// (write access to the workspace is write access to every name in it),
// and a mount needs a mount point. Anthropic's sandbox-runtime binds
// /dev/null onto the first missing component, which makes bubblewrap
// create an empty file or directory in the person's workspace, and
// removes these after the command (they linger as stray files when it
// does not get to, or while a command runs); Codex protects such paths
// (.codex) only when they exist. flower leaves the workspace as it is and
// detects and undoes instead: Bash notes which protected paths are
// missing (WatchProtected) before each command; when the command has ended and
// the kernel has killed everything it left in its namespace, nothing of it
// can write any more, and what it created among them is removed (a
// symlink itself, never its target) and the model told in the tool result
// (Watch.Undo). A background shell is undone when it ends. What a command
// creates where the parent was missing too (.git/hooks of a repository
// it makes with git init) is its own work, and kept. The person's own
// configuration (config.UserProtected: ~/.config/flower, ~/.claude) is
// protected the same way where a command may write there (the workspace
// is the home directory, or sandbox.writable holds it); elsewhere
// Landlock already keeps commands out of it. The gaps: a person
// who creates such a path while a command runs loses it to the undo; a
// SIGKILL of flower during a call skips the undo (flower.yaml, .mcp.json
// and .claude/settings*.json still meet the confirmation at the next
// start); stdio MCP servers and hooks are not watched (they are the
// person's configuration, and live as long as the run); and in the
// subreaper fallback a process that escaped the kill may create one after
// the undo. A protected path that appears during a run by another hand
// (a person's git init) is neither mounted read-only (the view is built
// once per run) nor watched, until the next run.
//
// Landlock must apply to the tool's process and never to flower itself
// or the helper, which is why it is applied in the command's process,
// between fork and exec. (The subreaper fallback's helper, which starts
// its command with os.StartProcess, restricts itself; go-landlock makes
// each of its threads a domain of its own, so it signals the command's
// processes only from the thread that started them: reapAndKill.)
//
// # Own code, not bubblewrap
//
// Codex (opt-in) and Anthropic's sandbox-runtime build their Linux
// sandbox with bubblewrap (bwrap) plus seccomp, and a well-kept tool is
// usually the better choice. flower keeps its own code, built on the same
// kernel mechanisms bwrap uses (user, PID, mount and network namespaces,
// read-only bind mounts, tmpfs, a new devpts, dropped capabilities,
// no_new_privs, a new session) plus Landlock, for these reasons:
//
//   - Cost. bwrap is a program: every Bash call would exec it and have it
//     build the namespaces and the mount view again. flower's helper builds
//     them once per run and forks each command from there: BenchmarkStart
//     measures /bin/true under bwrap at 2 to 4 times the cost of the
//     helper with Landlock (BENCHMARKS.md, issue 20).
//   - Lifetime. The run's processes must die with flower however it dies,
//     and each call's with the call, while a background command lives on
//     until its step ends. --die-with-parent covers the first only per
//     bwrap process; one PID namespace per run with a lifeline, and one
//     per command inside it, cover all three with one mechanism.
//   - Availability. bwrap is not on every machine flower runs on (nor in
//     every container image), and where it is, it needs the same
//     unprivileged user namespaces flower's own code needs (Debian's is
//     not setuid). Where they are missing, bwrap fails where flower's
//     subreaper fallback still contains the lifetime of processes; with
//     bwrap, flower would need that fallback anyway: two implementations
//     instead of one.
//   - Landlock stays. Write confinement, the TCP rules and the scopes
//     (signals, abstract sockets) are Landlock's in both designs; bwrap
//     would replace only the namespaces and mounts (serve_linux.go,
//     view_linux.go).
//
// # Seccomp
//
// As bwrap-based sandboxes add one, each command also gets a seccomp
// filter (seccomp_linux.go, assembled with github.com/elastic/go-seccomp-bpf,
// loaded in execCommand after no_new_privs and Landlock): ptrace,
// process_vm_*, every mount call, setns, the keyring, bpf,
// perf_event_open, userfaultfd, kexec and module loading, reboot, swap,
// acct and quotactl fail with EPERM, and so do unshare and clone with
// CLONE_NEWUSER (a user namespace would hand the command its capabilities
// back inside it); clone3 gets ENOSYS, since a filter cannot read its
// flags, and libc then falls back to clone. Most of these already fail
// without capabilities; the filter refuses them before the kernel code
// runs. It is a deny list for the machine's own ABI, and every call
// through another (int 0x80 on x86-64: i386's numbers) fails with ENOSYS:
// the library's program let those through unfiltered, so any refused
// call could be made by switching ABI. A 32-bit program cannot run in
// the sandbox; filtering i386's numbers too would let it, and no build,
// test or editor here needs one. A helper that starts its command with
// os.StartProcess (Wrap's, and the subreaper fallback's) has no place
// between fork and exec to load the filter in, so it loads it on itself,
// every thread, before the start (filterSelf), and the command inherits
// it.
package sandbox
