package sandbox

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// goCacheArg, as the first argument, makes the binary a Go build cache
// program (GOCACHEPROG, see `go doc cmd/go/internal/cacheprog`) instead of
// itself: the directory after it is the cache it writes, the others are
// caches it only reads, looked up first.
//
// Confined commands must not write the user's Go build cache: an entry maps
// the hash of a compilation's inputs to its output, and nothing checks that
// the output is what the compiler would have made, so a command could plant
// object code that the user's next unconfined build links. Yet a cache of
// their own starts cold: the first `go test` of a workspace rebuilt the
// standard library and every dependency. The program reads the user's cache
// (and the caches of commands trusted as much or more) and writes only its
// own, in the go command's own format (the directory is a GOCACHE too).
const goCacheArg = "__agentd_gocacheprog__"

// GoCacheProg is the GOCACHEPROG value that makes exe (a binary linking
// this package) serve the go command a cache that reads the directories of
// read, in that order, then write, and stores into write only. It is ""
// when a path cannot be quoted for the go command (it holds both kinds of
// quotes).
func GoCacheProg(exe, write string, read ...string) string {
	var b strings.Builder
	for i, arg := range append([]string{exe, goCacheArg, write}, read...) {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case !strings.ContainsAny(arg, " \t\n\r'\""):
			b.WriteString(arg)
		case !strings.Contains(arg, "'"):
			b.WriteString("'" + arg + "'")
		case !strings.Contains(arg, `"`):
			b.WriteString(`"` + arg + `"`)
		default:
			return ""
		}
	}
	return b.String()
}

// cacheRequest and cacheResponse are cmd/go/internal/cacheprog's Request
// and Response.
type cacheRequest struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type cacheResponse struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// goCache is the cache the program serves.
type goCache struct {
	write string   // the cache it stores into
	dirs  []string // where it looks: the read caches in order, then write
}

// goCacheProg serves the go command on stdin and stdout until it closes.
func goCacheProg(args []string) int {
	if len(args) < 1 || !filepath.IsAbs(args[0]) {
		fmt.Fprintln(os.Stderr, "agentd gocacheprog: want the cache to write, then the caches to read")
		return 2
	}
	c := &goCache{write: args[0]}
	for _, d := range args[1:] {
		if filepath.IsAbs(d) && d != c.write {
			c.dirs = append(c.dirs, d)
		}
	}
	c.dirs = append(c.dirs, c.write)
	if err := os.MkdirAll(c.write, 0o777); err != nil {
		fmt.Fprintf(os.Stderr, "agentd gocacheprog: %v\n", err)
		return 1
	}
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	var mu sync.Mutex // guards out
	reply := func(r cacheResponse) error {
		mu.Lock()
		defer mu.Unlock()
		if err := enc.Encode(r); err != nil {
			return err
		}
		return out.Flush()
	}
	if err := reply(cacheResponse{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return 1
	}
	dec := json.NewDecoder(bufio.NewReaderSize(os.Stdin, 64<<10))
	for {
		var req cacheRequest
		if err := dec.Decode(&req); err != nil {
			return 0 // the go command went away
		}
		var body []byte
		if req.Command == "put" && req.BodySize > 0 {
			// The body follows as a base64 JSON string.
			if err := dec.Decode(&body); err != nil {
				return 1
			}
		}
		var res cacheResponse
		switch req.Command {
		case "get":
			res = c.get(req.ActionID)
		case "put":
			res = c.put(req.ActionID, req.OutputID, body)
		case "close":
			c.trim()
			_ = reply(cacheResponse{ID: req.ID})
			return 0
		default:
			res.Err = "unknown command " + strconv.Quote(req.Command)
		}
		res.ID = req.ID
		if err := reply(res); err != nil {
			return 1
		}
	}
}

// name is the file of id in dir, as the go command names it.
func cacheFile(dir string, id []byte, kind string) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-"+kind)
}

// entrySize is the length of an action entry: "v1 <action> <output> <size>
// <time>\n", the numbers right-aligned in 20 characters.
const entrySize = 2 + 1 + 64 + 1 + 64 + 1 + 20 + 1 + 20 + 1

