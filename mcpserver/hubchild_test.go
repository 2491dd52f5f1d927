package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"

	"github.com/nexus-memory/nexus/mcpserver"
	"github.com/nexus-memory/nexus/vault"
)

// hubChildEnv, set to a vault's root, makes the test binary run as the hub
// of that vault instead of running tests: 'nexus serve --http 127.0.0.1:0'
// with the same server, plus net/http/pprof on a second loopback port
// (printed on stderr as "pprof=ADDR"). The hub benchmarks start it with
// NEXUS_HUB_PPROF so a heap and allocation profile can be taken of a hub
// under load without building profiling into the shipped binary.
const hubChildEnv = "NEXUS_HUB_CHILD_VAULT"

// runHubChild serves the vault at root over HTTP until SIGINT or SIGTERM
// and returns the process's exit status.
func runHubChild(root string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	v, err := vault.Open(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	go http.Serve(ln, mux)
	fmt.Fprintf(os.Stderr, "pprof=%s\n", ln.Addr())
	// As 'nexus serve' at its default --memory.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(mcpserver.DefaultMemoryBudget)
	}
	srv, err := mcpserver.New(mcpserver.Options{Vault: v, Logger: logger})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = srv.ListenAndServe(ctx, mcpserver.HTTPOptions{Addr: "127.0.0.1:0"})
	cctx, cancel := context.WithTimeout(context.Background(), 8e9)
	defer cancel()
	if cerr := srv.Close(cctx); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// saveProfile fetches a profile (heap, allocs) from a hub child's pprof
// address into dir/FILE.pprof.
func saveProfile(pprofAddr, name, dir, file string) error {
	resp, err := http.Get("http://" + pprofAddr + "/debug/pprof/" + name)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(filepath.Join(dir, file+".pprof"))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
