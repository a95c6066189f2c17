// Package pgtest starts real PostgreSQL servers for tests: Debian's
// postgresql-15 (or $AGENTD_PG_BIN), in a temporary directory, on a free
// loopback port, with password authentication. A test skips with a message
// when the server's binaries are missing, unless $AGENTD_TEST_REQUIRE_PG
// is set (.ci/test sets it: there the tests must run).
//
// Servers are stopped by Stop, by the test's cleanup, or (for Shared) by
// Cleanup in TestMain. A server whose test process died without stopping it
// is stopped by the next Start on the machine (its directory names its
// owner's pid), so a killed test run does not leave servers behind.
package pgtest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is a running (or stopped) PostgreSQL server.
type Server struct {
	dir      string // data directory, owned by the server's user
	bin      string
	port     int
	password string // the superuser's (postgres)
	asUser   bool   // commands run as the postgres user (we are root)

	mu      sync.Mutex
	running bool
	dbs     int
}

// Bin is the directory of the server's binaries.
func Bin() string {
	if b := os.Getenv("AGENTD_PG_BIN"); b != "" {
		return b
	}
	return "/usr/lib/postgresql/15/bin"
}

// Available says whether a server can be started here, and if not why.
func Available() error {
	if _, err := os.Stat(filepath.Join(Bin(), "initdb")); err != nil {
		return fmt.Errorf("PostgreSQL's binaries are not in %s (apt-get install postgresql-15, or set AGENTD_PG_BIN)", Bin())
	}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("runuser"); err != nil {
			return fmt.Errorf("running as root, and no runuser to start PostgreSQL as the postgres user")
		}
		if _, err := exec.Command("id", "-u", "postgres").Output(); err != nil {
			return fmt.Errorf("running as root, and there is no postgres user to start PostgreSQL as")
		}
	}
	return nil
}

// skipUnlessAvailable skips t (or fails it, when the tests must run).
func skipUnlessAvailable(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("AGENTD_TEST_REQUIRE_PG") != "" {
			t.Fatalf("AGENTD_TEST_REQUIRE_PG is set: %v", err)
		}
		t.Skipf("no PostgreSQL here: %v", err)
	}
}

// Start starts a server of t's own, stopped when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	skipUnlessAvailable(t)
	s, err := start()
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(s.remove)
	return s
}

var (
	sharedMu sync.Mutex
	shared   *Server
)

// Shared is one server for the whole test binary; call Cleanup in
// TestMain after m.Run.
func Shared(t testing.TB) *Server {
	t.Helper()
	skipUnlessAvailable(t)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil {
		s, err := start()
		if err != nil {
			t.Fatalf("start PostgreSQL: %v", err)
		}
		shared = s
	}
	return shared
}

// Cleanup stops the shared server, if one was started.
func Cleanup() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.remove()
		shared = nil
	}
}

// URL is the superuser's URL for database db ("" = postgres).
func (s *Server) URL(db string) string {
	if db == "" {
		db = "postgres"
	}
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/%s?sslmode=disable", s.password, s.port, db)
}

// Addr is host:port.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// Port is the server's port.
func (s *Server) Port() int { return s.port }

// Dir is the data directory.
func (s *Server) Dir() string { return s.dir }

// NewDatabase creates an empty database and returns its name.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	s.dbs++
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbs)
	s.mu.Unlock()
	if out, err := s.psql("postgres", "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v: %s", err, out)
	}
	return name
}

// SQL runs statements as the superuser in db (for a test's setup: roles,
// grants).
func (s *Server) SQL(t testing.TB, db, sql string) string {
	t.Helper()
	out, err := s.psql(db, sql)
	if err != nil {
		t.Fatalf("psql: %v: %s", err, out)
	}
	return out
}

func (s *Server) psql(db, sql string) (string, error) {
	cmd := exec.Command(filepath.Join(s.bin, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-d", s.URL(db), "-c", sql)
	if _, err := os.Stat(cmd.Path); err != nil {
		cmd.Path = "psql"
		cmd.Args[0] = "psql"
		if p, err := exec.LookPath("psql"); err == nil {
			cmd.Path = p
		}
	}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Stop stops the server at once (as a crash or a lost network would look
// to its clients); Restart starts it again on the same port.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return nil
	}
	s.running = false
	return s.ctl("-m", "immediate", "stop")
}

// Restart starts a stopped server again.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return nil
	}
	if err := s.startLocked(); err != nil {
		return err
	}
	s.running = true
	return nil
}

func (s *Server) remove() {
	s.Stop()
	os.RemoveAll(s.dir)
	os.Remove(s.dir + ".owner")
}

