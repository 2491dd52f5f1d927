package holder

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDialHungHolder: a holder whose socket accepts connections but which
// never answers (stopped, hung) is not one to ask: Dial gives up with a
// connection error instead of waiting forever.
func TestDialHungHolder(t *testing.T) {
	old := pingTimeout
	pingTimeout = 100 * time.Millisecond
	defer func() { pingTimeout = old }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // read nothing, answer nothing
		}
	}()
	dir := t.TempDir()
	info, _ := json.Marshal(Info{Addr: ln.Addr().String(), Token: "t", PID: os.Getpid(), Version: Version})
	if err := os.WriteFile(filepath.Join(dir, ServeFile), info, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		c, err := Dial(dir)
		if c != nil {
			c.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !IsConnError(err) || !strings.Contains(err.Error(), "did not answer a ping") {
			t.Fatalf("Dial of a holder that never answers: %v, want a connection error saying so", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Dial waited a minute on a holder that never answers")
	}
}

// TestDialHungSocketNoTCP: a holder that takes the connection on its
// socket and says nothing is stopped or hung; Dial gives up on it without
// trying its TCP address too, which would only double the wait.
func TestDialHungSocketNoTCP(t *testing.T) {
	old := pingTimeout
	pingTimeout = 100 * time.Millisecond
	defer func() { pingTimeout = old }()
	dir := t.TempDir()
	if len(filepath.Join(dir, SockFile)) > MaxSockPath {
		dir = shortDir(t)
	}
	hold := func(ln net.Listener, accepted chan<- struct{}) {
		var held []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c) // read nothing, answer nothing
			if accepted != nil {
				accepted <- struct{}{}
			}
		}
	}
	sock, err := net.Listen("unix", filepath.Join(dir, SockFile))
	if err != nil {
		t.Skipf("no unix sockets here: %v", err)
	}
	defer sock.Close()
	go hold(sock, nil)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	tcpConns := make(chan struct{}, 16)
	go hold(tcp, tcpConns)
	info, _ := json.Marshal(Info{Addr: tcp.Addr().String(), Token: "t", PID: os.Getpid(), Version: Version, Sock: true})
	if err := os.WriteFile(filepath.Join(dir, ServeFile), info, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Dial(dir)
	if c != nil {
		c.Close()
	}
	if !IsConnError(err) || !strings.Contains(err.Error(), "did not answer a ping") {
		t.Fatalf("Dial of a silent socket: %v, want a connection error saying so", err)
	}
	if n := len(tcpConns); n > 0 {
		t.Fatalf("Dial also tried TCP (%d connections) after the socket went unanswered", n)
	}
}

// shortDir is a temporary folder whose socket path fits MaxSockPath.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "nx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestDialNoHolder: no serve.json, or one that does not parse, is no
// holder.
func TestDialNoHolder(t *testing.T) {
	dir := t.TempDir()
	for _, content := range []string{"", "{", `{"addr":""}`} {
		if content != "" {
			os.WriteFile(filepath.Join(dir, ServeFile), []byte(content), 0o600)
		}
		if c, err := Dial(dir); err == nil {
			c.Close()
			t.Errorf("serve.json %q: Dial succeeded", content)
		}
	}
}

// fakeHolder serves handler as a holder that announces keep-alives every
// ms milliseconds, on loopback TCP, and returns a client of it. The
// handler gets the request with its body read (as a holder reads it),
// so that its context ends when the client hangs up.
func fakeHolder(t *testing.T, ms int, handler http.HandlerFunc) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	info, _ := json.Marshal(Info{Addr: srv.Listener.Addr().String(), Token: "t", PID: os.Getpid(), Version: Version, KeepAliveMS: ms})
	if err := os.WriteFile(filepath.Join(dir, ServeFile), info, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestCallSilentHolder: once a holder has answered the ping, a call to it
// still gives up, with a connection error, when the holder falls silent
// for ten keep-alive intervals — before its response header or after —
// instead of waiting forever; a holder that keeps sending keep-alives is
// waited for however long it works.
func TestCallSilentHolder(t *testing.T) {
	const ms = 50 // keep-alive interval: calls give up after 500 ms of silence
	line := func(w http.ResponseWriter, rep Reply) {
		json.NewEncoder(w).Encode(rep)
		w.(http.Flusher).Flush()
	}
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request) // after the ping
		want    string                                       // the result; "" for a connection error
	}{
		{"no header", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, ""},
		{"header, then nothing", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, ""},
		{"progress, then nothing", func(w http.ResponseWriter, r *http.Request) {
			line(w, Reply{Progress: &Progress{Done: 1, Total: 2}})
			<-r.Context().Done()
		}, ""},
		{"keep-alives for forty intervals, then the result", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			for range 40 {
				time.Sleep(ms * time.Millisecond)
				line(w, Reply{Alive: true, Error: AliveError})
			}
			line(w, Reply{Result: json.RawMessage(`"done"`)})
		}, "done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fakeHolder(t, ms, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/ping" {
					line(w, Reply{Result: json.RawMessage(`{}`)})
					return
				}
				tt.handler(w, r)
			})
			var got string
			err := c.Call(context.Background(), "search", Query{Text: "x"}, &got, nil)
			if tt.want == "" {
				if !IsConnError(err) || !strings.Contains(err.Error(), "sent nothing") {
					t.Fatalf("Call = %v, want a connection error saying the holder sent nothing", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Call = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

// TestCallOldHolder: a holder that announces no keep-alives (an older
// Nexus) is waited for as before, however long it is silent, until the
// caller's context ends.
func TestCallOldHolder(t *testing.T) {
	c := fakeHolder(t, 0, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			json.NewEncoder(w).Encode(Reply{Result: json.RawMessage(`{}`)})
			return
		}
		time.Sleep(300 * time.Millisecond)
		json.NewEncoder(w).Encode(Reply{Result: json.RawMessage(`"done"`)})
	})
	var got string
	if err := c.Call(context.Background(), "search", Query{}, &got, nil); err != nil || got != "done" {
		t.Fatalf("Call = %q, %v", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Call(ctx, "search", Query{}, &got, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call with a cancelled context = %v", err)
	}
}
