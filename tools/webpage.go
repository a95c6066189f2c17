package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html/charset"

	"github.com/agentd/agentd/tools/images"
)

// webPage is a fetched page as the model reads it.
type webPage struct {
	URL         string // where it ended up, after the redirects followed
	Status      int
	ContentType string
	Bytes       int  // read from the wire
	Cut         bool // larger than webMaxBody: only the start was read
	Text        string
	// Partial says why only the start of the page's HTML became Text
	// (more tags than are converted), "" when all of it did.
	Partial string
	Image   []byte // a picture, when the page was one
	// Redirect is a redirect to a host the user has not allowed: not
	// followed.
	Redirect string
}

// fetchPage gets u and turns it into text: HTML into Markdown, text as it
// is, a picture as a picture. Other kinds are refused with what they are.
func fetchPage(ctx context.Context, u *url.URL, host HostAccess, gate HostGate, tool string) (*webPage, error) {
	var refused string
	client := webClient(host, gate, tool, &refused)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "agentd (+https://github.com/agentd/agentd; a coding agent fetching a page its user allowed)")
	req.Header.Set("Accept", "text/html,text/markdown,text/plain,application/json,application/xhtml+xml,image/*;q=0.8,*/*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		return nil, explainFetch(err)
	}
	defer resp.Body.Close()
	p := &webPage{URL: resp.Request.URL.String(), Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Redirect: refused}
	if refused != "" {
		return p, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, webMaxBody+1))
	if err != nil && len(body) == 0 {
		return nil, explainFetch(err)
	}
	if len(body) > webMaxBody {
		body, p.Cut = body[:webMaxBody], true
	}
	p.Bytes = len(body)
	return p, p.decode(ctx, body)
}

// Converting HTML costs the daemon about 13 µs and 500 bytes of memory a
// tag: a 10 MB page of `<p>x</p>` took 18 s of CPU and 640 MB of heap. So
// only the first maxHTMLTags tags of a page are converted (a large
// documentation page has a few tens of thousands), and one page at a time
// in the daemon (subagents and sessions fetch at the same time).
const maxHTMLTags = 100_000

var convertSlot = make(chan struct{}, 1)

// boundMarkup cuts HTML before its maxHTMLTags+1-th tag; cut says it did.
func boundMarkup(body []byte) ([]byte, bool) {
	n, off := 0, 0
	for {
		i := bytes.IndexByte(body[off:], '<')
		if i < 0 {
			return body, false
		}
		if n++; n > maxHTMLTags {
			return body[:off+i], true
		}
		off += i + 1
	}
}

// decode turns the body into the page's text (or picture).
func (p *webPage) decode(ctx context.Context, body []byte) error {
	mt, params, _ := mime.ParseMediaType(p.ContentType)
	if mt == "" || mt == "application/octet-stream" {
		mt = http.DetectContentType(body)
		mt, params, _ = mime.ParseMediaType(mt)
	}
	switch {
	case images.Sniff(body) != "":
		p.Image = body
		return nil
	case mt == "text/html" || mt == "application/xhtml+xml":
		markup, cut := boundMarkup(body)
		if cut {
			p.Partial = fmt.Sprintf("the page has more than %d HTML tags; only the text of its first %s was converted", maxHTMLTags, images.Size(len(markup)))
		}
		select {
		case convertSlot <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-convertSlot }()
		text, err := htmlToMarkdown(markup, params["charset"], p.URL)
		p.Text = text
		return err
	case strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt == "application/xml" || strings.HasSuffix(mt, "+xml") || mt == "application/javascript":
		p.Text = toUTF8(body, params["charset"])
		return nil
	}
	return fmt.Errorf("the page is %s (%d bytes), which cannot be shown as text", mt, len(body))
}

func htmlToMarkdown(body []byte, cs, base string) (string, error) {
	r, err := charset.NewReader(bytes.NewReader(body), "text/html; charset="+cs)
	if err != nil {
		r = bytes.NewReader(body)
	}
	conv := converter.NewConverter(converter.WithPlugins(baseplugins()...))
	md, err := conv.ConvertReader(r, converter.WithDomain(base))
	if err != nil {
		return "", fmt.Errorf("the HTML could not be read: %w", err)
	}
	return strings.TrimSpace(string(md)), nil
}

func baseplugins() []converter.Plugin {
	return []converter.Plugin{base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()}
}

func toUTF8(body []byte, cs string) string {
	if cs == "" || strings.EqualFold(cs, "utf-8") || utf8.Valid(body) {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	r, err := charset.NewReader(bytes.NewReader(body), "text/plain; charset="+cs)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	b, _ := io.ReadAll(r)
	return string(b)
}

// explainFetch says why a request failed in words the model can act on.
func explainFetch(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return fmt.Errorf("no answer within %s", webTotalTimeout)
	}
	if errors.Is(err, errNotPublic) {
		return fmt.Errorf("%v: the address is on this machine or a private network, which web_fetch reaches only when the user allowed that host by name", errors.Unwrap(ue))
	}
	if ue != nil {
		return ue.Err
	}
	return err
}

// WebCache keeps the pages sessions fetched for a while, each session's
// apart, so reading on through a long page, or the same page twice,
// fetches it once. One cache serves the daemon, bounded as a whole.
type WebCache struct {
	mu    sync.Mutex
	pages map[string]cachedPage
	order []string
	size  int
}

type cachedPage struct {
	page *webPage
	at   time.Time
}

// Bounds of the cache.
const (
	webCacheTTL   = 15 * time.Minute
	webCacheBytes = 32 << 20
)

// NewWebCache returns an empty cache.
func NewWebCache() *WebCache { return &WebCache{pages: map[string]cachedPage{}} }

func (c *WebCache) get(u string) (*webPage, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.pages[u]
	if !ok || time.Since(e.at) > webCacheTTL {
		return nil, false
	}
	return e.page, true
}

func (c *WebCache) put(u string, p *webPage) {
	if c == nil || p.Redirect != "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pages[u]; !ok {
		c.order = append(c.order, u)
	}
	c.pages[u] = cachedPage{page: p, at: time.Now()}
	c.size += len(p.Text) + len(p.Image)
	for c.size > webCacheBytes && len(c.order) > 1 {
		old := c.order[0]
		c.order = c.order[1:]
		c.size -= len(c.pages[old].page.Text) + len(c.pages[old].page.Image)
		delete(c.pages, old)
	}
}
