package await

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ScaleEnv names the variable that sets the scale of every test deadline.
const ScaleEnv = "AGENTD_TEST_TIMEOUT_SCALE"

// maxLoadScale bounds the load's scale: a test that waits 20 times what an
// idle machine needs is waiting for something that will not come.
const maxLoadScale = 20

var load struct {
	mu   sync.Mutex
	at   time.Time
	per  float64 // the 1-minute load average per CPU
	text string
}

// Scale is the factor every deadline is multiplied by, now.
func Scale() float64 {
	s, _ := scale()
	return s
}

// scale returns the scale and where it comes from, for failure messages.
func scale() (float64, string) {
	if v := os.Getenv(ScaleEnv); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
			return f, ScaleEnv + "=" + v
		}
	}
	per, text := loadPerCPU()
	s := min(max(per, 1), maxLoadScale)
	why := text
	if raceEnabled {
		s *= 2
		why += ", ×2 under -race"
	}
	return s, why
}

// loadPerCPU reads the 1-minute load average (Linux), at most once a
// second.
func loadPerCPU() (float64, string) {
	load.mu.Lock()
	defer load.mu.Unlock()
	if time.Since(load.at) < time.Second {
		return load.per, load.text
	}
	load.at = time.Now()
	load.per, load.text = 0, "no load average"
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return load.per, load.text
	}
	f, err := strconv.ParseFloat(strings.Fields(string(b) + " x")[0], 64)
	if err != nil {
		return load.per, load.text
	}
	n := runtime.NumCPU()
	load.per = f / float64(n)
	load.text = fmt.Sprintf("load %.1f on %d CPUs", f, n)
	return load.per, load.text
}

// Timeout is d scaled for this machine, now.
func Timeout(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Scale())
}

// Deadline is a scaled deadline, for wait loops of their own: it has
// passed when more than Timeout(d) has elapsed since it was set, with the
// scale as it is when asked.
type Deadline struct {
	start time.Time
	d     time.Duration
}

// NewDeadline starts a deadline of d (before scaling).
func NewDeadline(d time.Duration) Deadline { return Deadline{start: time.Now(), d: d} }

// Left is the time left (negative once it has passed).
func (dl Deadline) Left() time.Duration { return Timeout(dl.d) - time.Since(dl.start) }

// Passed says whether the deadline has passed.
func (dl Deadline) Passed() bool { return dl.Left() <= 0 }

// String says how long the wait was allowed, for a failure message:
// "45s (15s × 3.0: load 6.1 on 2 CPUs)".
func (dl Deadline) String() string {
	s, why := scale()
	if s == 1 {
		return dl.d.String()
	}
	return fmt.Sprintf("%s (%s × %.1f: %s)", time.Duration(float64(dl.d)*s).Round(time.Millisecond), dl.d, s, why)
}
