package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/nexus-memory/nexus/internal/doctor"
)

func init() {
	// -update rewrites golden files. Other test files of this package may
	// declare the same flag; register it only once.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
}

// TestDoctorOutputGolden pins the human output of 'nexus doctor'.
func TestDoctorOutputGolden(t *testing.T) {
	for name, rep := range map[string]*doctor.Report{
		"doctor_ok.golden": {Vault: "/home/me/vault", OK: true, Results: []doctor.Result{
			{Check: "config", OK: true, Summary: "parses; 2 agent(s) with settings"},
			{Check: "key-mode", OK: true, Summary: "2 key file(s), mode 0600 expected"},
			{Check: "review", OK: true, Summary: "0 item(s) pending review"},
		}},
		"doctor_findings.golden": {Vault: "/home/me/vault", Results: []doctor.Result{
			{Check: "config", OK: true, Summary: "parses; 2 agent(s) with settings"},
			{Check: "key-mode", Summary: "2 key file(s), mode 0600 expected", Findings: []doctor.Finding{{
				Check: "key-mode", Path: ".nexus/keys/lyra.key",
				Problem: "private key has mode 0644: other users can read it and sign as this agent",
				Fix:     "chmod 600 /home/me/vault/.nexus/keys/lyra.key",
			}}},
			{Check: "index", Summary: "10 file(s), 51 document(s) indexed", Findings: []doctor.Finding{{
				Check: "index", Path: ".nexus/index",
				Problem: "the search index is stale: 1 file(s) changed on disk are not in it (projects/launch.md)",
				Fix:     "nexus --vault /home/me/vault index rebuild",
			}}},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			printDoctor(&buf, rep)
			path := filepath.Join("testdata", name)
			if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("output differs from %s (run with -update if intended):\n--- got\n%s--- want\n%s", path, buf.Bytes(), want)
			}
		})
	}
}
