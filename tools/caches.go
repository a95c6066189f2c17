package tools

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentd/agentd/internal/lazy"
	"github.com/agentd/agentd/tools/sandbox"
)

// The toolchains' caches of a confined process. A confined process reads
// the user's own caches, so that its first build is as warm as the user's,
// and writes caches of agentd's, never the user's: a cache entry is trusted
// by whoever reads it next (a Go build cache entry maps a compilation's
// inputs to object code nothing checks; an extracted module or package is
// not verified again), so a command that wrote the user's caches could
// plant code in what the user later builds unconfined.
//
//   - Go's build cache: GOCACHEPROG is agentd's own binary (sandbox.GoCacheProg),
//     which serves the go command the user's GOCACHE and stores what it
//     builds in a cache of agentd's.
//   - Go's module cache, npm's, pip's and cargo's home: an overlay at the
//     user's own path (the path matters: the go command hashes a module's
//     directory into its build keys), the user's directory below, writes
//     going to a layer of agentd's.
//
// agentd's caches are per workspace, so a command in one workspace cannot
// plant anything another workspace's commands read; and per profile: what
// workspace-write commands write, the workspace's commands read (they could
// change the workspace's sources anyway); what read commands write, only
// read commands read (a command the policy judged read-only cannot reach a
// later workspace-write one through a cache). Without the network, the go
// command does not look for modules beyond the caches (GOPROXY=off) and
// cargo runs offline, so a missing module fails at once and says so.

// goCacheProgExe is agentd's own binary, which serves as GOCACHEPROG.
var goCacheProgExe = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return exe
})

// caches is what a confined process gets of the caches.
type caches struct {
	env         [][2]string
	read, write []string
	overlays    []sandbox.Overlay
}

func (c *caches) setEnv(k, v string) { c.env = append(c.env, [2]string{k, v}) }

// apply adds the caches to ss, leaving alone the variables the process's
// own configuration sets (own).
func (c *caches) apply(ss *sandbox.Spec, own []string) {
	for _, kv := range c.env {
		if !slicesHasVar(own, kv[0]) {
			ss.Env = setEnv(ss.Env, kv[0], kv[1])
		}
	}
	ss.Read = append(ss.Read, c.read...)
	ss.Write = append(ss.Write, c.write...)
	ss.Overlays = append(ss.Overlays, c.overlays...)
}

func slicesHasVar(env []string, k string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, k+"=") {
			return true
		}
	}
	return false
}

// WorkspaceCacheDir is where agentd keeps the caches of ws's commands: a
// directory per workspace, named after it and its path's hash.
func (s *Sandbox) WorkspaceCacheDir(ws string) string {
	dir := s.cacheDir()
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(ws))
	name := unsafeName().ReplaceAllString(filepath.Base(ws), "_")
	if len(name) > 32 {
		name = name[:32]
	}
	return filepath.Join(dir, "ws", name+"-"+hex.EncodeToString(sum[:6]))
}

var unsafeName = lazy.Regexp(`[^A-Za-z0-9._-]`)

