package voice

import (
	"context"
	"slices"
	"strconv"
	"strings"
)

// atempoChain builds ffmpeg's audio filter for a tempo factor. One atempo
// stage accepts 0.5 to 2.0 on every ffmpeg version, so larger and smaller
// factors are split into a chain whose product is the factor.
func atempoChain(tempo float64) string {
	var stages []string
	for tempo > 2.0 {
		stages = append(stages, "atempo=2.0")
		tempo /= 2.0
	}
	for tempo < 0.5 {
		stages = append(stages, "atempo=0.5")
		tempo /= 0.5
	}
	stages = append(stages, "atempo="+strconv.FormatFloat(tempo, 'f', -1, 64))
	return strings.Join(stages, ",")
}

// changeTempo writes in, played at tempo, to out.
func changeTempo(ctx context.Context, ffmpeg []string, in, out string, tempo float64) error {
	return runProcess(ctx, append(slices.Clip(ffmpeg), "-y", "-nostdin", "-loglevel", "error", "-i", in, "-filter:a", atempoChain(tempo), out))
}
