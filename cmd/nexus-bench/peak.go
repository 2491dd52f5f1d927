package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// runPeak runs cmd to the end like CombinedOutput and returns its peak
// resident memory in MB. On Linux that is the child's own high-water mark
// (VmHWM in /proc/PID/status, sampled every 10 ms until it exits; the mark
// only rises, so the last sample misses at most the last 10 ms), because
// ru_maxrss counts the parent's memory at the fork (see peakRSSMB).
// Elsewhere it is ru_maxrss.
func runPeak(cmd *exec.Cmd) (out []byte, peakMB float64, err error) {
	out, peakMB, _, err = runPeaks(cmd)
	return out, peakMB, err
}

// runPeaks is runPeak, also returning the largest anonymous resident
// memory seen (RssAnon, Linux only, else 0): the memory the process asked
// for, without the pages of files it mapped (the binary, the segments a
// merge reads), which the kernel can drop and read again. No high-water
// mark is kept for it: it is the largest of the 10 ms samples.
func runPeaks(cmd *exec.Cmd) (out []byte, peakMB, anonMB float64, err error) {
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return nil, 0, 0, err
	}
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var hwm, anon float64
	proc := true
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if proc {
			if kb, ok := statusKB(status, "VmHWM:"); ok {
				hwm = max(hwm, kb*1024/1e6)
				if kb, ok := statusKB(status, "RssAnon:"); ok {
					anon = max(anon, kb*1024/1e6)
				}
			} else if hwm == 0 {
				proc = false // no /proc (macOS), or it already exited
			}
		}
		select {
		case err := <-done:
			if hwm == 0 {
				hwm = peakRSSMB(cmd.ProcessState)
			}
			return buf.Bytes(), hwm, anon, err
		case <-tick.C:
		}
	}
}

// statusKB reads the field key (kB) from a /proc/PID/status file.
func statusKB(path, key string) (float64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb, err == nil
		}
	}
	return 0, false
}
