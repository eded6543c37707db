package skills

import "strings"

// URIScheme is the scheme of skill resources.
const URIScheme = "skill://"

// skillURI is skill://<category>[/<subcategory>]/<name>, each part with the
// characters a URI path cannot carry plainly turned into '-'.
func skillURI(s *Skill) string {
	var b strings.Builder
	b.WriteString(URIScheme)
	b.WriteString(uriPart(s.Category, false))
	if s.Subcategory != "" {
		b.WriteByte('/')
		b.WriteString(uriPart(s.Subcategory, true))
	}
	b.WriteByte('/')
	b.WriteString(uriPart(s.Name, false))
	return b.String()
}

func uriPart(s string, slashes bool) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			return r
		case r == '/' && slashes:
			return r
		}
		return '-'
	}, s)
}
