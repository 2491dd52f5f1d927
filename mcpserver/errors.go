package mcpserver

import "errors"

// ErrNoAgent is returned when a call reaches a tool without an agent bound
// by the transport (a bug in the caller of this package, not bad input).
var ErrNoAgent = errors.New("no agent bound to this connection")

// ErrShuttingDown is returned for calls that arrive while the server is
// shutting down; the client may retry against the restarted server.
var ErrShuttingDown = errors.New("server is shutting down; retry in a moment")

// ErrInsecureListen is returned by [Server.ListenAndServe] for a
// non-loopback address without TLS and without
// [HTTPOptions.InsecureListen].
var ErrInsecureListen = errors.New("refusing to serve bearer tokens in clear text on a non-loopback address; pass --tls-cert and --tls-key, or --insecure-listen if a trusted proxy terminates TLS")
