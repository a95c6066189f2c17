package sandbox

import (
	"fmt"
	"strconv"
	"syscall"
	"unsafe"
)

// Numbers and flags the frozen syscall package lacks. System calls added
// since Linux 5.1 have the same number on every architecture.
const (
	sysOpenTree              = 428
	sysMoveMount             = 429
	sysFsopen                = 430
	sysFsconfig              = 431
	sysFsmount               = 432
	sysOpenat2               = 437
	sysMountSetattr          = 442
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	atFDCWD           = -100
	atSymlinkNofollow = 0x100
	atRemovedir       = 0x200
	atEmptyPath       = 0x1000
	atRecursive       = 0x8000

	oPath = 0x200000

	openTreeClone       = 1
	openTreeCloexec     = syscall.O_CLOEXEC
	moveMountFEmptyPath = 0x4
	moveMountTEmptyPath = 0x40
	mountAttrRdonly     = 0x1
	mountAttrNosuid     = 0x2
	mountAttrNodev      = 0x4
	mountAttrNoexec     = 0x8
	fsopenCloexec       = 1
	fsmountCloexec      = 1
	fsconfigCmdCreate   = 6

	prSetNoNewPrivs       = 38
	prCapAmbient          = 47
	prCapAmbientClearAll  = 4
	prSetChildSubreaper   = 36
	prSetDumpable         = 4
	seccompModeFilter     = 2
	seccompRetErrno       = 0x00050000
	seccompRetAllow       = 0x7fff0000
	linuxCapabilityV3     = 0x20080522
	capSysAdmin           = 21
	capSetpcap            = 8
	capNetAdmin           = 12
	lastCapGuess          = 63
	renameNoreplaceFlag   = 1
	resolveNoMagiclinks   = 0x02
	resolveBeneath        = 0x08
	cloneNewCgroup        = 0x02000000
	afUnix                = 1
	afInet                = 2
	afInet6               = 10
	afNetlink             = 16
	pidWaitable           = 1 // P_PID for waitid
	wNowait               = 0x01000000
	wExited               = 0x4
	landlockCreateVersion = 1
	landlockRulePath      = 1
	rlimitNproc           = 6
)

func prctl(option int, arg2, arg3, arg4, arg5 uintptr) error {
	_, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, uintptr(option), arg2, arg3, arg4, arg5, 0)
	if e != 0 {
		return e
	}
	return nil
}

func openTree(dirfd int, path string, flags int) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	fd, _, e := syscall.Syscall(sysOpenTree, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags))
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func moveMount(fromfd int, frompath string, tofd int, topath string, flags int) error {
	fp, err := syscall.BytePtrFromString(frompath)
	if err != nil {
		return err
	}
	tp, err := syscall.BytePtrFromString(topath)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall6(sysMoveMount, uintptr(fromfd), uintptr(unsafe.Pointer(fp)), uintptr(tofd),
		uintptr(unsafe.Pointer(tp)), uintptr(flags), 0)
	if e != 0 {
		return e
	}
	return nil
}

// newTmpfs creates a detached tmpfs (fsopen, fsconfig, fsmount) of at most
// size bytes (0: the kernel's default, half the memory) and tmpfsInodes
// files, and returns a descriptor of its root, attached nowhere.
func newTmpfs(size int64) (int, error) {
	name, err := syscall.BytePtrFromString("tmpfs")
	if err != nil {
		return -1, err
	}
	fs, _, e := syscall.Syscall(sysFsopen, uintptr(unsafe.Pointer(name)), fsopenCloexec, 0)
	if e != 0 {
		return -1, fmt.Errorf("fsopen: %w", e)
	}
	defer syscall.Close(int(fs))
	if size > 0 {
		for _, kv := range [][2]string{{"size", strconv.FormatInt(size, 10)}, {"nr_inodes", strconv.Itoa(tmpfsInodes)}} {
			k, _ := syscall.BytePtrFromString(kv[0])
			v, _ := syscall.BytePtrFromString(kv[1])
			if _, _, e := syscall.Syscall6(sysFsconfig, fs, fsconfigSetString, uintptr(unsafe.Pointer(k)), uintptr(unsafe.Pointer(v)), 0, 0); e != 0 {
				return -1, fmt.Errorf("tmpfs %s: %w", kv[0], e)
			}
		}
	}
	if _, _, e := syscall.Syscall6(sysFsconfig, fs, fsconfigCmdCreate, 0, 0, 0, 0); e != 0 {
		return -1, fmt.Errorf("fsconfig: %w", e)
	}
	// Not noexec: `go test` and friends run what they build in TMPDIR.
	m, _, e := syscall.Syscall(sysFsmount, fs, fsmountCloexec, mountAttrNosuid|mountAttrNodev)
	if e != 0 {
		return -1, fmt.Errorf("fsmount: %w", e)
	}
	return int(m), nil
}

// mountAttr is struct mount_attr.
type mountAttr struct {
	attrSet, attrClr, propagation, usernsFd uint64
}

func mountSetattr(dirfd int, path string, flags int, attr *mountAttr) error {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall6(sysMountSetattr, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags),
		uintptr(unsafe.Pointer(attr)), unsafe.Sizeof(*attr), 0)
	if e != 0 {
		return e
	}
	return nil
}

// openHow is struct open_how.
type openHow struct {
	flags, mode, resolve uint64
}

func openat2(dirfd int, path string, how *openHow) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	for {
		fd, _, e := syscall.Syscall6(sysOpenat2, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
		switch e {
		case 0:
			return int(fd), nil
		case syscall.EINTR, syscall.EAGAIN:
			// EAGAIN: a rename elsewhere raced with the lookup; the
			// kernel asks us to retry rather than risk a wrong answer.
			continue
		}
		return -1, e
	}
}

func unlinkat(dirfd int, path string, flags int) error {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall(syscall.SYS_UNLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags))
	if e != 0 {
		return e
	}
	return nil
}

// fstatFD stats an open descriptor, O_PATH ones included.
func fstatFD(fd int) (syscall.Stat_t, error) {
	var st syscall.Stat_t
	err := syscall.Fstat(fd, &st)
	return st, err
}

func isDirMode(m uint32) bool  { return m&syscall.S_IFMT == syscall.S_IFDIR }
func isLinkMode(m uint32) bool { return m&syscall.S_IFMT == syscall.S_IFLNK }
