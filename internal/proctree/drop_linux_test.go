package proctree

import (
	"bytes"
	"crypto/sha256"
	"os"
	"slices"
	"strconv"
	"testing"
	"unicode"
)

// Only pages that are the file's own content are dropped: a writable
// mapping (even one not written yet: a write may land between reading
// smaps and dropping), a relocated read-only one (anonymous copies), a shared one, an
// anonymous one and the kernel's own ([vdso]) keep theirs.
func TestOnlyUnmodifiedReadOnlyFileMappingsAreDropped(t *testing.T) {
	smaps := []byte(`00400000-01ad3000 r-xp 00000000 fe:00 10003444                           /usr/bin/evokore
Size:              19276 kB
Rss:               14844 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
01ad3000-04553000 r--p 016d3000 fe:00 10003444                           /usr/bin/evokore
Rss:               16440 kB
Anonymous:             0 kB
VmFlags: rd mr mw me
04553000-04782000 rw-p 04153000 fe:00 10003444                           /usr/bin/evokore
Anonymous:           316 kB
7f0000000000-7f0000010000 rw-p 00000000 fe:00 557 /var/cache/unwritten-yet.bin
Anonymous:             0 kB
7f00000a0000-7f00000b0000 r--p 00010000 fe:00 555 /usr/lib/libc.so.6
Anonymous:             8 kB
7f00000c0000-7f00000d0000 r--s 00000000 fe:00 556 /var/cache/shared.db
Anonymous:             0 kB
7f00000e0000-7f00000f0000 r--p 00000000 00:00 0
Anonymous:             0 kB
7f0000100000-7f0000110000 r-xp 00000000 00:00 0                          [vdso]
Anonymous:             0 kB
7f0000120000-7f0000130000 r-xp 00026000 fe:00 326269                     /usr/lib/x86_64-linux-gnu/libc.so.6
Rss:                 972 kB
7f0000140000-7f0000150000 r-xp 00026000 fe:00 326270                     /usr/lib/with space/libx.so
Anonymous:             0 kB
`)
	got := droppable(smaps)
	want := []span{{0x400000, 0x1ad3000}, {0x1ad3000, 0x4553000}, {0x7f0000140000, 0x7f0000150000}}
	if !slices.Equal(got, want) {
		t.Fatalf("droppable = %x, want %x (the binary's text and rodata, and a library that says it holds no anonymous page)", got, want)
	}
	if got := droppable([]byte("garbage\n\n-\nzz-yy r--p 0 0 0 /x\nAnonymous: 0 kB\n")); len(got) != 0 {
		t.Fatalf("droppable of a malformed text = %x, want none", got)
	}
}

// Dropping the pages of this very test binary leaves it working: the
// read-only tables it reads afterwards are the same, faulted back in.
// And the pages it touched before and not since stop counting.
func TestDroppedPagesFaultBackIn(t *testing.T) {
	tables := func() [32]byte {
		h := sha256.New()
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if unicode.IsUpper(r) || unicode.Is(unicode.Han, r) || unicode.IsPunct(r) {
				h.Write([]byte(strconv.Itoa(int(r))))
			}
		}
		return [32]byte(h.Sum(nil))
	}
	before := tables()
	if n := DropFilePages(); n == 0 {
		t.Fatal("DropFilePages dropped nothing; this binary's text alone is a read-only file mapping")
	}
	if after := tables(); after != before {
		t.Fatal("the unicode tables read differently after their pages were dropped")
	}
	// The resident set is read right after a drop, with as little code
	// as possible in between.
	full := rssFile(t)
	DropFilePages()
	dropped := rssFile(t)
	if dropped >= full {
		t.Fatalf("RssFile %d kB after dropping, %d kB before: nothing left the resident set", dropped, full)
	}
}

func rssFile(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	_, rest, ok := bytes.Cut(b, []byte("RssFile:"))
	f := bytes.Fields(rest)
	if !ok || len(f) == 0 {
		t.Skip("no RssFile in /proc/self/status")
	}
	n, _ := strconv.Atoi(string(f[0]))
	return n
}
