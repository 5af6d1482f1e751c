// Package grpcapi serves every resource's gRPC service (podline.core.v1.Pods,
// podline.apps.v1.Deployments, ...) from one generic implementation: the
// service descriptors generated from proto/ are turned into grpc.ServiceDescs
// at start-up, and each method decodes its request message, calls the
// resource's registry and answers with the kind's own messages. The generated
// typed clients (corev1.NewPodsClient) talk to it unchanged; so does the REST
// gateway, over an in-process connection.
package grpcapi
