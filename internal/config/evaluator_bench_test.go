package config

import "testing"

// BenchmarkBuildEvaluator compiles the embedded schema package, the
// largest piece of evokore's own work before `initialize` is answered.
func BenchmarkBuildEvaluator(b *testing.B) {
	for b.Loop() {
		if _, err := buildEvaluator(); err != nil {
			b.Fatal(err)
		}
	}
}