func (c *goCache) get(action []byte) cacheResponse {
	if len(action) != sha256.Size {
		return cacheResponse{Err: "bad action id"}
	}
	for _, dir := range c.dirs {
		out, size, when, ok := readEntry(cacheFile(dir, action, "a"), action)
		if !ok {
			continue
		}
		// The output is named by the hash of its content, so any cache
		// that has it has the same bytes: the most trusted one serves.
		for _, d := range c.dirs {
			file := cacheFile(d, out, "d")
			if fi, err := os.Stat(file); err == nil && fi.Mode().IsRegular() && fi.Size() == size {
				if d == c.write {
					markUsed(file)
				}
				t := time.Unix(0, when)
				return cacheResponse{OutputID: out, Size: size, Time: &t, DiskPath: file}
			}
		}
	}
	return cacheResponse{Miss: true}
}

// readEntry reads and checks an action entry.
func readEntry(file string, action []byte) (out []byte, size, when int64, ok bool) {
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, 0, false
	}
	defer f.Close()
	buf := make([]byte, entrySize+1)
	n, _ := io.ReadFull(f, buf)
	if n != entrySize {
		return nil, 0, 0, false
	}
	fields := strings.Fields(string(buf[:n]))
	if len(fields) != 5 || fields[0] != "v1" || fields[1] != hex.EncodeToString(action) {
		return nil, 0, 0, false
	}
	out, err = hex.DecodeString(fields[2])
	if err != nil || len(out) != sha256.Size {
		return nil, 0, 0, false
	}
	size, err1 := strconv.ParseInt(fields[3], 10, 64)
	when, err2 := strconv.ParseInt(fields[4], 10, 64)
	if err1 != nil || err2 != nil || size < 0 {
		return nil, 0, 0, false
	}
	return out, size, when, true
}

func (c *goCache) put(action, out, body []byte) cacheResponse {
	if len(action) != sha256.Size || len(out) != sha256.Size {
		return cacheResponse{Err: "bad action or output id"}
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], out) {
		return cacheResponse{Err: "the output id is not the body's hash"}
	}
	file := cacheFile(c.write, out, "d")
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(body)) {
		if err := writeAtomic(file, body); err != nil {
			return cacheResponse{Err: err.Error()}
		}
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", action, out, len(body), time.Now().UnixNano())
	if err := writeAtomic(cacheFile(c.write, action, "a"), []byte(entry)); err != nil {
		return cacheResponse{Err: err.Error()}
	}
	return cacheResponse{DiskPath: file}
}

// writeAtomic writes data to file through a temporary file renamed over
// it, so that a reader never sees half of it.
func writeAtomic(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o777); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// As the go command does: an entry's time of last use is its mtime, moved
// at most once an hour; entries unused for five days go, at most once a day.
const (
	cacheMtimeInterval = time.Hour
	cacheTrimInterval  = 24 * time.Hour
	cacheTrimLimit     = 5 * 24 * time.Hour
)

func markUsed(file string) {
	if fi, err := os.Stat(file); err == nil && time.Since(fi.ModTime()) >= cacheMtimeInterval {
		now := time.Now()
		_ = os.Chtimes(file, now, now)
	}
}

// trim removes the entries of the written cache unused for cacheTrimLimit.
func (c *goCache) trim() {
	stamp := filepath.Join(c.write, "trim.txt")
	if data, err := os.ReadFile(stamp); err == nil {
		if t, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil &&
			time.Since(time.Unix(t, 0)) < cacheTrimInterval {
			return
		}
	}
	_ = os.WriteFile(stamp, []byte(strconv.FormatInt(time.Now().Unix(), 10)+"\n"), 0o644)
	cutoff := time.Now().Add(-cacheTrimLimit - cacheMtimeInterval)
	for i := range 256 {
		sub := filepath.Join(c.write, fmt.Sprintf("%02x", i))
		entries, err := os.ReadDir(sub)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
				_ = os.RemoveAll(filepath.Join(sub, e.Name()))
			}
		}
	}
}
