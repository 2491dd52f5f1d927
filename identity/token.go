package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// TokenPrefix starts every bearer token Nexus issues, so a leaked token is
// easy to recognise (and to scan for).
const TokenPrefix = "nxs_"

// MaxTokenLen bounds the bearer tokens [TokenChecker.Check] looks at; a
// longer one is refused without hashing it.
const MaxTokenLen = 256

// HashToken returns the hex SHA-256 of a token, the form stored in
// .nexus/config.yaml under agents: NAME: token_sha256.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewToken issues a new bearer token for an existing agent and stores only
// its hash in .nexus/config.yaml. The token is returned once and cannot be
// recovered later. If the agent already has a token, NewToken fails with
// [ErrTokenExists] unless rotate is true, in which case the old token stops
// working at once (servers re-read the config when it changes).
func NewToken(v *vault.Vault, agent string, rotate bool) (string, error) {
	if _, err := Load(v, agent); err != nil {
		return "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	err := v.UpdateConfig(func(c *vault.Config) error {
		if c.Agents == nil {
			c.Agents = map[string]vault.AgentConfig{}
		}
		ac := c.Agents[agent]
		if ac.TokenSHA256 != "" && !rotate {
			return fmt.Errorf("agent %s: %w", agent, ErrTokenExists)
		}
		ac.TokenSHA256 = HashToken(token)
		c.Agents[agent] = ac
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// AgentForToken returns the agent whose stored token hash matches token,
// reading the current .nexus/config.yaml. It fails with [ErrBadToken] when
// none does. Servers checking many requests use a [TokenChecker].
func AgentForToken(v *vault.Vault, token string) (string, error) {
	return NewTokenChecker(v).Check(token)
}

// TokenChecker maps bearer tokens to agents. It re-reads the token hashes
// from .nexus/config.yaml whenever that file changes (size, time or
// identity), so a rotated token stops working without a restart. It is safe
// for concurrent use.
type TokenChecker struct {
	v    *vault.Vault
	path string // .nexus/config.yaml, resolved once

	mu     sync.Mutex // protects stamp and hashes
	stamp  fileStamp
	hashes []agentHash
}

type agentHash struct {
	agent string
	sum   []byte // raw SHA-256
}

type fileStamp struct {
	size  int64
	mtime time.Time
	info  os.FileInfo
}

// NewTokenChecker returns a checker for the vault's tokens.
func NewTokenChecker(v *vault.Vault) *TokenChecker {
	return &TokenChecker{v: v, path: v.MustPath(vault.ConfigFile)}
}

// Check returns the agent token belongs to, or [ErrBadToken]. The token's
// hash is compared with every stored hash in constant time.
func (tc *TokenChecker) Check(token string) (string, error) {
	if token == "" || len(token) > MaxTokenLen {
		return "", ErrBadToken
	}
	hashes, err := tc.load()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(token))
	found := ""
	for _, h := range hashes {
		// No early exit: the time taken does not depend on which agent,
		// if any, matched.
		if subtle.ConstantTimeCompare(sum[:], h.sum) == 1 {
			found = h.agent
		}
	}
	if found == "" {
		return "", ErrBadToken
	}
	return found, nil
}

func (tc *TokenChecker) load() ([]agentHash, error) {
	st, err := vault.Stat(tc.path)
	if err != nil {
		return nil, fmt.Errorf("read token hashes: %w", err)
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.stamp.info != nil && os.SameFile(tc.stamp.info, st) && tc.stamp.size == st.Size() && tc.stamp.mtime.Equal(st.ModTime()) {
		return tc.hashes, nil
	}
	fresh, err := vault.Open(tc.v.Root())
	if err != nil {
		return nil, err
	}
	var hashes []agentHash
	for name, ac := range fresh.Config().Agents {
		raw, err := hex.DecodeString(strings.TrimSpace(ac.TokenSHA256))
		if err != nil || len(raw) != sha256.Size || ValidName(name) != nil {
			continue
		}
		hashes = append(hashes, agentHash{agent: name, sum: raw})
	}
	tc.stamp = fileStamp{size: st.Size(), mtime: st.ModTime(), info: st}
	tc.hashes = hashes
	return hashes, nil
}
