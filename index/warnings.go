package index

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/nexus-memory/nexus/vault"
)

// The warnings about files (binary, too big, malformed frontmatter) are
// kept with the index in .nexus/index/warnings.json, so that 'nexus index
// status' and the doctor show them long after the build that found them,
// from any process. A file's warnings are replaced whenever it is indexed
// again and dropped when it is gone.

const warningsFile = "warnings.json"

// maxFileWarnings bounds the warnings kept per file.
const maxFileWarnings = 20

// FileWarning is what indexing found odd about one file.
type FileWarning struct {
	Path     string   `json:"path"`
	Warnings []string `json:"warnings"`
}

// fileWarnings records a file's warnings (keep: add to the ones it has,
// for a log file indexed from an offset). ix.mu must be held.
func (ix *Index) fileWarnings(key string, warns []string, keep bool) {
	for _, w := range warns {
		ix.opts.Logger.Warn("search index: " + key + ": " + w)
	}
	old, had := ix.fwarn[key]
	if keep {
		for _, w := range warns {
			if !slices.Contains(old, w) && len(old) < maxFileWarnings {
				old = append(old, w)
			}
		}
		warns = old
	} else if len(warns) > maxFileWarnings {
		warns = warns[:maxFileWarnings]
	}
	if len(warns) == 0 {
		if had {
			delete(ix.fwarn, key)
			ix.fwarnDirty = true
		}
		return
	}
	if !had || !slices.Equal(old, warns) || !keep {
		if ix.fwarn == nil {
			ix.fwarn = map[string][]string{}
		}
		ix.fwarn[key] = slices.Clone(warns)
		ix.fwarnDirty = true
	}
}

// FileWarnings lists the kept warnings by path.
func (ix *Index) FileWarnings() []FileWarning {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.fileWarningList()
}

func (ix *Index) fileWarningList() []FileWarning {
	out := make([]FileWarning, 0, len(ix.fwarn))
	for k, w := range ix.fwarn {
		out = append(out, FileWarning{Path: k, Warnings: slices.Clone(w)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// loadWarnings reads the kept warnings of the index in ix.dir; a missing
// or unreadable file is none.
func (ix *Index) loadWarnings() {
	ix.fwarn, ix.fwarnDirty = nil, false
	data, err := vault.ReadFile(filepath.Join(ix.dir, warningsFile))
	if err != nil {
		return
	}
	var list []FileWarning
	if json.Unmarshal(data, &list) != nil {
		return
	}
	ix.fwarn = make(map[string][]string, len(list))
	// Warnings are saved with the manifest, for files it holds; when its
	// lines are not decoded yet (a search that may never need them) they
	// are taken as saved.
	man := ix.man.files
	for _, fw := range list {
		_, indexed := man[fw.Path]
		if (indexed || man == nil) && len(fw.Warnings) > 0 {
			ix.fwarn[fw.Path] = fw.Warnings[:min(len(fw.Warnings), maxFileWarnings)]
		}
	}
}

// saveWarnings writes the kept warnings if they changed. ix.mu must be
// held.
func (ix *Index) saveWarnings() error {
	if !ix.fwarnDirty || ix.ro != roNone {
		return nil
	}
	data, err := json.MarshalIndent(ix.fileWarningList(), "", "  ")
	if err != nil {
		return err
	}
	if err := vault.WriteFile(filepath.Join(ix.dir, warningsFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save index warnings: %w", err)
	}
	ix.fwarnDirty = false
	return nil
}
