package webhook

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// The timeouts of the servers NewServer makes. The sender gives up 10 s
// after it connected, so a connection whose headers or body have not
// arrived by then serves no delivery: it is closed, which also keeps slow
// clients from holding connections open.
const (
	// ReadHeaderTimeout bounds the reading of a request's headers.
	ReadHeaderTimeout = 5 * time.Second
	// ReadTimeout bounds the reading of a whole request, body included.
	ReadTimeout = SenderTimeout
	// WriteTimeout bounds a request from its headers to the end of its
	// answer: the body, the store (StoreTimeout) and the answer.
	WriteTimeout = 2 * SenderTimeout
	// IdleTimeout bounds a kept-alive connection between requests.
	IdleTimeout = time.Minute
)

// NewServer returns an http.Server for handler on addr with timeouts that
// fit the sender's: ReadHeaderTimeout, ReadTimeout, WriteTimeout and
// IdleTimeout. http.ListenAndServe sets none, so a client sending slowly
// holds its connection for as long as it likes.
func NewServer(addr string, handler http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}

// ListenAndServe listens on addr and calls Serve.
func ListenAndServe(ctx context.Context, addr string, h *Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return Serve(ctx, ln, h)
}

// Serve runs h on ln until ctx ends: it starts h's workers (Run) and serves
// deliveries with a server from NewServer, and h's health (HealthHandler)
// at /healthz. When ctx ends it stops in the order that loses nothing: h's
// Shutdown while the server still listens (deliveries arriving then are
// closed without an answer, so that the server sends them again), then the
// server. The queue is left to the caller, to close after Serve returns.
// Serve returns nil after such a stop, or the error that ended it sooner: a
// failing listener, or the queue closed under the workers.
func Serve(ctx context.Context, ln net.Listener, h *Handler) error {
	mux := http.NewServeMux()
	mux.Handle("/healthz", h.HealthHandler())
	mux.Handle("/", h)
	srv := NewServer(ln.Addr().String(), mux)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- srv.Serve(ln)
		cancel()
	}()
	ran := make(chan error, 1)
	go func() {
		// Shutdown stops the workers; ctx ending alone must not, while
		// deliveries are still admitted.
		ran <- h.Run(context.WithoutCancel(ctx))
		cancel()
	}()
	<-ctx.Done()
	stopCtx, stop := context.WithTimeout(context.Background(), h.opts.StoreTimeout+h.opts.DrainTimeout+time.Second)
	defer stop()
	errStop := h.Shutdown(stopCtx)
	errSrv := srv.Shutdown(stopCtx)
	errServe := <-served
	errRun := <-ran
	if errors.Is(errServe, http.ErrServerClosed) {
		errServe = nil
	}
	return errors.Join(errServe, errRun, errStop, errSrv)
}
