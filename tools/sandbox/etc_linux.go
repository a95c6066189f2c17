package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// /etc holds what every program needs (how to resolve a name, who the
// user is, which certificates to trust, where the libraries are) beside
// what nobody but a service should read: TLS private keys
// (/etc/letsencrypt), cluster and database credentials
// (/etc/kubernetes/admin.conf, /etc/mysql/debian.cnf), VPN and Wi-Fi
// secrets, Kerberos keytabs, CI runners' tokens. A deny-list misses
// whatever it does not name, so commands read only the entries below;
// everything else under /etc does not exist for them as far as reading
// goes (Landlock does not restrict stat). Patterns are path.Match globs,
// relative to /etc.
var etcAllowed = []string{
	// Names, users, hosts and services.
	"hosts", "host.conf", "hostname", "resolv.conf", "nsswitch.conf", "gai.conf", "networks", "protocols",
	"services", "rpc", "ethertypes", "netconfig", "passwd", "group", "shells", "machine-id", "mailname",
	// The dynamic linker and the system's identity.
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ld.so.preload", "alternatives", "os-release", "lsb-release",
	"debian_version", "redhat-release", "system-release", "fedora-release", "alpine-release", "arch-release",
	"issue", "mtab",
	// Time and language.
	"localtime", "timezone", "locale.alias", "locale.conf", "default/locale",
	// Trust: the certificates, never the keys beside them.
	"ssl/certs", "ssl/openssl.cnf", "ssl/ct_log_list.cnf", "ca-certificates", "ca-certificates.conf",
	"pki/ca-trust", "pki/tls/certs", "pki/tls/cert.pem", "pki/tls/openssl.cnf", "pki/java", "crypto-policies",
	"gnutls", "java-*", "java", "pip.conf", "gitconfig", "gitattributes", "wgetrc", "ssh/ssh_config",
	"ssh/ssh_config.d", "ssh/ssh_known_hosts", "krb5.conf", "maven",
	// Shells, terminals and editors.
	"profile", "profile.d", "bash.bashrc", "bash_completion", "bash_completion.d", "inputrc",
	"terminfo", "vim", "nanorc", "xdg", "mime.types", "mailcap", "magic", "magic.mime", "manpath.config",
	// Languages' and libraries' own settings.
	"perl", "python3", "python3.*", "fonts", "xml", "sgml", "ImageMagick-*", "chromium", "chromium.d",
	"selinux/config",
}

// etcRules are the existing paths of etcAllowed under /etc, found once:
// the entries are opened for every command, a missing one would cost a
// failed open each time.
var etcRules = sync.OnceValue(func() []string { return etcAllowedIn("/etc") })

// etcAllowedIn lists the entries of etcAllowed that exist under root.
func etcAllowedIn(root string) []string {
	var out []string
	for _, pattern := range etcAllowed {
		matches, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, m := range matches {
			if _, err := os.Lstat(m); err == nil {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
