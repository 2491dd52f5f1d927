package holder

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
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
		if err == nil || !IsConnError(err) {
			t.Fatalf("Dial of a holder that never answers: %v, want a connection error", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Dial waited a minute on a holder that never answers")
	}
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
