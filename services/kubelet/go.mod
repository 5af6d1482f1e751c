module podline.dev/services/kubelet

go 1.26
