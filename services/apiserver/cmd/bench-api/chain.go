package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"podline.dev/pkg/client"
	"podline.dev/pkg/pki"
	"podline.dev/services/apiserver/internal/server"
)

// chainRun measures create throughput through the full request chain (TLS,
// x509 authentication, Node and RBAC authorization, admission) against the
// same apiserver without authentication and authorization, on the same
// etcd in the same run. The chained client is the controller-manager
// (system:kube-controller-manager), which RBAC allows through its
// ClusterRoleBinding; an administrator in system:masters would skip RBAC.
// The two alternate twice so that neither profits from a warmer etcd.
func chainRun(ctx context.Context, etcd *clientv3.Client, plain *grpc.ClientConn, creates, concurrency int) error {
	dir, err := os.MkdirTemp("", "bench-api-pki-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if _, err := pki.Generate(pki.WithDir(dir), pki.WithKubeconfigDir(filepath.Join(dir, "kubeconfigs")),
		pki.WithAdminKubeconfig(filepath.Join(dir, "kubeconfig")), pki.WithNodes("bench"), pki.WithEtcdMembers("etcd")); err != nil {
		return err
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key"))
	if err != nil {
		return err
	}
	ca, err := pki.LoadCertPool(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return err
	}
	s, err := server.New(ctx, server.Config{
		Etcd: etcd, EtcdTimeout: 10 * time.Second,
		TLS:  &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		Auth: &server.AuthConfig{ClientCA: ca, AuthorizationModes: []string{server.ModeNode, server.ModeRBAC}},
	})
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = s.ServeGRPC(ctx, lis) }()
	if err := s.Run(ctx); err != nil {
		return err
	}
	opts, err := client.Credentials{Kubeconfig: filepath.Join(dir, "kubeconfigs", "controller-manager.conf")}.DialOptions()
	if err != nil {
		return err
	}
	secure, err := grpc.NewClient(lis.Addr().String(), opts...)
	if err != nil {
		return err
	}
	defer secure.Close()
	plainPods, chainPods := client.Pods(plain), client.Pods(secure)
	var plainRate, chainRate float64
	for round := range 2 {
		plainRate += parallel(creates, concurrency, func(i int) error {
			_, err := plainPods.Create(ctx, benchPod(fmt.Sprintf("plain-%d-%06d", round, i), "chain"))
			return err
		}) / 2
		chainRate += parallel(creates, concurrency, func(i int) error {
			_, err := chainPods.Create(ctx, benchPod(fmt.Sprintf("chain-%d-%06d", round, i), "chain"))
			return err
		}) / 2
	}
	fmt.Printf("create throughput with the request chain, %d creates x 2 rounds, %d concurrent\n", creates, concurrency)
	fmt.Printf("  without authn/authz (plain gRPC)            %8.0f /s\n", plainRate)
	fmt.Printf("  TLS + x509 authn + Node,RBAC authz          %8.0f /s\n", chainRate)
	fmt.Printf("  chain cost                                  %7.1f %%  (target < 30%%)\n\n", 100*(1-chainRate/plainRate))
	return nil
}
