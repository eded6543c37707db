package hooks

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// evokore's approval surfaces, as an agent's shell could reach them: the
// approvals CLI, the dashboard's and routers' approvals routes, and the
// state under EVOKORE_HOME (guardedState). Built in, whatever the rules
// file says. What the line shows literally is judged (blocked when it
// decides an approval); what it hides behind indirection damage-control
// cannot resolve ($A, ${X:-…}, $(…), xargs, a pseudo-terminal) asks,
// whenever it could reach one of them. The hook is defence in depth: the
// boundary is the operating system's (docs/security.md).

// surfaceDecision judges a command against the approval surfaces.
func surfaceDecision(c shellCommand) Decision {
	if len(c.words) == 0 {
		return Decision{Action: Allow}
	}
	if u := c.unk[0]; u.unknown() {
		return Decision{Ask, "the command's name comes from " + c.words[0][u.from:u.to] + ", which damage-control cannot resolve, so it cannot tell whether it reaches evokore's approvals"}
	}
	if d := approvalsCLI(c); d.Action != Allow {
		return d
	}
	return approvalsHTTP(c)
}

// approvalsCLI judges `evokore approvals approve|deny` however it is
// started (a path to the binary, go run, a wrapper, env assignments: the
// parser has peeled those).
func approvalsCLI(c shellCommand) Decision {
	for i := 1; i+1 < len(c.words); i++ {
		if c.words[i] == "approvals" && !c.unk[i+1].unknown() && (c.words[i+1] == "approve" || c.words[i+1] == "deny") {
			return Decision{Block, "'evokore approvals " + c.words[i+1] + "' decides a call held for the user; an agent may not run it (an operator runs it at a terminal)"}
		}
	}
	k := evokoreAt(c)
	if k < 0 {
		return Decision{Action: Allow}
	}
	for i := k + 1; i < len(c.words); i++ {
		if u := c.unk[i]; u.unknown() {
			return Decision{Ask, "evokore runs with an argument from " + c.words[i][u.from:u.to] + ", which damage-control cannot resolve: it could decide an approval"}
		}
	}
	switch {
	case c.fed:
		return Decision{Ask, "evokore runs with arguments another command supplies (xargs, find -exec): they could decide an approval"}
	case c.pty && contains(c.words[k+1:], "approvals"):
		return Decision{Ask, "evokore's approvals run on a pseudo-terminal a wrapper made, which passes their terminal confirmation"}
	}
	return Decision{Action: Allow}
}

// evokoreAt is the index of the word that names evokore's binary (or
// its source, for go run), -1 when none does.
func evokoreAt(c shellCommand) int {
	for i, w := range c.words {
		if c.unk[i].unknown() {
			continue
		}
		base := filepath.Base(strings.TrimRight(w, "/"))
		if base == "evokore" || base == "evokore.exe" || strings.HasSuffix(strings.TrimRight(w, "/"), "cmd/evokore") {
			return i
		}
		if i > 0 && !(c.words[0] == "go" || c.words[0] == "npx" || c.words[0] == "bunx" || c.words[0] == "pnpm") {
			return -1
		}
	}
	return -1
}

// httpClients are the commands that send HTTP requests.
var httpClients = map[string]bool{"curl": true, "wget": true, "http": true, "https": true, "xh": true, "xhs": true,
	"httpie": true, "websocat": true, "wscat": true, "aria2c": true, "fetch": true, "lwp-request": true, "POST": true, "GET": true,
	"wget2": true, "curlie": true, "hurl": true}

// rawClients send whatever text they are given to an address.
var rawClients = map[string]bool{"nc": true, "ncat": true, "netcat": true, "socat": true, "telnet": true, "openssl": true}

// dataOptions take a value that is not the URL.
var dataOptions = map[string]bool{"-d": true, "--data": true, "--data-raw": true, "--data-binary": true, "--data-urlencode": true,
	"-H": true, "--header": true, "-o": true, "--output": true, "-O": true, "-u": true, "--user": true, "-X": true, "--request": true,
	"-A": true, "--user-agent": true, "-e": true, "--referer": true, "-b": true, "--cookie": true, "-F": true, "--form": true,
	"--post-data": true, "--header=": true}

// approvalsHTTP judges HTTP clients calling the approvals routes of the
// dashboard or a router, matched on the path the server serves (percent
// decoding and dot segments undone), and URLs it cannot resolve.
func approvalsHTTP(c shellCommand) Decision {
	name := c.name()
	if !httpClients[name] && !rawClients[name] {
		return Decision{Action: Allow}
	}
	texts := c.words[1:]
	if rawClients[name] && c.hasStdin {
		texts = append(texts, c.stdin)
	}
	for _, t := range texts {
		if approvalsRoute(t) {
			return Decision{Block, "the approvals API decides calls held for the user; an agent may not call it"}
		}
	}
	if !httpClients[name] {
		return Decision{Action: Allow}
	}
	for i := 1; i < len(c.words); i++ {
		u := c.unk[i]
		if !u.unknown() || dataOptions[c.words[i-1]] {
			continue
		}
		if !remoteHost(c.words[i][:u.from]) {
			return Decision{Ask, name + " calls a URL built from " + c.words[i][u.from:u.to] + ", which damage-control cannot resolve: it could be evokore's approvals API"}
		}
	}
	return Decision{Action: Allow}
}

var dotSegment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/[^/\s]+/\.\.(/|$)`) })

// approvalsRoute reports whether text names an approvals route, read as
// a server reads it: percent escapes decoded (more than once, for
// safety), backslashes as slashes, empty and dot segments removed, case
// folded.
func approvalsRoute(text string) bool {
	s := strings.ToLower(text)
	for range 3 {
		d, err := url.PathUnescape(strings.ReplaceAll(s, "+", "%2B"))
		if err != nil || d == s {
			break
		}
		s = strings.ToLower(d)
	}
	s = strings.ReplaceAll(s, `\`, "/")
	for {
		next := strings.ReplaceAll(strings.ReplaceAll(s, "/./", "/"), "//", "/")
		next = dotSegment().ReplaceAllString(next, "/")
		if next == s {
			break
		}
		s = next
	}
	return strings.Contains(s, "/api/approvals") || strings.Contains(s, "/ws/approvals")
}

// remoteHost reports whether the known start of a URL names a host that
// is not this machine (so it is not evokore's dashboard or router).
func remoteHost(prefix string) bool {
	_, rest, ok := strings.Cut(prefix, "://")
	if !ok {
		return false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		return false // the host itself is not all known
	}
	host := rest[:end]
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	switch {
	case host == "", host == "localhost", strings.HasSuffix(host, ".localhost"), strings.HasPrefix(host, "127."),
		host == "::1", host == "0.0.0.0", host == "0", strings.HasPrefix(host, "::ffff:127."):
		return false
	}
	return true
}
