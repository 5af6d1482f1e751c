package admission

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// WarningMetadataKey is the gRPC response header that carries admission
// warnings; the REST layer turns each value into a Warning header.
const WarningMetadataKey = "warning"

// sendWarnings attaches warnings to the gRPC response. Outside a gRPC call
// (the registry called directly, as in tests) there is no response to
// attach them to, and they are dropped.
func sendWarnings(ctx context.Context, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	md := metadata.MD{}
	for _, w := range warnings {
		md.Append(WarningMetadataKey, w)
	}
	_ = grpc.SetHeader(ctx, md)
}
