module podline.dev/services/controller-manager

go 1.26
