//go:build !lite

package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/nexus-memory/nexus/doctor"
)

// TestDoctorOutputGolden pins the human output of 'nexus doctor'.
func TestDoctorOutputGolden(t *testing.T) {
	for name, rep := range map[string]*doctor.Report{
		"doctor_ok.golden": {Vault: "/home/me/vault", OK: true, Results: []doctor.Result{
			{Check: "config", OK: true, Summary: "parses; 2 agents have settings of their own"},
			{Check: "key-mode", OK: true, Summary: "2 key files, mode 0600 expected"},
			{Check: "review", OK: true, Summary: "0 items pending review"},
		}},
		"doctor_findings.golden": {Vault: "/home/me/vault", Results: []doctor.Result{
			{Check: "config", OK: true, Summary: "parses; 2 agents have settings of their own"},
			{Check: "key-mode", Summary: "2 key files, mode 0600 expected", Findings: []doctor.Finding{{
				Check: "key-mode", Path: ".nexus/keys/lyra.key",
				Problem:  "private key has mode 0644: other users can read it and sign as this agent",
				Fix:      "chmod 600 /home/me/vault/.nexus/keys/lyra.key",
				Severity: doctor.SeverityProblem,
			}}},
			{Check: "index", OK: true, Summary: "10 files, 51 documents indexed", Findings: []doctor.Finding{{
				Check: "index", Severity: doctor.SeverityNote, Path: ".nexus/index",
				Problem: "the search index is 1 file behind the markdown (projects/launch.md); the next search indexes them before it answers",
				Fix:     "nothing is needed; to catch up now: nexus --vault /home/me/vault index rebuild, or keep it current as files change: nexus --vault /home/me/vault watch",
			}}},
		}},
		"doctor_notes.golden": {Vault: "/home/me/vault", OK: true, Results: []doctor.Result{
			{Check: "config", OK: true, Summary: "parses; 1 agent has settings of its own"},
			{Check: "odd-files", OK: true, Summary: "12 notes checked for odd encodings, names and links", Findings: []doctor.Finding{{
				Check: "odd-files", Severity: doctor.SeverityNote, Path: "projects/bom.md",
				Problem: "starts with a byte-order mark (U+FEFF) before its frontmatter, so Nexus does not read the frontmatter (tags, type, dates)",
				Fix:     "open it in Obsidian or an editor and save it as UTF-8 without a byte-order mark",
			}}},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			printDoctor(&buf, rep)
			checkGolden(t, filepath.Join("testdata", name), "TestDoctorOutputGolden", buf.Bytes())
		})
	}
}
