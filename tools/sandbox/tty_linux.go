package sandbox

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// The terminals a command may reach. Without a terminal of its own it has
// no controlling terminal (it runs in a session of its own), so /dev/tty
// opens nothing; /dev/pts, where every terminal of the machine has a node
// (the editor's, the user's shells), would still let it write escape
// sequences (OSC 52 fills the clipboard) to any of them by name. So:
//
//   - with a mount namespace, /dev/pts is a devpts instance of the
//     command's own: /dev/ptmx (which opens the instance mounted beside it)
//     makes new terminals there, for programs that need one (script,
//     pexpect, a pty library's tests), and nobody else's is there;
//   - with Landlock alone, only the command's own terminal's node is
//     granted, and /dev/ptmx, whose new terminals' nodes are not.

const fsconfigSetString = 1

// mountPTS mounts a new devpts instance on /dev/pts, whose new terminals
// anyone in the sandbox may open (ptmxmode 0666).
func mountPTS() error {
	fi, err := os.Lstat("/dev/pts")
	if err != nil || !fi.IsDir() {
		return nil // no /dev/pts to cover
	}
	name, _ := syscall.BytePtrFromString("devpts")
	fs, _, e := syscall.Syscall(sysFsopen, uintptr(unsafe.Pointer(name)), fsopenCloexec, 0)
	if e != 0 {
		return fmt.Errorf("fsopen devpts: %w", e)
	}
	defer syscall.Close(int(fs))
	for _, kv := range [][2]string{{"ptmxmode", "0666"}, {"mode", "0620"}} {
		k, _ := syscall.BytePtrFromString(kv[0])
		v, _ := syscall.BytePtrFromString(kv[1])
		if _, _, e := syscall.Syscall6(sysFsconfig, fs, fsconfigSetString, uintptr(unsafe.Pointer(k)), uintptr(unsafe.Pointer(v)), 0, 0); e != 0 {
			return fmt.Errorf("devpts %s: %w", kv[0], e)
		}
	}
	if _, _, e := syscall.Syscall6(sysFsconfig, fs, fsconfigCmdCreate, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("devpts: %w", e)
	}
	m, _, e := syscall.Syscall(sysFsmount, fs, fsmountCloexec, mountAttrNosuid|mountAttrNoexec)
	if e != 0 {
		return fmt.Errorf("fsmount devpts: %w", e)
	}
	defer syscall.Close(int(m))
	dst, err := syscall.Open("/dev/pts", oPath|syscall.O_NOFOLLOW|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening /dev/pts: %w", err)
	}
	defer syscall.Close(dst)
	if err := moveMount(int(m), "", dst, "", moveMountFEmptyPath|moveMountTEmptyPath); err != nil {
		return fmt.Errorf("mounting devpts: %w", err)
	}
	return nil
}

// ownTerminal is the node of the terminal on the standard input, "" when
// it is none.
func ownTerminal() string {
	name, err := os.Readlink("/proc/self/fd/0")
	if err != nil {
		return ""
	}
	var st syscall.Stat_t
	if err := syscall.Stat(name, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
		return ""
	}
	var fst syscall.Stat_t
	if err := syscall.Fstat(0, &fst); err != nil || fst.Rdev != st.Rdev {
		return "" // the name no longer leads to the same terminal
	}
	return name
}
