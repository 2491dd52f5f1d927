package retention

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/vault"
)

// KeeperOptions tune a [Keeper]. The zero value is usable.
type KeeperOptions struct {
	// Every is how often the keeper runs when not poked. Default 3s.
	Every time.Duration
	// Now is the clock decisions are stamped with. Default time.Now.
	Now func() time.Time
	// Logger receives what the keeper carried out, and errors. Default:
	// discard.
	Logger *slog.Logger
	// Before, if set, starts every run, with the run's time and the
	// logger: 'nexus watch' and 'nexus serve' merge the conflict copies
	// sync tools leave there ([conflicts.Keep]), so that a review item's
	// two versions are merged before its decision is carried out.
	Before func(v *vault.Vault, now time.Time, log *slog.Logger)
	// After, if set, ends every run, as Before starts it: 'nexus watch'
	// and 'nexus serve' run the curator's automatic pass there
	// ([curator.Auto.Run]). Retention imports neither package: both sit
	// above it.
	After func(v *vault.Vault, now time.Time, log *slog.Logger)
}

// Keeper keeps a running vault in step with what people do in Obsidian,
// for 'nexus watch' and 'nexus serve': at every tick (or [Keeper.Poke], for
// example on a file event under review/pending/ or agents/*/memory/) it
// runs [KeeperOptions.Before] (where those commands merge the conflict
// copies sync tools leave), carries out status: approved/rejected edits ([Reconcile]) and brings every
// agent's memory/INDEX.md in step with its fact files
// ([agents.SyncAllIndexes]), rewrites the log's derived timeline when
// new entries arrived, and then runs [KeeperOptions.After]. Its goroutine
// is owned: [Keeper.Close] stops it and waits.
type Keeper struct {
	v      *vault.Vault
	opts   KeeperOptions
	poke   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartKeeper starts a keeper; it runs once at once, then every
// opts.Every, until ctx is done or Close is called.
func StartKeeper(ctx context.Context, v *vault.Vault, opts KeeperOptions) *Keeper {
	if opts.Every <= 0 {
		opts.Every = 3 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(ctx)
	k := &Keeper{v: v, opts: opts, poke: make(chan struct{}, 1), cancel: cancel}
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		t := time.NewTicker(opts.Every)
		defer t.Stop()
		for {
			k.RunOnce()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-k.poke:
			}
		}
	}()
	return k
}

// Poke asks for a run soon; it never blocks.
func (k *Keeper) Poke() {
	select {
	case k.poke <- struct{}{}:
	default:
	}
}

// RunOnce reconciles review decisions and syncs the memory indexes now, in
// the caller's goroutine. It is safe to call concurrently with the loop.
func (k *Keeper) RunOnce() {
	// Conflict copies first (Before): a review item's two versions are
	// merged before its decision is carried out.
	if k.opts.Before != nil {
		k.opts.Before(k.v, k.opts.Now(), k.opts.Logger)
	}
	res, err := Reconcile(k.v, k.opts.Now())
	for _, it := range res.Approved {
		k.opts.Logger.Info("review approved in Obsidian carried out", "id", it.ID, "agent", it.Agent, "result", it.Result, "by", it.DecidedBy)
	}
	for _, it := range res.Rejected {
		k.opts.Logger.Info("review rejected in Obsidian carried out", "id", it.ID, "agent", it.Agent, "by", it.DecidedBy)
	}
	for _, it := range res.Failed {
		k.opts.Logger.Warn("approval set in Obsidian could not be applied; item stays pending", "id", it.ID, "reason", it.Error)
	}
	if err != nil {
		k.opts.Logger.Warn("reconcile review", "err", err)
	}
	if err := agents.SyncAllIndexes(k.v); err != nil {
		k.opts.Logger.Warn("sync memory indexes", "err", err)
	}
	k.keepTimeline()
	if k.opts.After != nil {
		k.opts.After(k.v, k.opts.Now(), k.opts.Logger)
	}
}

// Close stops the keeper and waits for a run in progress to end.
func (k *Keeper) Close() error {
	k.cancel()
	k.wg.Wait()
	return nil
}
