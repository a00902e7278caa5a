package server

import (
	"context"
	"log/slog"
	"runtime/debug"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// recoverPanics is the gRPC server's unary interceptor: a call whose
// handler panics (a Redis client hook's panic, say, which the backends
// pass on after finishing their own state) is answered with a gRPC
// Internal error and logged with its stack, instead of ending the process
// and every call in flight with it (grpc-go recovers nothing). Envoy
// applies its failure_mode_deny to that one call.
func recoverPanics(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.Error("panic in a gRPC call", "method", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
				resp, err = nil, status.Errorf(codes.Internal, "%s: internal error (logged)", info.FullMethod)
			}
		}()
		return handler(ctx, req)
	}
}
