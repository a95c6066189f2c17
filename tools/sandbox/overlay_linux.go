package sandbox

import (
	"fmt"
	"strings"
	"syscall"
	"unsafe"
)

// overlays mounts, in the command's mount namespace, each of the plan's
// overlays at its path: the user's directory (a cache) shows through, with
// the layers above it, and writes go to the overlay's upper directory,
// never to the user's. The path keeps its name, which matters: the go
// command hashes the directory of a module's sources into its build
// cache's keys, so the user's compiled dependencies match only at the
// user's module cache's own path.
//
// An overlay that cannot be mounted (a kernel before 5.11, an upper
// directory on a file system overlayfs does not take) leaves the path
// read-only instead, never writable: the command can still read the
// user's cache. It is reported in Confinement.Overlays.
func (p *plan) overlays(conf *Confinement) error {
	for _, o := range p.Overlays {
		if err := mountOverlay(o); err != nil {
			done, berr := bindOnto(o.Path, true)
			if berr != nil {
				return &SetupError{Step: "mount", Msg: fmt.Sprintf("overlay on %s: %v; read-only instead: %v", o.Path, err, berr)}
			}
			if done {
				conf.Protected = append(conf.Protected, o.Path)
			}
			conf.OverlayErrors = append(conf.OverlayErrors, fmt.Sprintf("%s: %v", o.Path, err))
			continue
		}
		conf.Overlays = append(conf.Overlays, o.Path)
	}
	return nil
}

// fsconfigSetFlag is FSCONFIG_SET_FLAG (fsconfigSetString is beside
// mountPTS).
const fsconfigSetFlag = 0

func mountOverlay(o Overlay) error {
	name, err := syscall.BytePtrFromString("overlay")
	if err != nil {
		return err
	}
	fsfd, _, e := syscall.Syscall(sysFsopen, uintptr(unsafe.Pointer(name)), fsopenCloexec, 0)
	if e != 0 {
		return fmt.Errorf("fsopen: %w", e)
	}
	fs := int(fsfd)
	defer syscall.Close(fs)
	// The topmost layer first; ':' and '\' in a path are escaped.
	esc := strings.NewReplacer(`\`, `\\`, ":", `\:`)
	var lower []string
	for _, l := range append(append([]string(nil), o.Lower...), o.Path) {
		lower = append(lower, esc.Replace(l))
	}
	set := []struct{ key, value string }{{"source", "agentd"}, {"lowerdir", strings.Join(lower, ":")}}
	if o.Upper != "" {
		set = append(set, struct{ key, value string }{"upperdir", o.Upper}, struct{ key, value string }{"workdir", o.Work})
	}
	for _, kv := range set {
		if err := fsconfig(fs, fsconfigSetString, kv.key, kv.value); err != nil {
			return fmt.Errorf("%s=%s: %w", kv.key, kv.value, err)
		}
	}
	// Inside a user namespace overlayfs keeps its whiteouts and opaque
	// marks in user.* attributes; "index" stays off, so that two commands
	// of a workspace may share an upper directory.
	for _, flag := range []string{"userxattr"} {
		if err := fsconfig(fs, fsconfigSetFlag, flag, ""); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
	}
	if err := fsconfig(fs, fsconfigSetString, "index", "off"); err != nil {
		return fmt.Errorf("index=off: %w", err)
	}
	if _, _, e := syscall.Syscall6(sysFsconfig, uintptr(fs), fsconfigCmdCreate, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("creating the overlay: %w", e)
	}
	m, _, e := syscall.Syscall(sysFsmount, uintptr(fs), fsmountCloexec, mountAttrNosuid|mountAttrNodev)
	if e != 0 {
		return fmt.Errorf("fsmount: %w", e)
	}
	defer syscall.Close(int(m))
	dst, err := syscall.Open(o.Path, oPath|syscall.O_NOFOLLOW|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(dst)
	return moveMount(int(m), "", dst, "", moveMountFEmptyPath|moveMountTEmptyPath)
}

func fsconfig(fs, cmd int, key, value string) error {
	k, err := syscall.BytePtrFromString(key)
	if err != nil {
		return err
	}
	var v *byte
	if cmd == fsconfigSetString {
		if v, err = syscall.BytePtrFromString(value); err != nil {
			return err
		}
	}
	_, _, e := syscall.Syscall6(sysFsconfig, uintptr(fs), uintptr(cmd), uintptr(unsafe.Pointer(k)), uintptr(unsafe.Pointer(v)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
