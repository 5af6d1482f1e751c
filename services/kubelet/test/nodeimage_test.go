package test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/testenv"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// The kubelet binary (bin/kubelet) inside the node image (podline/node:dev)
// as compose runs it, with --cpus 1 --memory 1g: the Node reports those
// limits as its capacity, and a pod with the demo image gets an address on
// the node's bridge and answers there. Opt in with KUBELET_NODE_IMAGE_TEST=1
// (it runs a docker container for a few seconds).
func TestNodeImageRunsTheKubelet(t *testing.T) {
	if os.Getenv("KUBELET_NODE_IMAGE_TEST") == "" {
		t.Skip("opt-in: KUBELET_NODE_IMAGE_TEST=1 runs the kubelet in podline/node:dev with docker")
	}
	repo, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range []string{"podline/node:dev", webImage} {
		if exec.Command("docker", "image", "inspect", img).Run() != nil {
			t.Skipf("needs the docker image %s (make images)", img)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "bin", "kubelet")); err != nil {
		t.Skip("needs bin/kubelet (make kubelet)")
	}
	api := apiservertest.Start(t)
	dir := t.TempDir()
	if err := proxyUnixToTCP(t, filepath.Join(dir, "api.sock"), api.Addr); err != nil {
		t.Fatal(err)
	}
	_ = exec.Command("docker", "rm", "-f", "podline-kubelet-smoke").Run()
	_ = exec.Command("docker", "volume", "rm", "-f", "podline-kubelet-smoke").Run()
	args := []string{"run", "-d", "--name", "podline-kubelet-smoke", "--hostname", "smoke-node",
		"-e", "POD_CIDR=10.244.9.0/24",
		"--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE",
		"--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined", "--security-opt", "systempaths=unconfined",
		"-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw", "-v", "podline-kubelet-smoke:/var/lib/containerd", "--tmpfs", "/run",
		"-v", dir + ":/podline", "-v", filepath.Join(repo, "bin", "kubelet") + ":/usr/local/bin/kubelet:ro",
		"--cpus", "1", "--memory", "1g",
		"podline/node:dev", "--apiserver", "unix:///podline/api.sock", "--node-name", "smoke-node", "-v", "debug"}
	if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	t.Cleanup(func() {
		out, _ := exec.Command("docker", "logs", "--tail", "60", "podline-kubelet-smoke").CombinedOutput()
		t.Logf("node logs:\n%s", out)
		_ = exec.Command("docker", "rm", "-f", "podline-kubelet-smoke").Run()
		_ = exec.Command("docker", "volume", "rm", "-f", "podline-kubelet-smoke").Run()
	})
	nodes := client.Nodes(api.Conn)
	eventually(t, 60*time.Second, "node Ready", func() (bool, string) {
		n, err := nodes.Get(context.Background(), "", "smoke-node")
		if err != nil {
			return false, err.Error()
		}
		for _, c := range n.GetStatus().GetConditions() {
			if c.GetType() == "Ready" {
				return c.GetStatus() == "True", c.GetMessage()
			}
		}
		return false, ""
	})
	save := exec.Command("sh", "-c", "docker save registry.podline:5000/demo/web:1.0 | docker exec -i podline-kubelet-smoke ctr -n k8s.io images import -")
	if out, err := save.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	pods := client.Pods(api.Conn)
	pod := makePod("web").node("smoke-node").container("web", webImage).port(8080).readiness(httpGet("/healthz", 8080), 1).obj()
	pod.Spec.Containers[0].Resources = &corev1.ResourceRequirements{Limits: map[string]string{"memory": "64Mi", "cpu": "250m"}}
	if _, err := pods.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, pods, "web", 60*time.Second, "Ready", func(p *corev1.Pod) bool { return condition(p, "Ready") == "True" })
	node, err := nodes.Get(context.Background(), "", "smoke-node")
	if err != nil {
		t.Fatal(err)
	}
	if c := node.GetStatus().GetCapacity(); c["cpu"] != "1" || c["memory"] != "1Gi" {
		t.Fatalf("capacity %v, want the container's limits cpu=1 memory=1Gi", c)
	}
	out, err := exec.Command("docker", "exec", "podline-kubelet-smoke", "busybox", "wget", "-qO-", "http://"+p.GetStatus().GetPodIp()+":8080/").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "hello from web") {
		t.Fatalf("wget: %v %s", err, out)
	}
	t.Logf("pod %s answered: %s", p.GetStatus().GetPodIp(), out)
	if _, err := pods.Delete(context.Background(), "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "deleted", func() (bool, string) {
		_, err := pods.Get(context.Background(), "default", "web")
		return err != nil, ""
	})
}
