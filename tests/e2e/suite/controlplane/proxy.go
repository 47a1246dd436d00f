package controlplane

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// DelayProxy forwards TCP connections on loopback to a target and can delay
// everything the target sends back: a slow API server whose writes still
// land (TLS passes through untouched, so the client still verifies the
// apiserver's certificate).
type DelayProxy struct {
	listener net.Listener
	// targets are tried in order for each connection, as a Service picks
	// an endpoint that is up.
	targets []string
	delay   atomic.Int64 // nanoseconds, applied to target → client bytes

	mu     sync.Mutex
	conns  map[*proxyConn]struct{}
	closed bool
	wg     sync.WaitGroup
}

type proxyConn struct {
	client, upstream net.Conn
	done             chan struct{} // closed to abort delayed writes
	once             sync.Once
}

func (c *proxyConn) close() {
	c.once.Do(func() {
		close(c.done)
		c.client.Close()
		c.upstream.Close()
	})
}

// newDelayProxy listens on a free loopback port and forwards each
// connection to the first of targets that accepts it.
func newDelayProxy(targets ...string) (*DelayProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := &DelayProxy{listener: l, targets: targets, conns: map[*proxyConn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *DelayProxy) Addr() string { return p.listener.Addr().String() }

// SetResponseDelay delays every byte the target sends, from the moment it
// arrives at the proxy, by d (0 turns delaying off). Order is preserved per
// connection; bytes already queued keep the delay they arrived with.
func (p *DelayProxy) SetResponseDelay(d time.Duration) { p.delay.Store(int64(d)) }

// ResetConnections closes every open connection (clients must reconnect);
// new connections are still accepted.
func (p *DelayProxy) ResetConnections() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.close()
	}
}

// Close stops accepting, closes every connection and waits for the
// forwarding goroutines.
func (p *DelayProxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.listener.Close()
	p.ResetConnections()
	p.wg.Wait()
}

func (p *DelayProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.listener.Accept()
		if err != nil {
			return // listener closed
		}
		upstream, err := p.dial()
		if err != nil {
			client.Close() // every target is down: so is the proxy
			continue
		}
		c := &proxyConn{client: client, upstream: upstream, done: make(chan struct{})}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.close()
			return
		}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(c)
	}
}

func (p *DelayProxy) dial() (net.Conn, error) {
	var last error
	for _, target := range p.targets {
		conn, err := net.DialTimeout("tcp", target, 5*time.Second)
		if err == nil {
			return conn, nil
		}
		last = err
	}
	return nil, last
}

// serve forwards both directions; each half-closes its destination when
// its source ends, and the connection is closed when both have ended.
func (p *DelayProxy) serve(c *proxyConn) {
	defer p.wg.Done()
	var both sync.WaitGroup
	both.Add(2)
	go func() {
		defer both.Done()
		_, _ = io.Copy(c.upstream, c.client)
		closeWrite(c.upstream)
	}()
	go func() {
		defer both.Done()
		p.copyDelayed(c)
		closeWrite(c.client)
	}()
	both.Wait()
	c.close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func closeWrite(conn net.Conn) {
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.CloseWrite()
	}
}

type chunk struct {
	data []byte
	due  time.Time
}

// copyDelayed reads from upstream, stamping each chunk with its due time,
// and writes chunks to the client in order once due.
func (p *DelayProxy) copyDelayed(c *proxyConn) {
	chunks := make(chan chunk, 256)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := c.upstream.Read(buf)
			if n > 0 {
				due := time.Now().Add(time.Duration(p.delay.Load()))
				select {
				case chunks <- chunk{data: buf[:n], due: due}:
				case <-c.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range chunks {
		if wait := time.Until(ch.due); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-c.done:
				timer.Stop()
				drain(chunks)
				return
			}
		}
		if _, err := c.client.Write(ch.data); err != nil {
			// The client went away: stop reading upstream too.
			c.close()
			drain(chunks)
			return
		}
	}
}

// drain empties chunks until the reader closes it, so the reader never
// blocks on a send (it also watches done).
func drain(chunks chan chunk) {
	for range chunks {
	}
}
