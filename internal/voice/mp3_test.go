package voice

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// validMP3 checks that b is an MPEG audio stream: after an optional ID3v2
// tag, at least three frames whose headers are valid and whose computed
// lengths lead exactly from one frame to the next.
func validMP3(b []byte) error {
	if len(b) >= 10 && string(b[:3]) == "ID3" {
		size := int(b[6]&0x7f)<<21 | int(b[7]&0x7f)<<14 | int(b[8]&0x7f)<<7 | int(b[9]&0x7f)
		b = b[10+size:]
	}
	frames := 0
	for len(b) >= 4 && frames < 3 {
		n, err := mp3FrameLen(b[:4])
		if err != nil {
			return fmt.Errorf("frame %d: %w", frames, err)
		}
		if n > len(b) {
			break
		}
		b = b[n:]
		frames++
	}
	if frames < 3 {
		return fmt.Errorf("only %d MPEG audio frames", frames)
	}
	return nil
}

// mp3FrameLen decodes an MPEG-1/2/2.5 Layer III frame header.
func mp3FrameLen(h []byte) (int, error) {
	if h[0] != 0xff || h[1]&0xe0 != 0xe0 {
		return 0, errors.New("no frame sync")
	}
	version := (h[1] >> 3) & 3 // 0: 2.5, 2: 2, 3: 1
	layer := (h[1] >> 1) & 3   // 1: Layer III
	if version == 1 || layer != 1 {
		return 0, fmt.Errorf("not Layer III (version bits %d, layer bits %d)", version, layer)
	}
	bitrateIdx, rateIdx, padding := h[2]>>4, (h[2]>>2)&3, int(h[2]>>1)&1
	if bitrateIdx == 0 || bitrateIdx == 15 || rateIdx == 3 {
		return 0, fmt.Errorf("bad bitrate or sample rate index (%d, %d)", bitrateIdx, rateIdx)
	}
	v1 := []int{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}
	v2 := []int{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160}
	rates := map[byte][]int{3: {44100, 48000, 32000}, 2: {22050, 24000, 16000}, 0: {11025, 12000, 8000}}
	rate := rates[version][rateIdx]
	if version == 3 {
		return 144*v1[bitrateIdx]*1000/rate + padding, nil
	}
	return 72*v2[bitrateIdx]*1000/rate + padding, nil
}

// fixtureMP3 is a short spoken phrase, made once with espeak-ng and lame.
func fixtureMP3(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/hello.mp3")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFixtureIsMP3(t *testing.T) {
	b := fixtureMP3(t)
	if err := validMP3(b); err != nil {
		t.Fatalf("testdata/hello.mp3: %v", err)
	}
	if err := validMP3([]byte("ID3\x03\x00\x00\x00\x00\x00\x00not audio at all, just text")); err == nil {
		t.Error("validMP3 accepts text")
	}
	if err := validMP3(b[1:]); err == nil {
		t.Error("validMP3 accepts a stream that does not start on a frame")
	}
}