// run runs a server binary, as the postgres user when we are root.
func (s *Server) run(name string, args ...string) ([]byte, error) {
	bin := filepath.Join(s.bin, name)
	var cmd *exec.Cmd
	if s.asUser {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd.CombinedOutput()
}

func (s *Server) ctl(args ...string) error {
	out, err := s.run("pg_ctl", append([]string{"-D", s.dir, "-w", "-t", "120"}, args...)...)
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func (s *Server) startLocked() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", s.port, s.dir)
	return s.ctl("-o", opts, "-l", filepath.Join(s.dir, "pg.log"), "start")
}

// start makes a data directory and starts a server in it.
func start() (*Server, error) {
	reapOrphans()
	dir, err := os.MkdirTemp("", "agentd-pg-")
	if err != nil {
		return nil, err
	}
	pw := make([]byte, 12)
	rand.Read(pw)
	s := &Server{dir: dir, bin: Bin(), password: hex.EncodeToString(pw), asUser: os.Geteuid() == 0}
	// The owner's pid, beside the data directory (initdb wants it empty).
	if err := os.WriteFile(dir+".owner", []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	pwfile := dir + ".pw"
	if err := os.WriteFile(pwfile, []byte(s.password+"\n"), 0o644); err != nil {
		return nil, err
	}
	defer os.Remove(pwfile)
	if s.asUser {
		if out, err := exec.Command("chown", "postgres", dir, pwfile).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("chown: %v: %s", err, out)
		}
	}
	if out, err := s.run("initdb", "-D", dir, "-U", "postgres", "--auth=scram-sha-256", "--pwfile="+pwfile, "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		os.RemoveAll(dir)
		os.Remove(dir + ".owner")
		return nil, fmt.Errorf("initdb: %v: %s", err, bytes.TrimSpace(out))
	}
	for attempt := 0; ; attempt++ {
		s.port = freePort()
		err := s.startLocked()
		if err == nil {
			break
		}
		if attempt == 4 {
			log, _ := os.ReadFile(filepath.Join(dir, "pg.log"))
			os.RemoveAll(dir)
			os.Remove(dir + ".owner")
			return nil, fmt.Errorf("%v\n%s", err, log)
		}
	}
	s.running = true
	return s, nil
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 20000 + int(time.Now().UnixNano()%20000)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// reapOrphans stops the servers of test processes that died without
// stopping them.
func reapOrphans() {
	owners, _ := filepath.Glob(filepath.Join(os.TempDir(), "agentd-pg-*.owner"))
	for _, o := range owners {
		data, err := os.ReadFile(o)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) == nil {
			continue // its owner lives
		}
		dir := strings.TrimSuffix(o, ".owner")
		s := &Server{dir: dir, bin: Bin(), asUser: os.Geteuid() == 0}
		if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); err == nil {
			s.ctl("-m", "immediate", "stop")
		}
		os.RemoveAll(dir)
		os.Remove(o)
	}
}

// Kept starts a server whose data outlives the process, in dir (made by
// initdb the first time, with the server's default settings): for a
// benchmark whose data takes long to build. Stop it when done; the data
// stays for the next run. The superuser's password is kept in dir.pw.
func Kept(dir string) (*Server, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bin: Bin(), asUser: os.Geteuid() == 0}
	pwfile := dir + ".pw"
	if pw, err := os.ReadFile(pwfile); err == nil {
		s.password = strings.TrimSpace(string(pw))
	} else {
		b := make([]byte, 12)
		rand.Read(b)
		s.password = hex.EncodeToString(b)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(pwfile, []byte(s.password+"\n"), 0o644); err != nil {
			return nil, err
		}
		if s.asUser {
			if out, err := exec.Command("chown", "postgres", dir, pwfile).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("chown: %v: %s", err, out)
			}
		}
		if out, err := s.run("initdb", "-D", dir, "-U", "postgres", "--auth=scram-sha-256", "--pwfile="+pwfile, "-E", "UTF8", "--locale=C"); err != nil {
			os.RemoveAll(dir)
			os.Remove(pwfile)
			return nil, fmt.Errorf("initdb: %v: %s", err, bytes.TrimSpace(out))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); err == nil {
		s.ctl("-m", "fast", "stop") // a run that died left it running
	}
	s.port = freePort()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", s.port, s.dir)
	if err := s.ctl("-o", opts, "-l", filepath.Join(s.dir, "pg.log"), "start"); err != nil {
		return nil, err
	}
	s.running = true
	return s, nil
}

// Psql runs SQL as the superuser in db and returns its output, unaligned.
func (s *Server) Psql(db, sql string) (string, error) { return s.psql(db, sql) }

// PIDs are the server's processes: the postmaster and its children.
func (s *Server) PIDs() []int {
	data, err := os.ReadFile(filepath.Join(s.dir, "postmaster.pid"))
	if err != nil {
		return nil
	}
	main, err := strconv.Atoi(strings.SplitN(string(data), "\n", 2)[0])
	if err != nil {
		return nil
	}
	pids := []int{main}
	kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", main, main))
	for _, f := range strings.Fields(string(kids)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids
}
