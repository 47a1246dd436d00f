package controlplane

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// echoServer answers each line with "echo: <line>" and returns its address.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				lines := bufio.NewScanner(conn)
				for lines.Scan() {
					if _, err := io.WriteString(conn, "echo: "+lines.Text()+"\n"); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func dialProxy(t *testing.T, p *DelayProxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return conn, bufio.NewReader(conn)
}

func roundTrip(t *testing.T, conn net.Conn, r *bufio.Reader, line string) (string, time.Duration) {
	t.Helper()
	began := time.Now()
	if _, err := io.WriteString(conn, line+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(got, "\n"), time.Since(began)
}

func TestDelayProxyForwardsAndDelaysResponses(t *testing.T) {
	p, err := newDelayProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	conn, r := dialProxy(t, p)

	if got, _ := roundTrip(t, conn, r, "a"); got != "echo: a" {
		t.Fatalf("got %q", got)
	}
	const delay = 200 * time.Millisecond
	p.SetResponseDelay(delay)
	got, took := roundTrip(t, conn, r, "b")
	if got != "echo: b" || took < delay {
		t.Fatalf("with delay %v: got %q after %v", delay, got, took)
	}
	// Several responses in flight keep their order.
	for _, line := range []string{"c", "d", "e"} {
		if _, err := io.WriteString(conn, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"echo: c", "echo: d", "echo: e"} {
		if got, err := r.ReadString('\n'); err != nil || strings.TrimSuffix(got, "\n") != want {
			t.Fatalf("got %q, %v; want %q", got, err, want)
		}
	}
	p.SetResponseDelay(0)
	if got, took := roundTrip(t, conn, r, "f"); got != "echo: f" || took >= delay {
		t.Fatalf("without delay: got %q after %v", got, took)
	}
}

func TestDelayProxyResetAndClose(t *testing.T) {
	p, err := newDelayProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	conn, r := dialProxy(t, p)
	roundTrip(t, conn, r, "a")
	p.SetResponseDelay(time.Hour) // Close must not wait for queued bytes
	if _, err := io.WriteString(conn, "never answered\n"); err != nil {
		t.Fatal(err)
	}
	p.ResetConnections()
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("read after ResetConnections: want an error")
	}
	p.SetResponseDelay(0)
	conn2, r2 := dialProxy(t, p)
	if got, _ := roundTrip(t, conn2, r2, "b"); got != "echo: b" {
		t.Fatalf("new connection after reset: got %q", got)
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Fatal("dial after Close: want an error")
	}
}