// caches decides the caches of a confined process of workspace ws in
// profile p, with the network or not. env is its environment (the user's
// settings for the toolchains).
func (s *Sandbox) caches(ws string, p sandbox.Profile, network bool, env []string) *caches {
	c := &caches{}
	base := s.WorkspaceCacheDir(ws)
	if base == "" {
		return c
	}
	// The directory commands of this profile write: its parent is not
	// theirs, so they cannot swap it for a link to somewhere else.
	tier := filepath.Join(base, "read")
	if p == sandbox.WorkspaceWrite {
		tier = filepath.Join(base, "write")
	}
	if err := s.made.make(tier); err != nil {
		s.cfg.Logger.Warn("sandbox: no cache for confined commands", "dir", tier, "err", err)
		return c
	}
	c.write = append(c.write, tier)
	user := userToolchainDirs(env)

	// Go's build cache.
	own := filepath.Join(tier, "go-build")
	c.setEnv("GOCACHE", own)
	if exe := goCacheProgExe(); exe != "" && user.goCache != "" {
		reads := []string{user.goCache}
		if p == sandbox.Read {
			reads = append(reads, filepath.Join(base, "write", "go-build"))
		}
		if prog := sandbox.GoCacheProg(exe, own, reads...); prog != "" {
			c.setEnv("GOCACHEPROG", prog)
			c.read = append(c.read, exe)
			c.read = append(c.read, reads...)
		}
	}

	// The module cache and the other tools' caches: overlays at the
	// user's paths, where one can matter (an overlay costs a command most
	// of a millisecond of CPU): the layer already holds something, or a
	// workspace-write command may write there (it has the network, or,
	// for a tool that writes its cache offline too, the workspace has the
	// tool's manifest). Elsewhere the user's directory is only read.
	layer := func(name, path string, offline bool) bool {
		if path == "" {
			return false
		}
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			return false
		}
		upper, work := filepath.Join(base, "layers", name, "upper"), filepath.Join(base, "layers", name, "work")
		switch {
		case p == sandbox.WorkspaceWrite && (network || offline || !emptyDir(upper)):
			if s.made.make(upper) != nil || s.made.make(work) != nil {
				return false
			}
			c.overlays = append(c.overlays, sandbox.Overlay{Path: path, Upper: upper, Work: work})
		case p == sandbox.Read && !emptyDir(upper):
			// Read commands see what workspace-write ones added, and
			// write nothing there.
			c.overlays = append(c.overlays, sandbox.Overlay{Path: path, Lower: []string{upper}})
		default:
			c.read = append(c.read, path)
		}
		return true
	}
	private := func(name string) string {
		d := filepath.Join(tier, name)
		_ = s.made.make(d)
		return d
	}
	// The go command writes its module cache only to download.
	if layer("go-mod", user.modCache, false) {
		c.setEnv("GOMODCACHE", user.modCache)
	} else {
		c.setEnv("GOMODCACHE", private("go-mod"))
	}
	if !layer("npm", user.npm, hasAny(ws, "package.json")) {
		c.setEnv("npm_config_cache", private("npm"))
	}
	if !layer("pip", user.pip, hasAny(ws, "pyproject.toml", "requirements.txt", "setup.py", "Pipfile")) {
		c.setEnv("PIP_CACHE_DIR", private("pip"))
	}
	if layer("cargo", user.cargoHome, hasAny(ws, "Cargo.toml")) {
		c.setEnv("CARGO_HOME", user.cargoHome)
	}
	if !network {
		c.setEnv("CARGO_NET_OFFLINE", "true")
	}
	return c
}

// emptyDir reports whether dir is missing or empty.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return true
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}

// hasAny reports whether the workspace's root holds one of names.
func hasAny(ws string, names ...string) bool {
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(ws, n)); err == nil {
			return true
		}
	}
	return false
}

// toolchainDirs are the user's own caches, where the toolchains find them.
type toolchainDirs struct {
	goCache, modCache, npm, pip, cargoHome string
}

// userToolchainDirs finds the user's caches from env (the child
// environment) and Go's own settings file (`go env -w`), as the tools do.
func userToolchainDirs(env []string) toolchainDirs {
	home := envValue(env, "HOME")
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return ""
	}
	under := func(rel string) string {
		if !filepath.IsAbs(home) {
			return ""
		}
		return filepath.Join(home, rel)
	}
	cacheHome := abs(envValue(env, "XDG_CACHE_HOME"))
	if cacheHome == "" {
		cacheHome = under(".cache")
	}
	goEnv := goEnvFile(env, home)
	goVar := func(k string) string {
		if v := envValue(env, k); v != "" {
			return v
		}
		return goEnv[k]
	}
	var d toolchainDirs
	switch gc := goVar("GOCACHE"); {
	case gc == "off":
	case abs(gc) != "":
		d.goCache = abs(gc)
	case cacheHome != "":
		d.goCache = filepath.Join(cacheHome, "go-build")
	}
	d.modCache = abs(goVar("GOMODCACHE"))
	if d.modCache == "" {
		if gp := filepath.SplitList(goVar("GOPATH")); len(gp) > 0 && abs(gp[0]) != "" {
			d.modCache = filepath.Join(gp[0], "pkg", "mod")
		} else if home != "" {
			d.modCache = under("go/pkg/mod")
		}
	}
	d.npm = abs(envValue(env, "npm_config_cache"))
	if d.npm == "" {
		d.npm = under(".npm")
	}
	d.pip = abs(envValue(env, "PIP_CACHE_DIR"))
	if d.pip == "" && cacheHome != "" {
		d.pip = filepath.Join(cacheHome, "pip")
	}
	d.cargoHome = abs(envValue(env, "CARGO_HOME"))
	if d.cargoHome == "" {
		d.cargoHome = under(".cargo")
	}
	return d
}

// goEnvFile reads the settings `go env -w` wrote (GOENV, or go/env in the
// user's configuration directory): lines of NAME=value.
func goEnvFile(env []string, home string) map[string]string {
	file := envValue(env, "GOENV")
	if file == "off" {
		return nil
	}
	if file == "" {
		cfg := envValue(env, "XDG_CONFIG_HOME")
		if !filepath.IsAbs(cfg) {
			if !filepath.IsAbs(home) {
				return nil
			}
			cfg = filepath.Join(home, ".config")
		}
		file = filepath.Join(cfg, "go", "env")
	}
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok && k != "" && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}
