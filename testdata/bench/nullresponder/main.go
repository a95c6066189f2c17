// Command nullresponder answers one LSP-framed request with an empty result
// and exits: the floor for "process start to initialize answered", measured
// beside agentd in the same benchmark run.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	n := 0
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if _, err := io.CopyN(io.Discard, in, int64(n)); err != nil {
		return
	}
	body := `{"jsonrpc":"2.0","id":1,"result":{}}`
	fmt.Printf("Content-Length: %d\r\n\r\n%s", len(body), body)
}
