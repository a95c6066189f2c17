package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The web tools reach hosts the user allowed, and nothing else: the policy
// asks before the first request to a host; the client here refuses, at the
// moment it connects, any address on this machine or a private network
// that the user did not allow by name (so a name that resolved to a public
// address when the user was asked cannot point at 127.0.0.1 or the cloud's
// metadata service by the time the request is made), and follows a
// redirect only to a host the user already allowed.

// HostAccess is the host a network tool reaches, as the policy judges it.
type HostAccess struct {
	// Name is the host, lower case, without the port.
	Name string
	// Private: it resolves to an address on this machine or a private,
	// link-local or otherwise non-public network. Only a rule or an answer
	// that names the host allows it, whatever the mode.
	Private bool
}

// HostGate says whether a network tool may reach a host without asking,
// by the policy's rules, the session's grants and the mode: a redirect is
// followed only where it says yes.
type HostGate interface {
	HostAllowed(tool string, h HostAccess) bool
	// HostRefused says the policy refuses every request to the host
	// (read-only mode, a deny rule): its name is not looked up then. A
	// lookup is a request too: the name goes to the resolvers, and a
	// model that writes what it read into a name (secret.attacker.example)
	// sends it out before the user is asked, in read-only mode too.
	HostRefused(tool, host string) bool
}

// Timeouts and bounds of a web request.
const (
	webDialTimeout  = 10 * time.Second
	webTotalTimeout = 30 * time.Second
	webMaxBody      = 10 << 20 // a page is read up to this, then cut
	webMaxRedirects = 5
)

// errNotPublic is a connection refused because the address is not public.
var errNotPublic = errors.New("not a public address")

// publicAddr reports whether a is an address of the public internet.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	switch {
	case !a.IsValid(), a.IsLoopback(), a.IsPrivate(), a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(),
		a.IsInterfaceLocalMulticast(), a.IsMulticast(), a.IsUnspecified():
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// nonPublic are the ranges netip does not name: shared address space
// (carrier NAT), "this network", IETF protocol assignments, benchmarking,
// documentation, reserved, and their IPv6 kin (NAT64 of any of them is
// caught after Unmap only for the mapped form; 64:ff9b::/96 is refused
// whole), and the IPv6 forms that carry an IPv4 address a host may route
// to itself: IPv4-compatible (::127.0.0.1), IPv4-translated
// (::ffff:0:127.0.0.1), local NAT64 (64:ff9b:1::/48), 6to4 (2002::/16),
// and the old site-local fec0::/10.
var nonPublic = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "64:ff9b::/96", "100::/64", "2001:db8::/32",
		"::/96", "::ffff:0:0:0/96", "64:ff9b:1::/48", "2002::/16", "fec0::/10"} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// lookupNetIP resolves a name (tests count the lookups).
var lookupNetIP = net.DefaultResolver.LookupNetIP

// resolveHost looks the host up and says whether any of its addresses is
// not public.
func resolveHost(ctx context.Context, host string) (HostAccess, error) {
	h := HostAccess{Name: strings.ToLower(strings.TrimSuffix(host, "."))}
	if a, err := netip.ParseAddr(strings.Trim(h.Name, "[]")); err == nil {
		h.Private = !publicAddr(a)
		return h, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := lookupNetIP(ctx, "ip", h.Name)
	if err != nil {
		return h, err
	}
	for _, a := range addrs {
		if !publicAddr(a) {
			h.Private = true
		}
	}
	return h, nil
}

// webDialer connects only to public addresses, or to the addresses of
// hosts the user allowed by name although they are not public. It
// resolves the name itself and dials the address it checked, so the
// answer checked is the one used.
type webDialer struct {
	net.Dialer
	mu      sync.Mutex
	private map[string]bool // hosts allowed although not public
}

func (d *webDialer) allowPrivate(host string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.private[strings.ToLower(host)] = true
}

func (d *webDialer) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = lookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	d.mu.Lock()
	private := d.private[strings.ToLower(host)]
	d.mu.Unlock()
	var last error = fmt.Errorf("%s has no address", host)
	for _, a := range addrs {
		if !private && !publicAddr(a) {
			last = fmt.Errorf("%s is %s: %w", host, a, errNotPublic)
			continue
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// webClient makes the client for one fetch of first. gate judges
// redirects to other hosts; one it does not allow is not followed, and
// refused then holds its URL.
func webClient(first HostAccess, gate HostGate, tool string, refused *string) *http.Client {
	d := &webDialer{Dialer: net.Dialer{Timeout: webDialTimeout, KeepAlive: -1}, private: map[string]bool{}}
	if first.Private {
		d.allowPrivate(first.Name)
	}
	tr := &http.Transport{DialContext: d.dial, TLSHandshakeTimeout: webDialTimeout,
		ResponseHeaderTimeout: webTotalTimeout, DisableKeepAlives: true, MaxResponseHeaderBytes: 1 << 20,
		ForceAttemptHTTP2: true}
	return &http.Client{Transport: tr, Timeout: webTotalTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= webMaxRedirects {
				return fmt.Errorf("more than %d redirects", webMaxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("a redirect to a %s: URL", req.URL.Scheme)
			}
			if strings.EqualFold(req.URL.Hostname(), first.Name) {
				return nil
			}
			next, err := resolveHost(req.Context(), req.URL.Hostname())
			if err != nil {
				return err
			}
			if gate == nil || !gate.HostAllowed(tool, next) {
				*refused = req.URL.String()
				return http.ErrUseLastResponse
			}
			if next.Private {
				d.allowPrivate(next.Name)
			}
			return nil
		}}
}

// checkURL parses a URL the model gave: http or https, a host, no
// credentials in it.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return nil, fmt.Errorf("not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("only http and https URLs can be fetched, not %q", u.Scheme)
	case u.Hostname() == "":
		return nil, errors.New("the URL has no host")
	case u.User != nil:
		return nil, errors.New("the URL carries a user name or password; leave them out")
	}
	u.Fragment = ""
	return u, nil
}
