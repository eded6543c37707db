package proctree

import "bytes"

// TreeVarPrefix starts the name of every tree mark variable; the
// router's token follows.
const TreeVarPrefix = "EVOKORE_PROCTREE_"

// treeMark reports whether mark is a whole tree mark prefix,
// "EVOKORE_PROCTREE_<token>=" with a token of lower-case hex digits.
func treeMark(mark []byte) bool {
	token, ok := bytes.CutPrefix(mark, []byte(TreeVarPrefix))
	if !ok {
		return false
	}
	token, ok = bytes.CutSuffix(token, []byte("="))
	if !ok || len(token) == 0 {
		return false
	}
	for _, c := range token {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
