package search

import (
	"encoding/binary"
	"os"
	"testing"
)

// The vector table's pages leave the resident set after an index is
// built and after every query, and semantic search finds the same thing
// with them faulted back in.
func TestSemanticSearchWorksWithTheTableReleased(t *testing.T) {
	if !tableDroppable() {
		t.Fatal("the table's pages, rodata of this test binary, are not a droppable file mapping")
	}
	docs := []Doc{
		{Fields: []string{"merge_pdf", "Merge several PDF files into one PDF.", ""}},
		{Fields: []string{"take_screenshot", "Capture the browser page as a PNG image.", ""}},
		{Fields: []string{"send_email", "Send an email message to a recipient.", ""}},
		{Fields: []string{"play_song", "Play a song from the music library.", ""}},
	}
	opts := Options{Fields: testFields, MinConfidence: 0.4, MinEvidence: 0.5, Semantic: 0.5, SemanticJoin: 0.6, SemanticFloor: 0.6}
	ix := Build(opts, docs)
	if n := residentTablePages(t); n != 0 {
		t.Fatalf("%d pages of the table resident after the index was built, want 0", n)
	}
	// "landlord" and "letter" are in no document: the query reads the
	// table for them.
	for range 2 {
		r := ix.Search("write a letter to my landlord", 3, nil)
		if len(r.Hits) == 0 || r.Hits[0].Doc != 2 || r.Hits[0].Semantic <= 0 {
			t.Fatalf("with the table released: %+v", r)
		}
		if n := residentTablePages(t); n != 0 {
			t.Fatalf("%d pages of the table resident after a query, want 0", n)
		}
	}
}

// residentTablePages counts the table's whole pages this process maps
// (/proc/self/pagemap, bit 63 of each page's entry).
func residentTablePages(t *testing.T) int {
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	page := uintptr(os.Getpagesize())
	lo, hi := tableSpan()
	lo, hi = (lo+page-1)&^(page-1), hi&^(page-1)
	buf := make([]byte, 8*((hi-lo)/page))
	if _, err := f.ReadAt(buf, int64(lo/page*8)); err != nil {
		t.Skip(err)
	}
	n := 0
	for i := 0; i < len(buf); i += 8 {
		if binary.LittleEndian.Uint64(buf[i:])>>63 == 1 {
			n++
		}
	}
	return n
}
