package mcpserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/mcpserver"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "nexus test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestListenAndServeTLS(t *testing.T) {
	v := mustVault(t, "lyra")
	token, err := identity.NewToken(v, "lyra", false)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, pool := selfSigned(t)
	srv, err := mcpserver.New(mcpserver.Options{Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		// A non-loopback address is fine with TLS.
		done <- srv.ListenAndServe(ctx, mcpserver.HTTPOptions{Addr: "0.0.0.0:0", TLSCert: certFile, TLSKey: keyFile, Ready: func(a net.Addr) { addrc <- a }})
	}()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("ListenAndServe: %v", err)
	}
	port := addr.(*net.TCPAddr).Port
	hc := &http.Client{Transport: bearerTransport{token: token, base: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	tr := &sdk.StreamableClientTransport{Endpoint: "https://127.0.0.1:" + strconv.Itoa(port) + mcpserver.EndpointPath, HTTPClient: hc, DisableStandaloneSSE: true}
	cs, err := newClient(nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, cs, "log_append", map[string]any{"summary": "over TLS"})
	cs.Close()
	// Plain HTTP to the TLS port does not get through.
	resp, err := http.Post("http://127.0.0.1:"+strconv.Itoa(port)+mcpserver.EndpointPath, "application/json", strings.NewReader("{}"))
	if err == nil {
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP served on the TLS port")
		}
		resp.Body.Close()
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("shutdown: %v", err)
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	if err := srv.Close(cctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	// Without TLS the same address is refused.
	if err := srv.ListenAndServe(context.Background(), mcpserver.HTTPOptions{Addr: "0.0.0.0:0"}); !errors.Is(err, mcpserver.ErrInsecureListen) {
		t.Errorf("plain non-loopback listen: %v, want ErrInsecureListen", err)
	}
	if err := srv.ListenAndServe(context.Background(), mcpserver.HTTPOptions{Addr: "127.0.0.1:0", TLSCert: certFile}); err == nil {
		t.Error("cert without key accepted")
	}
}
