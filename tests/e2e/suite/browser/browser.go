// Package browser runs Debian's headless Chromium for the dashboard's tests
// and benchmark (chromedp over the DevTools protocol): one browser per
// test, a tab per page, and what each page wrote to its console.
package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// RequireEnv makes a missing Chromium fail the test instead of skipping it
// (prepare.sh sets it in CI, where `make deps` installs chromium).
const RequireEnv = "E2E_REQUIRE_CHROMIUM"

// Chromium is the path of the browser: $E2E_CHROMIUM, else chromium on the
// PATH. Without one the test is skipped, saying what to install, unless
// E2E_REQUIRE_CHROMIUM is set.
func Chromium(tb testing.TB) string {
	tb.Helper()
	if path := os.Getenv("E2E_CHROMIUM"); path != "" {
		return path
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	why := "no chromium on the PATH (Debian: apt-get install chromium; make deps installs it)"
	if os.Getenv(RequireEnv) != "" {
		tb.Fatalf("%s, and %s is set", why, RequireEnv)
	}
	tb.Skip(why)
	return ""
}

// Start runs the browser, headless and, since tests run as root, without
// its sandbox; it stops when the test ends. The returned context is the
// browser's first tab.
func Start(tb testing.TB, path string) context.Context {
	tb.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	tb.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// Page is one tab and what its page wrote to the console.
type Page struct {
	Ctx     context.Context
	URL     string
	close   context.CancelFunc
	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// Close closes the tab (else it closes when the test ends), so that its
// page stops polling.
func (p *Page) Close() { p.close() }

// Open opens url in a new tab of the browser and records its console from
// before the navigation; the tab closes when the test ends.
func Open(tb testing.TB, browser context.Context, url string) *Page {
	tb.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	tb.Cleanup(cancel)
	p := &Page{Ctx: ctx, URL: url, close: cancel}
	messages := chromedp.Console(ctx) // subscribed here, before navigating
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			p.mu.Lock()
			p.console = append(p.console, m)
			p.mu.Unlock()
		}
	}()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		tb.Fatalf("open %s: %v", url, err)
	}
	return p
}

// Errors are the console's errors: console.error calls, uncaught
// exceptions and unhandled rejections, and the browser log's errors (a
// CSP violation, a resource that failed to load), except those whose text
// contains one of `expected`.
func (p *Page) Errors(expected ...string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errors []string
	for _, m := range p.console {
		if m.Type != chromedp.ConsoleError && !m.IsException() {
			continue
		}
		text := m.String()
		if m.URL != "" {
			text += fmt.Sprintf(" (%s:%d)", m.URL, m.Line)
		}
		allowed := false
		for _, e := range expected {
			allowed = allowed || strings.Contains(text, e)
		}
		if !allowed {
			errors = append(errors, text)
		}
	}
	return errors
}

// Until polls the JavaScript expression until it is truthy and returns its
// value, failing the test after `timeout`.
func Until[T any](tb testing.TB, p *Page, timeout time.Duration, what, expression string) T {
	tb.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Poll[T](expression,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		tb.Fatalf("%s: %s never held within %v: %v", p.URL, what, timeout, err)
	}
	return v
}

// Eval evaluates the JavaScript expression on the page.
func Eval[T any](tb testing.TB, p *Page, expression string) T {
	tb.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		tb.Fatalf("%s: %s: %v", p.URL, expression, err)
	}
	return v
}

// Screenshot writes the whole page as a PNG to path; with viewport, only
// what the window shows (a page of 5,000 nodes is 12,000 pixels tall).
func Screenshot(tb testing.TB, p *Page, path string, viewport bool) {
	tb.Helper()
	shot := chromedp.FullScreenshot(100)
	if viewport {
		shot = chromedp.CaptureScreenshot()
	}
	png, err := chromedp.Run(p.Ctx, shot)
	if err != nil {
		tb.Fatalf("screenshot of %s: %v", p.URL, err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// Hover moves the mouse to (x, y), in CSS pixels of the viewport.
func Hover(tb testing.TB, p *Page, x, y float64) {
	tb.Helper()
	if err := chromedp.Do(p.Ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y)); err != nil {
		tb.Fatalf("%s: hover at %.0f,%.0f: %v", p.URL, x, y, err)
	}
}
