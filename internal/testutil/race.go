//go:build race

package testutil

func init() { raceBuild = true }
