package oauthtest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/evokore/evokore/internal/testutil"
)

// Browser starts headless Chromium with a fresh profile (skipped where
// Chromium is not installed, failed in CI mode).
func Browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(testutil.Require(t, "chromium", "chromium-browser", "google-chrome")),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// SignIn is the user in the browser: it opens an authorization URL,
// signs in at the provider's login page when it shows one, and returns
// once evokore's loopback page says the server is authorized.
func SignIn(browserCtx context.Context) func(context.Context, string) error {
	return func(_ context.Context, url string) error {
		ctx, cancel := context.WithTimeout(browserCtx, time.Minute)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
			return err
		}
		for {
			text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
			if err != nil {
				return err
			}
			if strings.Contains(text, "is authorized") {
				return nil
			}
			if strings.Contains(text, "Username") {
				if err := chromedp.Do(ctx,
					chromedp.SendKeys(chromedp.ID("username"), User()),
					chromedp.SendKeys(chromedp.ID("password"), Password),
					chromedp.Click(chromedp.CSS("button[type=submit]"))); err != nil {
					return err
				}
			}
			select {
			case <-ctx.Done():
				return errors.New("the browser never reached evokore's page: " + text)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}
