package search

// typoLimit is how many edits a misspelt word of n letters may be from
// its correction: none up to three letters (short words collide with
// other real words too easily), one up to seven (at four letters only a
// swap of neighbours, see typos), two beyond.
func typoLimit(n int) int {
	switch {
	case n <= 3:
		return 0
	case n <= 7:
		return 1
	default:
		return 2
	}
}

// editDistance is the optimal-string-alignment distance between a and b
// (insertions, deletions, substitutions and swaps of neighbours), or
// limit+1 as soon as it must exceed limit.
func editDistance(a, b string, limit int) int {
	la, lb := len(a), len(b)
	if d := la - lb; d > limit || -d > limit {
		return limit + 1
	}
	// Three rolling rows: the swap needs the row before the previous.
	prev2 := make([]int, lb+1)
	prev := make([]int, lb+1)
	cur := make([]int, lb+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= la; i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= lb; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[lb]
}

// letterMask has a bit per letter or digit in s, to rule out hopeless
// typo candidates before computing a distance.
func letterMask(s string) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			m |= 1 << (c - 'a')
		case c >= '0' && c <= '9':
			m |= 1 << (26 + c - '0')
		default:
			m |= 1 << 63
		}
	}
	return m
}

func popcount(m uint64) int {
	n := 0
	for m != 0 {
		m &= m - 1
		n++
	}
	return n
}
