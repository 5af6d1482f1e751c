package test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// The kubelet's server answers logs and exec, over HTTPS to the apiserver's
// kubelet client certificate, for a container that runs on containerd.
func TestContainerdLogsAndExecThroughTheKubeletServer(t *testing.T) {
	n := startRealNode(t)
	ctx := ctxFor(t, time.Minute)
	if _, err := client.ConfigMaps(n.api.Conn).Create(ctx, &corev1.ConfigMap{
		Metadata: &metav1.ObjectMeta{Name: "greeting", Namespace: "default"}, Data: map[string]string{"greeting": "hello from a configmap"},
	}); err != nil {
		t.Fatal(err)
	}
	pod := makePod("chatty").node(n.name).
		initContainer("prepare", webImage, "true").
		container("web", webImage).port(8080).obj()
	pod.Spec.Volumes = []*corev1.Volume{
		{Name: "scratch", EmptyDir: &corev1.EmptyDirVolumeSource{}},
		{Name: "cfg", ConfigMap: &corev1.ConfigMapVolumeSource{Name: "greeting"}},
		{Name: "info", DownwardApi: &corev1.DownwardAPIVolumeSource{Items: []*corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		}}},
	}
	scratch := &corev1.VolumeMount{Name: "scratch", MountPath: "/scratch"}
	pod.Spec.InitContainers[0].VolumeMounts = []*corev1.VolumeMount{scratch}
	pod.Spec.Containers[0].VolumeMounts = []*corev1.VolumeMount{scratch,
		{Name: "cfg", MountPath: "/etc/cfg"}, {Name: "info", MountPath: "/etc/podinfo"}}
	if _, err := n.pods.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, n.pods, "chatty", 60*time.Second, "Running", func(p *corev1.Pod) bool { return p.GetStatus().GetPhase() == "Running" })
	eventually(t, 10*time.Second, "web answers", func() (bool, string) {
		_, err := n.get("http://" + p.GetStatus().GetPodIp() + ":8080/")
		return err == nil, ""
	})
	kubelet := "https://127.0.0.1:10250"
	eventually(t, 10*time.Second, "logs show the request", func() (bool, string) {
		body, err := n.get(kubelet + "/containerLogs/default/chatty/web")
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(body, "msg=serving") && strings.Contains(body, "msg=request"), body
	})
	if body, err := n.get(kubelet + "/containerLogs/default/chatty/web?tailLines=1"); err != nil || strings.Count(body, "\n") != 1 || !strings.Contains(body, "msg=request") {
		t.Fatalf("tailLines=1: %q %v", body, err)
	}

	exec := func(cmd ...string) (string, string) {
		t.Helper()
		q := url.Values{"command": cmd}
		resp, err := n.httpInNode().Post(kubelet+"/exec/default/chatty/web?"+q.Encode(), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("exec %v: %s %s", cmd, resp.Status, b)
		}
		return strings.TrimSpace(string(b)), resp.Header.Get("X-Exit-Code")
	}
	if out, code := exec("echo", "hello", "from", "exec"); out != "hello from exec" || code != "0" {
		t.Fatalf("exec echo: %q exit %s", out, code)
	}
	// The volumes were there before the containers started.
	if out, code := exec("cat", "/etc/cfg/greeting"); out != "hello from a configmap" || code != "0" {
		t.Fatalf("configMap volume: %q exit %s", out, code)
	}
	if out, _ := exec("cat", "/etc/podinfo/labels"); out != `app="chatty"` {
		t.Fatalf("downwardAPI volume: %q", out)
	}
	if _, code := exec("ls", "/scratch"); code != "0" {
		t.Fatalf("the emptyDir is not mounted (exit %s)", code)
	}
	if _, code := exec("cat", "/nope"); code != "1" {
		t.Fatalf("a failing command exits %s", code)
	}
}
