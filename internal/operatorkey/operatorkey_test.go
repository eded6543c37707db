package operatorkey_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/evokore/evokore/internal/operatorkey"
)

// The first Load makes a 0600 key that the next Load reads back; the
// key matches its own text only.
func TestLoadMakesAPrivateKeyOnce(t *testing.T) {
	home := t.TempDir()
	k, err := operatorkey.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(operatorkey.Path(home))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %s, want 0600", fi.Mode().Perm())
	}
	text, err := operatorkey.Read(home)
	if err != nil {
		t.Fatal(err)
	}
	if !k.Match(text) || !k.Match(text+"\n") {
		t.Error("the key does not match its own file")
	}
	for _, wrong := range []string{"", strings.Repeat("0", 64), text[:63], text + "0"} {
		if k.Match(wrong) {
			t.Errorf("the key matches %q", wrong)
		}
	}
	again, err := operatorkey.Load(home)
	if err != nil || !again.Match(text) {
		t.Errorf("a second Load made another key (%v)", err)
	}
	if (operatorkey.Key{}).Match("") || (operatorkey.Key{}).Match(text) {
		t.Error("the zero Key matches")
	}
}

// Routers and a dashboard starting together agree on one key.
func TestConcurrentLoadsAgree(t *testing.T) {
	home := t.TempDir()
	keys := make([]operatorkey.Key, 16)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := operatorkey.Load(home)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	text, err := operatorkey.Read(home)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if !k.Match(text) {
			t.Errorf("load %d read another key", i)
		}
	}
}

// A key file others may read, or one that is no key, is refused with the
// file's name; it is never replaced behind the operator's back.
func TestLoadRefusesAKeyOthersCanReadOrThatIsNoKey(t *testing.T) {
	for name, c := range map[string]struct {
		text string
		mode os.FileMode
		want string
	}{
		"readable by others": {strings.Repeat("ab", 32), 0o644, "other users may read it"},
		"not hex":            {strings.Repeat("zz", 32), 0o600, "not an operator key"},
		"short":              {"abcd", 0o600, "not an operator key"},
	} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			path := operatorkey.Path(home)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(c.text), c.mode); err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod(path, c.mode)
			_, err := operatorkey.Load(home)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("Load: %v, want an error naming %s and saying %q", err, path, c.want)
			}
			if b, _ := os.ReadFile(path); string(b) != c.text {
				t.Error("the file was replaced")
			}
		})
	}
}
